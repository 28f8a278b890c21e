/**
 * A fetched job ad as a jobtap job (spec htcondor.md §2; docs/condor-fetch.md "Fetched job
 * ads"): the paths of `Cmd`, `In`, `Out`, `Err` and the user logs are relative to `Iwd`, as
 * HTCondor's starter reads them; `In` becomes the job's stdin, `KillSig` the signal that
 * stops it, `RequestDisk` must fit the slot's `Disk`. Anything that cannot be honoured is a
 * reason to reject the ad (REPLY_FETCH reject), never a job that fails later.
 */
import { isAbsolute, join } from "node:path";
import { constants } from "node:os";
import { jobspecFromAd, ErrorCode, JobtapError } from "jobtap/plugin";
import type { ClassAd, Jobspec } from "jobtap/plugin";
import { jobEnvironment } from "./jobads.js";

/** The path attributes read relative to Iwd (Cmd only when Iwd is set: else PATH finds it). */
const PATHS = ["Cmd", "In", "Out", "Err", "UserLog", "StarterUserLog"] as const;

const reject = (why: string): JobtapError => new JobtapError(ErrorCode.BAD_JOBSPEC, `job ad: ${why}`);

const str = (ad: ClassAd, name: string): string | undefined => {
  const v = ad.has(name) ? ad.evaluate(name) : undefined;
  return typeof v === "string" && v !== "" ? v : undefined;
};

/**
 * Rewrites the ad's relative paths against its `Iwd` (in place, so the claim keeps the
 * absolute ones); throws when a relative In/Out/Err/log has no absolute Iwd to be read in.
 */
export function resolveAdPaths(ad: ClassAd): void {
  const iwd = str(ad, "Iwd");
  if (iwd !== undefined && !isAbsolute(iwd)) throw reject(`Iwd "${iwd}" must be an absolute path`);
  for (const name of PATHS) {
    const path = str(ad, name);
    if (path === undefined || isAbsolute(path) || path === "/dev/null") continue;
    if (iwd !== undefined) ad.set(name, join(iwd, path));
    else if (name !== "Cmd") throw reject(`${name} "${path}" is relative and the ad has no Iwd`);
  }
}

/** StarterUserLogUseXML = true asks for HTCondor's XML log, which jobtap does not write: the ad is rejected naming it. */
export function checkUserLogFormat(ad: ClassAd): void {
  if (ad.has("StarterUserLogUseXML") && ad.evaluate("StarterUserLogUseXML") === true) {
    throw reject("StarterUserLogUseXML = true: jobtap writes user logs in HTCondor's text format only");
  }
}

/** KillSig (`"SIGUSR1"`, `"USR1"`, `"10"` or 10) as a signal number; undefined when absent. */
export function killSignal(ad: ClassAd): number | undefined {
  if (!ad.has("KillSig")) return undefined;
  const v = ad.evaluate("KillSig");
  const signals = constants.signals as Record<string, number>;
  let n: number | undefined;
  if (typeof v === "bigint") n = Number(v);
  else if (typeof v === "string" && /^\d+$/.test(v.trim())) n = Number(v.trim());
  else if (typeof v === "string") n = signals[v.trim().toUpperCase().replace(/^(SIG)?/, "SIG")];
  if (n === undefined || !Number.isInteger(n) || n < 1 || n > 64) throw reject(`KillSig ${JSON.stringify(typeof v === "bigint" ? Number(v) : v)} is not a signal`);
  return n;
}

/** Throws when the ad's RequestDisk (KiB) is not a number or exceeds the slot's Disk (KiB). */
export function checkDisk(ad: ClassAd, slot: ClassAd): void {
  if (!ad.has("RequestDisk")) return;
  const v = ad.evaluate("RequestDisk", slot);
  const want = typeof v === "bigint" ? Number(v) : typeof v === "number" ? v : NaN;
  if (!(want >= 0)) throw reject("RequestDisk must evaluate to a number of KiB");
  const d = slot.has("Disk") ? slot.evaluate("Disk") : undefined;
  const have = typeof d === "bigint" ? Number(d) : typeof d === "number" ? d : undefined;
  if (have !== undefined && want > have) throw reject(`RequestDisk ${want} KiB is more than the slot's Disk ${have} KiB`);
}

/**
 * The jobspec of an accepted (already path-resolved) ad, pinned to slot `slotId`: its whole
 * environment, AllowedExecuteDuration, KillSig and `In` as stdin.
 */
export function fetchedJobspec(ad: ClassAd, slotId: number): Jobspec {
  const duration = ad.has("AllowedExecuteDuration") ? ad.evaluate("AllowedExecuteDuration") : undefined;
  const sig = killSignal(ad);
  const js = jobspecFromAd(ad, {
    system: {
      slot: slotId,
      environment: jobEnvironment(ad),
      ...(typeof duration === "bigint" && duration > 0n ? { duration: Number(duration) } : {}),
      ...(sig !== undefined ? { kill_signal: sig } : {}),
    },
  });
  const input = str(ad, "In");
  if (input !== undefined && input !== "/dev/null") {
    const system = js.attributes.system as Record<string, unknown>;
    const shell = (system["shell"] ?? {}) as { options?: Record<string, unknown> };
    system["shell"] = { ...shell, options: { ...shell.options, input: { stdin: { type: "file", path: input } } } };
  }
  return js;
}

/**
 * The inverse of the job ad (jobad.ts): a Flux jobspec v1 from an HTCondor job ad, for
 * plugins that turn ads into jobs — fetched work, a router's routed copy. What the job ad
 * computes from a jobspec is read back from it (`Cmd`, `Arguments` or old `Args`, `Iwd`,
 * `RequestCpus/Gpus/Memory`, `Out`, `Err`); every other attribute becomes a user attribute
 * (`attributes.user.classad`), kept as old-syntax expression text. Documented in ads.md.
 */
import type { ClassAd } from "../../classad/classad.js";
import { splitV2 } from "../../classad/functions/env.js";
import { unparse } from "../../classad/unparse.js";
import { ErrorCode, JobtapError } from "../../errors.js";
import { JOB_AD_ATTRIBUTES } from "./jobad.js";
import type { Jobspec } from "../port/records.js";

const COMPUTED = new Set(JOB_AD_ATTRIBUTES.map((n) => n.toLowerCase()));
/** Read into the jobspec itself, or HTCondor bookkeeping a new job must not inherit. */
const CONSUMED = new Set(["args"]);

/** Options of `jobspecFromAd`. */
export interface JobspecFromAdOptions {
  /** Extra `attributes.system` keys (duration, queue, slot, exec, ...). */
  system?: Record<string, unknown>;
}

/**
 * Builds a jobspec from a job ad. Throws BAD_JOBSPEC when the ad has no string `Cmd`, or a
 * request that is not a non-negative integer. Attributes are evaluated in the ad (MY = the
 * ad), so `RequestCpus = 2 * 2` gives 4 cores.
 */
export function jobspecFromAd(ad: ClassAd, opts: JobspecFromAdOptions = {}): Jobspec {
  const cmd = ad.has("Cmd") ? ad.evaluate("Cmd") : undefined;
  if (typeof cmd !== "string" || cmd === "") throw bad("Cmd must be a non-empty string");
  const command = [cmd, ...argumentsOf(ad)];
  const cores = request(ad, "RequestCpus", 1);
  const gpus = request(ad, "RequestGpus", 0);
  const mib = request(ad, "RequestMemory", 0);
  const within: Array<Record<string, unknown>> = [{ type: "core", count: Math.max(cores, 1) }];
  if (gpus > 0) within.push({ type: "gpu", count: gpus });
  if (mib > 0) within.push({ type: "memory", count: mib, unit: "MB" });
  const system: Record<string, unknown> = { ...opts.system };
  const iwd = ad.has("Iwd") ? ad.evaluate("Iwd") : undefined;
  if (typeof iwd === "string" && iwd !== "") system.cwd = iwd;
  // A universe other than vanilla (a routed copy's route's UNIVERSE) is kept for the ad.
  const universe = ad.has("JobUniverse") ? ad.evaluate("JobUniverse") : undefined;
  if (typeof universe === "bigint" && universe > 0n && universe !== 5n) system.universe = Number(universe);
  else if (typeof universe === "bigint") delete system.universe;
  const output: Record<string, unknown> = {};
  for (const [attr, stream] of [["Out", "stdout"], ["Err", "stderr"]] as const) {
    const path = ad.has(attr) ? ad.evaluate(attr) : undefined;
    if (typeof path === "string" && path !== "" && path !== "/dev/null") output[stream] = { type: "file", path };
  }
  if (Object.keys(output).length > 0) system.shell = { options: { output } };
  const classad: Record<string, string> = {};
  for (const [name, expr] of ad.attributes()) {
    const key = name.toLowerCase();
    if (!COMPUTED.has(key) && !CONSUMED.has(key)) classad[name] = unparse(expr, true);
  }
  return {
    version: 1,
    resources: [{ type: "slot", count: 1, label: "task", with: within }],
    tasks: [{ command, slot: "task", count: { per_slot: 1 } }],
    attributes: Object.keys(classad).length > 0 ? { system, user: { classad } } : { system },
  };
}

/** `Arguments` (HTCondor's new syntax) if present, else old `Args` split on blanks. */
function argumentsOf(ad: ClassAd): string[] {
  const args = ad.has("Arguments") ? ad.evaluate("Arguments") : undefined;
  if (typeof args === "string") return splitV2(args);
  const old = ad.has("Args") ? ad.evaluate("Args") : undefined;
  if (typeof old === "string") return old.split(/\s+/).filter((w) => w !== "");
  return [];
}

function request(ad: ClassAd, name: string, fallback: number): number {
  if (!ad.has(name)) return fallback;
  const v = ad.evaluate(name);
  const n = typeof v === "bigint" ? Number(v) : typeof v === "number" && Number.isInteger(v) ? v : NaN;
  if (!(n >= 0)) throw bad(`${name} must evaluate to a non-negative integer`);
  return n;
}

function bad(why: string): JobtapError {
  return new JobtapError(ErrorCode.BAD_JOBSPEC, `job ad: ${why}`);
}

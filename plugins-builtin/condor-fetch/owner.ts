/**
 * Who fetched work runs as (docs/condor-fetch.md, "Owner"). In a multi-user instance the job
 * ad's `Owner` names the user, as HTCondor's starter runs a job as its Owner; a job ad without
 * one, naming a user this host does not know, naming root (unless `[exec] allow-root`), or a
 * user outside `JOBTAP_ALLOWED_OWNERS` is rejected (REPLY_FETCH `reject`, with the reason in
 * the log). In a single-user instance fetched work is the instance owner's, whatever `Owner`.
 */
import { spawnSync } from "node:child_process";
import type { ClassAd } from "jobtap/plugin";

export interface OwnerRule {
  /** The instance runs jobs as their users (it has the privileged launcher). */
  multiUser: boolean;
  /** `[exec] allow-root`. */
  allowRoot: boolean;
  /** `JOBTAP_ALLOWED_OWNERS`; undefined: any user. */
  allowed: readonly string[] | undefined;
}

/** The uid to submit the work as (undefined: the instance owner), or why it is rejected. */
export type OwnerVerdict = { uid: number | undefined } | { why: string };

/** The verdict on the job ad's Owner under `rule`. */
export function fetchedOwner(job: ClassAd, rule: OwnerRule): OwnerVerdict {
  if (!rule.multiUser) return { uid: undefined };
  const owner = job.has("Owner") ? job.evaluate("Owner") : undefined;
  if (typeof owner !== "string" || owner === "") return { why: "the job ad has no Owner (a multi-user instance runs fetched work as its Owner)" };
  const uid = uidOf(owner);
  if (uid === undefined) return { why: `Owner "${owner}" is not a user on this host` };
  if (uid === 0 && !rule.allowRoot) return { why: `Owner "${owner}" is root, and [exec] allow-root is false` };
  if (rule.allowed !== undefined && !rule.allowed.includes(owner)) {
    return { why: `Owner "${owner}" is not in JOBTAP_ALLOWED_OWNERS (${rule.allowed.join(", ") || "empty"})` };
  }
  return { uid };
}

/** The uid of the user `name` (getent: NSS users too), or undefined. */
function uidOf(name: string): number | undefined {
  // A name only: a number or an option would be looked up as something else.
  if (!/^[A-Za-z_][A-Za-z0-9_.-]*\$?$/.test(name)) return undefined;
  const r = spawnSync("getent", ["passwd", name], { encoding: "utf8" });
  const uid = Number(r.status === 0 ? r.stdout.split(":")[2] : NaN);
  return Number.isInteger(uid) ? uid : undefined;
}

/** `JOBTAP_ALLOWED_OWNERS` as a list (HTCondor's list syntax: commas and/or spaces). */
export function ownerList(text: string | undefined): string[] | undefined {
  return text === undefined ? undefined : text.split(/[\s,]+/).filter((w) => w !== "");
}

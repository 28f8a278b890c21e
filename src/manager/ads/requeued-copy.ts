/**
 * The copy of a job sent back to the queue. A Flux job cannot leave RUN for SCHED, so a job
 * that HTCondor would put back to idle (a PREPARE_JOB hook's status ≥ 300 in condor-fetch,
 * a slot's PREEMPT in the manager) ends with a fatal exception and a copy of it is
 * submitted. Both callers build the copy here, so it carries the same HTCondor counters:
 * `RequeuedFromJobId`, `NumShadowStarts` (execution attempts), and when it was vacated
 * `NumVacates`, `NumVacatesPreExecution` and `VacateReason` (docs/condor-fetch.md, ads.md).
 */
import type { ClassAd } from "../../classad/classad.js";
import { formatJobId, type JobId } from "../base/ids.js";
import type { Jobspec } from "../port/records.js";

/** How a copied job was sent back (absent: it was held, not vacated). */
export interface VacateInfo {
  /** VacateReason: why it left the slot. */
  reason: string;
  /** True when it never started its executable (PREPARE_JOB), false when it was running. */
  preExecution: boolean;
}

/** An integer attribute of `ad` (0 when absent or not a number). */
export function countOf(ad: ClassAd, name: string): number {
  const v = ad.has(name) ? ad.evaluate(name) : undefined;
  return typeof v === "bigint" ? Number(v) : typeof v === "number" && Number.isFinite(v) ? Math.floor(v) : 0;
}

/**
 * The user ClassAd attributes (expression text) a copy of job `from`, whose ad is `ad`,
 * carries: one more attempt, and one more vacate when `vacate` is given.
 */
export function copyCounters(ad: ClassAd, from: JobId, vacate?: VacateInfo): Record<string, string> {
  const extra: Record<string, string> = {
    RequeuedFromJobId: JSON.stringify(formatJobId(from)),
    NumShadowStarts: String(countOf(ad, "NumShadowStarts") + 1),
  };
  if (vacate !== undefined) {
    extra.NumVacates = String(countOf(ad, "NumVacates") + 1);
    extra.NumVacatesPreExecution = String(countOf(ad, "NumVacatesPreExecution") + (vacate.preExecution ? 1 : 0));
    extra.VacateReason = JSON.stringify(vacate.reason);
  }
  return extra;
}

/** A writable deep copy of `jobspec` with `extra` added to its user ClassAd attributes. */
export function copiedJobspec(jobspec: Jobspec, extra: Record<string, string>): Jobspec {
  const js = JSON.parse(JSON.stringify(jobspec)) as Jobspec;
  const user = (js.attributes.user ?? {}) as { classad?: Record<string, string> };
  js.attributes.user = { ...user, classad: { ...user.classad, ...extra } };
  return js;
}

/**
 * The jobspec of a job's copy sent back to the queue by the manager (PREEMPT, periodic
 * policy): `copiedJobspec` without the original's dependencies, which were met before it ran.
 */
export function requeuedJobspec(jobspec: Jobspec, extra: Record<string, string>): Jobspec {
  const js = copiedJobspec(jobspec, extra);
  if (js.attributes.system !== undefined) delete js.attributes.system.dependencies;
  return js;
}

/**
 * The memo key under which the original records its copy's id (`annotations.user.requeued_as`),
 * posted in the same store batch as the copy (SubmitOptions.accepted). An eviction or hold
 * retried after a restart finds it and does not submit a second copy.
 */
export const REQUEUED_AS = "requeued_as";

/** The id (f58 text) of the copy recorded on a job by its memo, if any. */
export function recordedCopy(annotations: Record<string, unknown> | null): string | undefined {
  const user = annotations?.user as Record<string, unknown> | undefined;
  const v = user?.[REQUEUED_AS];
  return typeof v === "string" ? v : undefined;
}

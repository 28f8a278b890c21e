/**
 * What becomes of a job whose PREPARE hook failed (spec htcondor.md §3.2): a Flux job
 * cannot go back from RUN, so the job ends and a copy of it is submitted, held (status
 * 1–299, or any failure) or pending again (≥ 300).
 *
 * A pending copy does not run at once: it waits a cool-down (HTCondor's
 * SYSTEM_COOLDOWN_DURATION, default 20 s) that doubles with each requeue up to
 * `requeue_delay_max`, through the `begin-time` dependency on the manager's clock (so it
 * survives a restart). After `max_requeues` requeues the next ≥ 300 holds the copy instead,
 * naming the count. The copy's ad carries HTCondor's counters (NumShadowStarts, NumVacates,
 * NumVacatesPreExecution, NumJobCoolDowns, JobCoolDownExpiration, VacateReason), so a
 * site's periodic policy sees a job that keeps coming back (docs/condor-fetch.md).
 */
import { copiedJobspec, copyCounters, countOf, ErrorCode, JobtapError } from "jobtap/plugin";
import type { ClassAd, JobId, Jobspec, PluginContext } from "jobtap/plugin";

/** The requeue settings of condor-fetch's configuration. */
export interface RequeuePolicy {
  /** Seconds before the first requeued copy may run (SYSTEM_COOLDOWN_DURATION, 20). */
  delay: number;
  /** The cap of the doubling delay, seconds (3600). */
  delayMax: number;
  /** Requeues allowed; the next ≥ 300 holds (10). */
  maxRequeues: number;
}

/** What to submit for a failed PREPARE: the copy's jobspec, whether it is held, and why. */
export interface CopyPlan {
  jobspec: Jobspec;
  hold: boolean;
  /** The hold reason / exception note (the hook's text, plus the count at the limit). */
  text: string;
  /** Seconds the pending copy waits (0 when held). */
  delay: number;
}

/** HTCondor-like defaults: SYSTEM_COOLDOWN_DURATION's 20 s, doubling to an hour, ten requeues. */
export const DEFAULT_REQUEUE: RequeuePolicy = { delay: 20, delayMax: 3600, maxRequeues: 10 };

/** The cool-down before the `n`-th requeued copy may run (n ≥ 1): delay × 2^(n−1), capped. */
export function requeueDelay(policy: RequeuePolicy, n: number): number {
  return Math.min(policy.delayMax, policy.delay * 2 ** Math.min(n - 1, 40));
}

/**
 * Plans the copy of job `id` after a PREPARE status `status` (≠ 0) with message `text`:
 * the counters of the job's ad go forward by one attempt (and one vacate when requeued).
 */
export function planCopy(p: PluginContext, id: JobId, status: number, text: string, policy: RequeuePolicy): CopyPlan {
  const ad = p.jobAd(id);
  const vacates = countOf(ad, "NumVacates");
  let hold = status < 300;
  if (!hold && vacates >= policy.maxRequeues) {
    hold = true;
    text = `${text}; requeued ${vacates} time${vacates === 1 ? "" : "s"} already (max_requeues = ${policy.maxRequeues})`;
  }
  // The counters every requeued copy carries (shared with the manager's PREEMPT eviction).
  const extra = copyCounters(ad, id, hold ? undefined : { reason: text, preExecution: true });
  let delay = 0;
  if (!hold) {
    delay = requeueDelay(policy, vacates + 1);
    const expires = Math.ceil(p.clock.now() / 1000 + delay);
    Object.assign(extra, {
      NumJobCoolDowns: String(countOf(ad, "NumJobCoolDowns") + 1),
      JobCoolDownExpiration: String(expires),
    });
  }
  const jobspec = copyJobspec(p, id, extra);
  if (delay > 0) {
    // The original's dependencies were satisfied before it ran; the copy waits only for its cool-down.
    jobspec.attributes.system = { ...jobspec.attributes.system, dependencies: [{ scheme: "begin-time", value: p.clock.now() / 1000 + delay }] };
  }
  return { jobspec, hold, text, delay };
}

/** The job's jobspec with `extra` user ClassAd attributes (its environment comes with `environmentFrom`). */
function copyJobspec(p: PluginContext, id: JobId, extra: Record<string, string>): Jobspec {
  const j = p.lookup(id);
  if (j === undefined || j instanceof Promise) throw new JobtapError(ErrorCode.UNKNOWN_JOB, "job not found");
  return copiedJobspec(j.jobspec, extra);
}

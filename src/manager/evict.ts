/**
 * Eviction of a running job back to the queue, for a slot's PREEMPT (policy/preempt.ts).
 * HTCondor's schedd puts a preempted job back to idle; a Flux job cannot leave RUN for
 * SCHED, so jobtap does what condor-fetch does for its requeue: it submits a pending copy of
 * the job (same jobspec, environment, owner and urgency, with HTCondor's counters from
 * ads/requeued-copy.ts) and ends the job with condor-fetch's preemption exception, a fatal
 * `evict` whose note names the slot, the expression and the copy (docs/ads.md).
 *
 * Fetched work (a job ad with `FetchClaimId`) gets no copy: its claim is vacated and the
 * work goes back to its source through condor-fetch's EVICT_CLAIM, as HTCondor's startd
 * returns preempted fetched work; a copy would run it twice.
 */
import type { ClassAd } from "../classad/classad.js";
import { formatJobId, type JobId } from "./base/ids.js";
import { copyCounters, requeuedJobspec } from "./ads/requeued-copy.js";
import type { Engine, Logger } from "./engine/engine.js";
import type { ActiveJob } from "./engine/job.js";
import type { Jobspec } from "./port/records.js";

export interface EvictDeps {
  engine: Engine;
  jobAd(job: ActiveJob): ClassAd;
  submit(jobspec: Jobspec, opts: { userid: number; urgency: number }): Promise<JobId>;
  /** The instance owner: the raiser of the exception. */
  owner: number;
  log: Logger;
}

/** Evicts `job` (in RUN): its pending copy first, then its fatal `evict` exception. */
export async function evictToQueue(d: EvictDeps, job: ActiveJob, reason: string): Promise<void> {
  const id = job.core.id;
  const f58 = formatJobId(id);
  const ad = d.jobAd(job);
  let copy: JobId | undefined;
  if (!ad.has("FetchClaimId")) {
    const jobspec = requeuedJobspec(job.core.jobspec, copyCounters(ad, id, { reason, preExecution: false }));
    try {
      copy = await d.submit(jobspec, { userid: job.core.userid, urgency: job.core.urgency });
    } catch (e) {
      d.log("error", `job ${f58}: ${reason}: could not submit its requeued copy: ${(e as Error).message}`);
    }
  }
  const current = d.engine.active.get(id);
  if (current === undefined || current.core.state !== "RUN") return;
  const where = copy === undefined ? "" : ` (pending again as ${formatJobId(copy)})`;
  try {
    d.engine.checkRoom(current);
    d.engine.post(current, "exception", { type: "evict", severity: 0, note: `${reason}${where}`, userid: d.owner });
  } catch (e) {
    d.log("error", `job ${f58}: ${reason}: ${(e as Error).message}`);
  }
}

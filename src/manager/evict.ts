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
import { formatJobId, parseJobId, type JobId } from "./base/ids.js";
import { copyCounters, recordedCopy, REQUEUED_AS, requeuedJobspec } from "./ads/requeued-copy.js";
import type { Engine, Logger } from "./engine/engine.js";
import type { ActiveJob } from "./engine/job.js";
import type { Jobspec } from "./port/records.js";

export interface EvictDeps {
  engine: Engine;
  jobAd(job: ActiveJob): ClassAd;
  submit(jobspec: Jobspec, opts: { userid: number; urgency: number; accepted: (id: JobId) => void }): Promise<JobId>;
  /** The instance owner: the raiser of the exception. */
  owner: number;
  log: Logger;
}

/**
 * Evicts `job` (in RUN): its pending copy first, then its fatal `evict` exception. The copy's
 * id is recorded on the job (memo `requeued_as`) in the copy's own store batch, so an
 * eviction retried after a restart that fell between the two reuses that copy.
 */
export async function evictToQueue(d: EvictDeps, job: ActiveJob, reason: string): Promise<void> {
  const id = job.core.id;
  const f58 = formatJobId(id);
  const ad = d.jobAd(job);
  const recorded = recordedCopy(job.core.annotations);
  let copy: JobId | undefined = recorded === undefined ? undefined : parseJobId(recorded);
  if (copy === undefined && !ad.has("FetchClaimId")) {
    const jobspec = requeuedJobspec(job.core.jobspec, copyCounters(ad, id, { reason, preExecution: false }));
    const accepted = (c: JobId) => recordCopy(d, job, c);
    try {
      copy = await d.submit(jobspec, { userid: job.core.userid, urgency: job.core.urgency, accepted });
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

/** Posts the copy's id on the original (a memo), in the batch that stores the copy. */
function recordCopy(d: EvictDeps, job: ActiveJob, copy: JobId): void {
  try {
    if (d.engine.active.get(job.core.id) === job) d.engine.post(job, "memo", { [REQUEUED_AS]: formatJobId(copy) });
  } catch (e) {
    d.log("error", `job ${formatJobId(job.core.id)}: cannot record its requeued copy ${formatJobId(copy)}: ${(e as Error).message}`);
  }
}

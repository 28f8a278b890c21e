/**
 * How a policy decision (user-policy.ts) acts on the manager (docs/ads.md "Periodic job
 * policy"). A Flux job cannot go back from RUN, so where HTCondor keeps a running or exited
 * job in its queue (held, or idle again) jobtap ends it and submits a copy, the way
 * condor-fetch's PREPARE_JOB failures do: same jobspec and environment, no dependencies
 * (the original's were met), `RequeuedFromJobId` in its ad, and held with the decision's
 * HoldReason/Code/SubCode or pending.
 *
 * - remove: a `cancel` exception (a job that already exited is leaving anyway);
 * - hold: a pending job gets urgency 0 with the hold reason and code; a running one a
 *   fatal `hold` exception and a held copy; one that exited, a held copy;
 * - release: the default urgency;
 * - requeue (OnExitRemove false): a pending copy.
 */
import type { ClassAd } from "../../classad/classad.js";
import { copyCounters, recordedCopy, REQUEUED_AS, requeuedJobspec } from "../ads/requeued-copy.js";
import { formatJobId, parseJobId, type JobId } from "../base/ids.js";
import { URGENCY_DEFAULT } from "../base/states.js";
import type { Engine, Logger } from "../engine/engine.js";
import type { ActiveJob } from "../engine/job.js";
import type { Jobspec } from "../port/records.js";
import type { Decision } from "./user-policy.js";

/** Submits a job for the manager (its `submit`). */
export type Submit = (jobspec: Jobspec, opts: { userid?: number; urgency?: number; accepted?: (id: JobId) => void }) => Promise<JobId>;

/** Carries out decisions on jobs. */
export interface PolicyActions {
  /** Acts on `job`; `exited` when its task has finished (the exit-time evaluation). */
  act(job: ActiveJob, d: Decision, exited: boolean): void;
  /** Closes an exited job's policy epilog (after a restart), naming its copy if known. */
  finishCopy(job: ActiveJob, copy: JobId | undefined): void;
}

/** The epilog that keeps an exited job in CLEANUP until its copy is submitted. */
export const POLICY_EPILOG = "periodic-policy";

/** Whether the job's policy epilog is open (started and not finished). */
export function openPolicyEpilog(job: ActiveJob): boolean {
  let open = false;
  for (const e of job.eventlog) {
    if (e.context?.description !== POLICY_EPILOG) continue;
    if (e.name === "epilog-start") open = true;
    else if (e.name === "epilog-finish") open = false;
  }
  return open;
}

/** The manager's policy actions. */
export function policyActions(engine: Engine, owner: number, log: Logger, submit: Submit, jobAd: (job: ActiveJob) => ClassAd): PolicyActions {
  const post = (job: ActiveJob, name: string, context: Record<string, unknown>) => {
    try {
      engine.checkRoom(job);
      engine.post(job, name, context);
    } catch (e) {
      log("error", `periodic policy: job ${formatJobId(job.core.id)}: ${(e as Error).message}`);
    }
  };
  const hold = (job: ActiveJob, d: Decision) =>
    post(job, "urgency", { urgency: 0, userid: owner, hold_reason: d.reason, hold_reason_code: d.code, hold_reason_subcode: d.subCode });
  const finish = (job: ActiveJob, note: string | undefined) => {
    if (note !== undefined) post(job, "memo", { policy: note });
    post(job, "epilog-finish", { description: POLICY_EPILOG, status: 0 });
  };
  const copy = (job: ActiveJob, d: Decision, held: boolean, exited: boolean) => {
    // An exited job would leave before the copy is durable: an epilog keeps it in CLEANUP.
    if (exited) post(job, "epilog-start", { description: POLICY_EPILOG });
    // A running job's copy is recorded on it in the copy's own store batch: a decision
    // retried after a restart that fell between the copy and the exception reuses it. (An
    // exited job's copy is found after a restart through its open policy epilog.)
    const recorded = exited ? undefined : recordedCopy(job.core.annotations);
    const accepted = (id: JobId) => {
      if (!exited && engine.active.get(job.core.id) === job) post(job, "memo", { [REQUEUED_AS]: formatJobId(id) });
    };
    const copied = recorded !== undefined ? Promise.resolve(parseJobId(recorded)) : submitCopy(job, jobAd(job), held, submit, accepted);
    void copied.then(
      (id) => {
        const note = `${d.reason} (${held ? "held" : "pending"} again as ${formatJobId(id)})`;
        log("info", `periodic policy: job ${formatJobId(job.core.id)}: ${note}`);
        const c = engine.active.get(id);
        if (held && c !== undefined) hold(c, d);
        if (exited) finish(job, note);
        else post(job, "exception", { type: "hold", severity: 0, note, userid: owner });
      },
      (e: Error) => {
        log("error", `periodic policy: job ${formatJobId(job.core.id)}: could not submit its ${held ? "held" : "pending"} copy: ${e.message}`);
        if (exited) finish(job, undefined);
        else post(job, "exception", { type: "hold", severity: 0, note: d.reason, userid: owner });
      },
    );
  };
  return {
    finishCopy: (job, id) => finish(job, id === undefined ? undefined : `copy ${formatJobId(id)} submitted before a restart`),
    act(job, d, exited) {
      switch (d.action) {
        case "remove":
          if (!exited) post(job, "exception", { type: "cancel", severity: 0, note: d.reason, userid: owner });
          return;
        case "release":
          return post(job, "urgency", { urgency: URGENCY_DEFAULT, userid: owner });
        case "requeue":
          return copy(job, d, false, true);
        case "hold":
          if (!exited && isPending(job)) return hold(job, d);
          return copy(job, d, true, exited);
      }
    },
  };
}

/** A job not yet allocated (its hold is urgency 0). */
export function isPending(job: ActiveJob): boolean {
  const s = job.core.state;
  return s === "DEPEND" || s === "PRIORITY" || s === "SCHED" || s === "NEW";
}

function submitCopy(job: ActiveJob, ad: ClassAd, held: boolean, submit: Submit, accepted: (id: JobId) => void): Promise<JobId> {
  // The same counters as condor-fetch's and PREEMPT's copies (ads/requeued-copy.ts).
  const js = requeuedJobspec(job.core.jobspec, copyCounters(ad, job.core.id));
  return submit(js, { userid: job.core.userid, urgency: held ? 0 : URGENCY_DEFAULT, accepted });
}

/** The active job submitted as `job`'s copy (its RequeuedFromJobId), if any (a restart's check). */
export function policyCopyOf(engine: Engine, job: ActiveJob): JobId | undefined {
  const want = JSON.stringify(formatJobId(job.core.id));
  for (const j of engine.active.values()) {
    const ad = j.core.jobspec.attributes.user?.classad as Record<string, unknown> | undefined;
    if (ad?.RequeuedFromJobId === want) return j.core.id;
  }
  return undefined;
}

/**
 * Flux's feasibility check at submit (`flux submit -n 100` on a small instance is refused
 * with "unsatisfiable request"): a job whose request the local pool could never satisfy is
 * rejected before it is acknowledged, instead of being accepted and failed at SCHED with an
 * `alloc` exception. Only jobs the local scheduler would allocate are checked: a job with
 * the `alloc-bypass` flag (set at validate by exec-slurm for Slurm jobs, or by the
 * alloc-bypass plugin) never asks the local pool, so its size is its executor's business.
 */
import type { ActiveJob } from "./engine/job.js";
import { resourceRequest, type ResourceRequest } from "./core/jobspec.js";

/** The scheduler's answer for a request against the whole pool (Scheduler.infeasible). */
export type InfeasibleCheck = (r: ResourceRequest) => string | undefined;

/** Does the job skip the local pool? Its flag, or a `set-flags` still queued by job.validate. */
function bypassesPool(job: ActiveJob): boolean {
  if (job.core.flags.includes("alloc-bypass")) return true;
  if (job.queue.length === 0) return false;
  return job.queue.some((e) => e.name === "set-flags" && Array.isArray(e.context?.flags) && e.context.flags.includes("alloc-bypass"));
}

/**
 * The rejection message for a job no slot of the local pool could ever run, or undefined.
 * Called once admission's plugins have run (so their flags are known). The request is kept
 * on the job for the scheduler (computed once). A request that cannot even be read is left
 * to SCHED, which raises its `alloc` exception as before.
 */
export function infeasibleAtSubmit(job: ActiveJob, infeasible: InfeasibleCheck): string | undefined {
  if (bypassesPool(job)) return undefined;
  let r: ResourceRequest;
  try {
    r = job.request ??= resourceRequest(job.core.jobspec);
  } catch {
    return undefined;
  }
  return infeasible(r);
}

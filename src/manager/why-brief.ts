/**
 * The one-line reason of a pending job for listings (`jobtap jobs -o '{reason}'`, the INFO
 * column, `top`): the first reason `job why` would give, from the manager's own state only
 * (no plugin is called: a listing of 10,000 jobs must not make 10,000 stack calls). The
 * queue positions are computed once per listing, not once per job.
 */
import type { JobId } from "./base/ids.js";
import type { ActiveJob } from "./engine/job.js";
import type { Scheduler } from "./scheduler/scheduler.js";
import { stateReasons, type StateLookups } from "./why-state.js";

/** Reasons for many jobs of one listing; positions are read once, on first need. */
export class BriefReasons {
  private positions: Map<JobId, number> | undefined;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly at: StateLookups,
  ) {}

  /** The job's first reason in one line, or undefined when it is not pending. */
  of(job: ActiveJob): string | undefined {
    const c = job.core;
    if (c.state === "PRIORITY") return "priority unavailable";
    if (c.state !== "DEPEND" && c.state !== "SCHED" && c.state !== "NEW") return undefined;
    const first = stateReasons(job, this.at)[0];
    if (first !== undefined) return first.text;
    if (c.state !== "SCHED") return undefined;
    const ahead = this.positionOf(job);
    if (ahead === undefined) return undefined;
    return ahead === 0 ? "first in the queue" : `${ahead} ahead in the queue`;
  }

  private positionOf(job: ActiveJob): number | undefined {
    if (job.schedEntry === undefined || !job.schedEntry.live) return undefined;
    if (this.positions === undefined) {
      this.positions = new Map();
      let i = 0;
      for (const e of this.scheduler.queued()) this.positions.set(e.id, i++);
    }
    return this.positions.get(job.core.id);
  }
}

/**
 * User commands on existing jobs with Flux's checks and messages: raise (and cancel) and
 * urgency. Guests (any uid other than the instance owner) may act only on their own jobs.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import type { Engine } from "./engine/engine.js";
import { formatJobId, type JobId } from "./base/ids.js";
import type { ActiveJob } from "./engine/job.js";
import { URGENCY_DEFAULT } from "./base/states.js";
import { checkUrgency } from "./submit.js";

export interface RaiseOptions {
  type: string;
  severity: number;
  note?: string;
  /** Who raises it (default: the owner). */
  userid?: number;
  wait_status?: number;
}

/** raise/cancel and urgency on existing jobs, with Flux's permission and state checks. */
export class JobCommands {
  constructor(
    private readonly e: Engine,
    private readonly owner: number,
    private readonly isInactive: (id: JobId) => boolean,
  ) {}

  /** An active job the user may act on, or UNKNOWN_JOB / JOB_INACTIVE / PERMISSION_DENIED. */
  private target(id: JobId, userid: number): ActiveJob {
    const job = this.e.active.get(id);
    if (!job || job.core.state === "NEW" && job.unstoredFrom !== undefined) {
      if (this.isInactive(id)) throw new JobtapError(ErrorCode.JOB_INACTIVE, `job ${formatJobId(id)}: job is inactive`);
      throw new JobtapError(ErrorCode.UNKNOWN_JOB, `job ${formatJobId(id)}: unknown job`);
    }
    if (userid !== this.owner && userid !== job.core.userid) {
      throw new JobtapError(ErrorCode.PERMISSION_DENIED, `job ${formatJobId(id)}: guests may only act on their own jobs`);
    }
    return job;
  }

  /** Flux's raise RPC: severity 0..7, type non-empty without whitespace or '='. */
  raise(id: JobId, o: RaiseOptions): void {
    if (!Number.isInteger(o.severity) || o.severity < 0 || o.severity > 7 || !/^[^\s=]+$/.test(o.type ?? "")) {
      throw new JobtapError(
        ErrorCode.BAD_EXCEPTION,
        `job ${formatJobId(id)}: invalid exception severity/type (severity ${o.severity}, type ${JSON.stringify(o.type)})`,
      );
    }
    const userid = o.userid ?? this.owner;
    const job = this.target(id, userid);
    if (o.severity > 0) this.e.checkRoom(job);
    if (o.severity === 0 && this.e.processedInNew(job)) {
      throw new JobtapError(ErrorCode.BAD_STATE, `job ${formatJobId(id)}: fatal job exception was posted in NEW state`);
    }
    const extra: Record<string, unknown> = { userid };
    if (o.wait_status !== undefined) extra.wait_status = o.wait_status;
    this.e.raise(job, o.type, o.severity, o.note ?? "", extra);
  }

  /**
   * Flux's kill RPC (`flux job kill`): a signal number 1..64, the job's own user or the
   * owner, and a job in RUN or CLEANUP; `deliver` hands it to the job's executor.
   */
  kill(id: JobId, signum: number, userid: number, deliver: (job: ActiveJob, signum: number) => boolean): void {
    if (!Number.isInteger(signum) || signum <= 0 || signum > 64) {
      throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `job ${formatJobId(id)}: Invalid signal number ${signum}`);
    }
    const job = this.target(id, userid);
    if (job.core.state !== "RUN" && job.core.state !== "CLEANUP") {
      throw new JobtapError(ErrorCode.BAD_STATE, `job ${formatJobId(id)}: job is not running`);
    }
    if (!deliver(job, signum)) throw new JobtapError(ErrorCode.BAD_STATE, `job ${formatJobId(id)}: no process left to signal`);
  }

  /** Flux's urgency RPC; returns the old urgency. */
  setUrgency(id: JobId, urgency: number, userid: number): number {
    checkUrgency(urgency);
    const job = this.target(id, userid);
    const c = job.core;
    if (userid !== this.owner && urgency > Math.max(URGENCY_DEFAULT, c.urgency)) {
      throw new JobtapError(ErrorCode.PERMISSION_DENIED, `job ${formatJobId(id)}: guests can only adjust urgency <= default`);
    }
    if (c.hasResources || c.state === "RUN" || c.state === "CLEANUP") {
      throw new JobtapError(ErrorCode.BAD_STATE, `job ${formatJobId(id)}: urgency cannot be changed once resources are allocated`);
    }
    this.e.checkRoom(job);
    const old = c.urgency;
    this.e.post(job, "urgency", { urgency, userid });
    return old;
  }
}

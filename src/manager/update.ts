/**
 * The job update flow (spec flux-jobtap §10, Flux's `job-manager.update`): a user asks to
 * change period-delimited jobspec keys of an active job. Each key must be allowed by a
 * `job.update.<key>` handler (none: "update of KEY not supported"); the whole request is
 * all-or-nothing; the updated jobspec is re-validated through `job.validate` unless every
 * key came back `validated`; then one `jobspec-update` event carries it (plus a
 * `resource-update` when a running job's expiration moves). A key answered with `feasibility`
 * has the updated job checked against the whole resource pool (Flux's feasibility.check).
 *
 * Owned by the builtins helper; wired into the manager as `JobManager.update`.
 */
import { ErrorCode, JobtapError, isJobtapError } from "../errors.js";
import type { Engine } from "./engine/engine.js";
import { formatJobId, type JobId } from "./base/ids.js";
import { parseUserAttributes } from "./ads/jobad.js";
import { redactJobspec, applyJobspecUpdates, isPlainObject, resourceRequest, validateJobspec, type ResourceRequest } from "./core/jobspec.js";
import type { ActiveJob } from "./engine/job.js";
import type { StackResult } from "./port/port.js";
import type { JobArgs, Jobspec } from "./port/records.js";

/** Who asks for an update. */
export interface UpdateOptions {
  /** Requesting user (default: the instance owner). */
  userid?: number;
}

const KEY = /^(attributes|resources|tasks)(\.[^.]+)*$/;
const DURATION_KEY = "attributes.system.duration";

/** What the per-key calls decided. */
interface KeyOutcome {
  /** The user's updates plus the extra `updates` handlers asked for. */
  updates: Record<string, unknown>;
  /** Every key was marked `validated`: skip job.validate. */
  validated: boolean;
  /** Some key asked for `feasibility`: the updated job must fit the resource pool. */
  feasibility: boolean;
}

/** Job updates (spec §10): per-key plugin approval, then one jobspec-update event. */
export class JobUpdater {
  constructor(
    private readonly e: Engine,
    private readonly owner: number,
    private readonly isInactive: (id: JobId) => boolean,
    /** The scheduler's check of a request against the whole pool (Flux's feasibility.check). */
    private readonly infeasible: (r: ResourceRequest) => string | undefined,
  ) {}

  /**
   * Applies `updates` to job `id` or throws: INVALID_ARGUMENT (bad keys), UNKNOWN_JOB,
   * JOB_INACTIVE, PERMISSION_DENIED (guest rules, immutable job), JOB_REJECTED (a plugin
   * refused a key or the updated jobspec failed validation). Nothing is applied on error.
   */
  async update(id: JobId, updates: Record<string, unknown>, opts: UpdateOptions = {}): Promise<void> {
    const userid = opts.userid ?? this.owner;
    const job = this.check(id, updates, userid);
    const cred = { userid, owner: userid === this.owner };
    const outcome = await this.askPlugins(job, updates, cred);
    if (!outcome.validated) await this.revalidate(job, outcome.updates);
    if (outcome.feasibility) this.checkFeasible(job, outcome.updates);
    if (!this.e.active.has(id)) throw this.fail(job, ErrorCode.JOB_INACTIVE, "job is inactive");
    this.apply(job, outcome, cred.owner && userid !== job.core.userid);
  }

  /** The request checks, in Flux's order. */
  private check(id: JobId, updates: Record<string, unknown>, userid: number): ActiveJob {
    const keys = isPlainObject(updates) ? Object.keys(updates) : [];
    if (keys.length === 0 || !keys.every((k) => KEY.test(k))) {
      throw new JobtapError(ErrorCode.INVALID_ARGUMENT,
        `job ${formatJobId(id)}: one or more jobspec updates are invalid (${JSON.stringify(keys)})`);
    }
    const job = this.e.active.get(id);
    if (job === undefined || job.unstoredFrom !== undefined) {
      if (this.isInactive(id)) throw new JobtapError(ErrorCode.JOB_INACTIVE, `job ${formatJobId(id)}: job is inactive`);
      throw new JobtapError(ErrorCode.UNKNOWN_JOB, `job ${formatJobId(id)}: unknown job id`);
    }
    if (job.core.state === "INACTIVE") throw this.fail(job, ErrorCode.JOB_INACTIVE, "job is inactive");
    if (userid !== this.owner && userid !== job.core.userid) {
      throw this.fail(job, ErrorCode.PERMISSION_DENIED, "guests may only update their own jobs");
    }
    this.e.checkRoom(job);
    if (userid !== this.owner && job.core.flags.includes("immutable")) {
      throw this.fail(job, ErrorCode.PERMISSION_DENIED, "job is immutable due to previous instance owner update");
    }
    return job;
  }

  /** `job.update.<key>` for each key, in request order; the first refusal ends it. */
  private async askPlugins(
    job: ActiveJob,
    updates: Record<string, unknown>,
    cred: { userid: number; owner: boolean },
  ): Promise<KeyOutcome> {
    let extra: Record<string, unknown> = {};
    let validated = true;
    let feasibility = false;
    for (const [key, value] of Object.entries(updates)) {
      const topic = `job.update.${key}` as const;
      const res = this.e.port.matches(topic)
        ? await this.e.port.callJob(topic, this.e.args(job, { cred, key, value }))
        : undefined;
      if (res === undefined || res.handled === 0) throw this.rejected(job, `update of ${key} not supported`);
      if (res.error) throw this.rejected(job, errmsg(res, "update rejected by job-manager plugin"));
      if (res.out.validated !== true && (res.out.validated as unknown) !== 1) validated = false;
      if (res.out.feasibility === true || (res.out.feasibility as unknown) === 1) feasibility = true;
      if (isPlainObject(res.out.updates)) extra = { ...extra, ...res.out.updates };
    }
    // Extra updates from plugins may override the user's (Flux).
    return { updates: { ...updates, ...extra }, validated, feasibility };
  }

  /** The updated job must be satisfiable by the resource pool, or the update is refused. */
  private checkFeasible(job: ActiveJob, updates: Record<string, unknown>): void {
    let why: string | undefined;
    try {
      why = this.infeasible(resourceRequest(validateJobspec(applyJobspecUpdates(job.core.jobspec, updates))));
    } catch (err) {
      why = isJobtapError(err) ? err.message : String(err);
    }
    if (why !== undefined) throw this.rejected(job, why);
  }

  /** The updated jobspec must still be a jobspec and pass the job.validate stack. */
  private async revalidate(job: ActiveJob, updates: Record<string, unknown>): Promise<void> {
    let jobspec: Jobspec;
    try {
      jobspec = validateJobspec(applyJobspecUpdates(job.core.jobspec, updates));
      parseUserAttributes(jobspec);
    } catch (err) {
      throw this.rejected(job, isJobtapError(err) ? err.message : String(err));
    }
    if (!this.e.port.matches("job.validate")) return;
    const args: JobArgs = this.e.args(job, { jobspec: redactJobspec(jobspec) });
    const res = await this.e.port.callJob("job.validate", args);
    if (res.error) throw this.rejected(job, errmsg(res, "rejected by job-manager plugin"));
  }

  /** Posts immutable (owner bypass on another user's job), jobspec-update, resource-update. */
  private apply(job: ActiveJob, o: KeyOutcome, ownerOnOthers: boolean): void {
    if (ownerOnOthers && o.validated && !job.core.flags.includes("immutable")) {
      this.e.post(job, "set-flags", { flags: ["immutable"] });
    }
    this.e.post(job, "jobspec-update", o.updates);
    const expiration = this.newExpiration(job, o.updates);
    if (expiration !== undefined) this.e.post(job, "resource-update", { expiration });
  }

  /** A running job whose duration changed gets a new expiration: starttime + duration. */
  private newExpiration(job: ActiveJob, updates: Record<string, unknown>): number | undefined {
    if (!(DURATION_KEY in updates) || !job.core.R) return undefined;
    const s = job.core.state;
    if (s !== "RUN" && s !== "CLEANUP") return undefined;
    const execution = job.core.R.execution as { starttime?: unknown; expiration?: unknown } | undefined;
    const start = typeof execution?.starttime === "number" ? execution.starttime : undefined;
    const d = updates[DURATION_KEY];
    if (start === undefined || typeof d !== "number") return undefined;
    const expiration = d > 0 ? start + d : 0;
    return expiration === execution?.expiration ? undefined : expiration;
  }

  private fail(job: ActiveJob, code: ErrorCode, why: string): JobtapError {
    return new JobtapError(code, `job ${formatJobId(job.core.id)}: ${why}`, { id: formatJobId(job.core.id) });
  }

  private rejected(job: ActiveJob, why: string): JobtapError {
    return this.fail(job, ErrorCode.JOB_REJECTED, why);
  }
}

function errmsg(res: StackResult, fallback: string): string {
  return typeof res.out.errmsg === "string" && res.out.errmsg.length > 0 ? res.out.errmsg : fallback;
}

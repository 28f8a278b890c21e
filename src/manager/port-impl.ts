/**
 * The manager half of the jobtap API (ManagerPort): what the plugin host may ask of the
 * job manager. Every method checks the job id and state and throws a JobtapError naming
 * the job; the host adds the plugin name and topic.
 */
import type { ClassAd } from "../classad/classad.js";
import { ErrorCode, JobtapError } from "../errors.js";
import type { HostAds } from "./ads/hostads.js";
import type { Actions } from "./actions.js";
import type { Clock } from "./base/clock.js";
import type { Engine } from "./engine/engine.js";
import { savedState, type Executors } from "./exec/registry.js";
import type { Executor } from "./port/executor.js";
import { SETTABLE_FLAGS } from "./core/events.js";
import { formatJobId, type JobId } from "./base/ids.js";
import type { ActiveJob } from "./engine/job.js";
import { checkJobspecUpdate } from "./core/jobspec.js";
import { PRIORITY_UNAVAILABLE, type ManagerPort, type PluginStateStore, type PluginSubmitOptions } from "./port/port.js";
import type { JobArgs, Jobspec } from "./port/records.js";
import type { JobResult, State } from "./base/states.js";
import type { QueueGate } from "./core/queues.js";
import type { JobStore } from "./store/types.js";
import { eventPosted, resultOf, type JobCore } from "./core/transition.js";

/**
 * What the port looks up in the manager beyond the engine's active jobs: inactive jobs (read
 * from the store), job ads and the host ads.
 */
export interface ManagerLookups {
  /** The folded core of a cached inactive job (read from the store), or undefined. */
  inactiveCore(id: JobId): JobCore | undefined;
  inactiveArgs(id: JobId): JobArgs | undefined;
  /** The merged `exec-state` contexts of a cached inactive job ({} if none), or undefined if unknown. */
  inactiveSaved(id: JobId): Record<string, unknown> | undefined;
  /** The frozen job ad of an active or inactive job, or undefined if unknown. */
  jobAdOf(id: JobId): ClassAd | undefined;
  /** The machine and slot ads. */
  readonly hostAds: HostAds;
}

const NOTE_MAX = 1023;

/** The manager side of the plugin seam: Flux's jobtap job API with its state checks. */
export class ManagerPortImpl implements ManagerPort {
  readonly pluginState: PluginStateStore;

  constructor(
    private readonly e: Engine,
    private readonly lookups: ManagerLookups,
    private readonly conf: () => Record<string, unknown>,
    store: JobStore,
    readonly clock: Clock,
    /** The instance owner's uid (`p.owner` for plugins). */
    readonly owner: number,
    private readonly queues: { gate: QueueGate; actions: Actions },
    private readonly executors?: Executors,
  ) {
    this.pluginState = pluginStateOf(store);
  }

  /** An active job, or UNKNOWN_JOB / JOB_INACTIVE naming it. */
  private job(id: JobId): ActiveJob {
    const job = this.e.active.get(id);
    if (job) return job;
    if (this.lookups.inactiveCore(id)) {
      throw new JobtapError(ErrorCode.JOB_INACTIVE, `job ${formatJobId(id)} is inactive`);
    }
    throw new JobtapError(ErrorCode.UNKNOWN_JOB, `unknown job ${formatJobId(id)}`);
  }

  private badState(job: ActiveJob, what: string): JobtapError {
    return new JobtapError(ErrorCode.BAD_STATE, `job ${formatJobId(job.core.id)} (${job.core.state}): ${what}`);
  }

  lookup(id: JobId): JobArgs | undefined {
    const job = this.e.active.get(id);
    return job ? this.e.args(job) : this.lookups.inactiveArgs(id);
  }

  jobAd(id: JobId): ClassAd | undefined {
    return this.lookups.jobAdOf(id);
  }

  get hostAds(): HostAds {
    return this.lookups.hostAds;
  }

  /** Set by the manager: its submitter (ManagerPort.submitJob). */
  submitter?: (jobspec: Jobspec, opts: { userid?: number; urgency?: number }) => Promise<JobId>;

  jobIds(state?: State): JobId[] {
    const out: JobId[] = [];
    for (const j of this.e.active.values()) {
      const s = j.core.state;
      if (s !== "NEW" && (state === undefined || s === state)) out.push(j.core.id);
    }
    return out;
  }

  submitJob(jobspec: Jobspec, opts: PluginSubmitOptions): Promise<JobId> {
    if (!this.submitter) return Promise.reject(new JobtapError(ErrorCode.NOT_SUPPORTED, "this job manager cannot submit for plugins"));
    let js = jobspec;
    if (opts.environmentFrom !== undefined) {
      const env = this.job(opts.environmentFrom).core.jobspec.attributes.system?.environment;
      if (env !== undefined) js = { ...js, attributes: { ...js.attributes, system: { ...js.attributes.system, environment: env } } };
    }
    return this.submitter(js, {
      ...(opts.userid !== undefined ? { userid: opts.userid } : {}),
      ...(opts.urgency !== undefined ? { urgency: opts.urgency } : {}),
    });
  }

  activeJobs(): JobArgs[] {
    return [...this.e.active.values()].filter((j) => j.core.state !== "NEW" || j.announced).map((j) => this.e.args(j));
  }

  postEvent(id: JobId, name: string, context?: Record<string, unknown>, origin?: string): void {
    if (typeof name !== "string" || name.length === 0 || /\s/.test(name)) {
      throw new JobtapError(ErrorCode.BAD_EVENT, `job ${formatJobId(id)}: invalid event name ${JSON.stringify(name)}`);
    }
    const job = this.job(id);
    this.e.checkRoom(job);
    this.e.post(job, name, context, origin);
  }

  raiseException(id: JobId, type: string, severity: number, note: string, origin?: string): void {
    const job = this.job(id);
    if (severity === 0 && this.e.processedInNew(job)) throw this.badState(job, "fatal job exception was posted in NEW state");
    const n = note.length > NOTE_MAX ? `${note.slice(0, NOTE_MAX - 1)}+` : note;
    // Flux records the instance owner as the raiser of a plugin's exception.
    this.e.post(job, "exception", { type, severity, note: n, userid: this.owner }, origin);
  }

  dependencyAdd(id: JobId, description: string): void {
    const job = this.job(id);
    if (job.core.state !== "NEW" && job.core.state !== "DEPEND") throw this.badState(job, "dependencies may only be added in NEW or DEPEND");
    // An outstanding duplicate is a silent no-op (covers restart); see docs/manager.md.
    if (job.core.dependencies.includes(description)) return;
    if (job.queue.some((e) => e.name === "dependency-add" && e.context?.description === description)) return;
    this.e.post(job, "dependency-add", { description });
  }

  dependencyRemove(id: JobId, description: string): void {
    const job = this.job(id);
    if (job.core.state !== "NEW" && job.core.state !== "DEPEND") throw this.badState(job, "dependencies may only be removed in NEW or DEPEND");
    const idle = !job.busy && job.hold === 0;
    if (idle && !job.core.dependencies.includes(description)) {
      throw new JobtapError(ErrorCode.BAD_EVENT, `job ${formatJobId(id)}: dependency "${description}" is not outstanding`);
    }
    this.e.post(job, "dependency-remove", { description });
  }

  reprioritizeJob(id: JobId, priority: number): void {
    this.e.reprioritize(this.job(id), priority);
  }

  reprioritizeAll(): void {
    if (!this.e.port.matches("job.priority.get")) return;
    // Flux answers every job's priority, then the scheduler re-sorts its queue once.
    this.queues.actions.reorderOnce(() => this.priorityGetAll());
  }

  private priorityGetAll(): void {
    for (const job of [...this.e.active.values()]) {
      const s = job.core.state;
      if (s !== "PRIORITY" && s !== "SCHED") continue;
      const res = this.e.port.callJob("job.priority.get", this.e.args(job));
      if (res instanceof Promise) {
        res.then((r) => this.e.active.get(job.core.id) === job && this.applyPriorityGet(job, r.error ? undefined : r.out.priority)).catch(() => undefined);
      } else this.applyPriorityGet(job, res.error ? undefined : res.out.priority);
    }
  }

  /**
   * `p`: the merged OUT priority, an integer (the host checks OUT against the topic table).
   * Called for a job still active (checked after an async answer; a sync one cannot have
   * retired it without making it INACTIVE, where reprioritize is a no-op): a bigint-keyed
   * lookup per job was a third of reprioritize-all over 100,000 jobs.
   */
  private applyPriorityGet(job: ActiveJob, p: number | undefined): void {
    if (p === undefined) return;
    if (p === PRIORITY_UNAVAILABLE && job.core.state === "SCHED") {
      this.e.log("error", `BUG: job ${formatJobId(job.core.id)}: priority unavailable for a job in SCHED`);
      return;
    }
    if (p >= 0) this.e.reprioritize(job, p);
  }

  jobResult(id: JobId): JobResult {
    const core = this.e.active.get(id)?.core ?? this.lookups.inactiveCore(id);
    if (!core) throw new JobtapError(ErrorCode.UNKNOWN_JOB, `unknown job ${formatJobId(id)}`);
    const r = core.state === "CLEANUP" || core.state === "INACTIVE" ? resultOf(core) : undefined;
    if (!r) throw new JobtapError(ErrorCode.BAD_STATE, `job ${formatJobId(id)} (${core.state}) has no result yet`);
    return r;
  }

  execSaved(id: JobId): Record<string, unknown> {
    const job = this.e.active.get(id);
    if (job) return savedState(job.eventlog, job.execlog) ?? {};
    // An inactive job's too: an executor's record of how it ended (job why) outlives the job.
    const saved = this.lookups.inactiveSaved(id);
    if (!saved) throw new JobtapError(ErrorCode.UNKNOWN_JOB, `unknown job ${formatJobId(id)}`);
    return saved;
  }

  eventPosted(id: JobId, name: string): boolean {
    const core = this.e.active.get(id)?.core ?? this.lookups.inactiveCore(id);
    if (!core) throw new JobtapError(ErrorCode.UNKNOWN_JOB, `unknown job ${formatJobId(id)}`);
    return eventPosted(core, name);
  }

  setFlag(id: JobId, flag: "alloc-bypass" | "debug" | "immutable"): void {
    const job = this.job(id);
    if (!(SETTABLE_FLAGS as readonly string[]).includes(flag)) {
      throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `job ${formatJobId(id)}: invalid flag "${flag}"`);
    }
    this.e.post(job, "set-flags", { flags: [flag] });
  }

  jobspecUpdate(id: JobId, updates: Record<string, unknown>): void {
    const job = this.job(id);
    const inProlog = job.core.perilog > 0 && !job.core.started && !job.startRequested;
    checkJobspecUpdate(formatJobId(id), job.core.state, updates, inProlog);
    this.e.post(job, "jobspec-update", updates);
  }

  prologStart(id: JobId, description: string): void {
    const job = this.perilogJob(id, description);
    if (job.startRequested) throw this.badState(job, "prolog-start: start request already pending");
    if (job.core.state === "CLEANUP") throw this.badState(job, "prolog-start not allowed in CLEANUP");
    this.e.post(job, "prolog-start", { description });
  }

  prologFinish(id: JobId, description: string, status: number): void {
    const job = this.perilogJob(id, description);
    if (job.startRequested) throw this.badState(job, "prolog-finish: start request already pending");
    this.e.post(job, "prolog-finish", { description, status });
  }

  epilogStart(id: JobId, description: string): void {
    const job = this.perilogJob(id, description);
    if (job.core.state !== "CLEANUP") throw this.badState(job, "epilog-start is only allowed in CLEANUP");
    this.e.post(job, "epilog-start", { description });
  }

  epilogFinish(id: JobId, description: string, status: number): void {
    const job = this.perilogJob(id, description);
    if (job.core.state !== "CLEANUP") throw this.badState(job, "epilog-finish is only allowed in CLEANUP");
    this.e.post(job, "epilog-finish", { description, status });
  }

  private perilogJob(id: JobId, description: string): ActiveJob {
    if (typeof description !== "string" || description.length === 0) {
      throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `job ${formatJobId(id)}: prolog/epilog description required`);
    }
    return this.job(id);
  }

  setQueueStarted(queue: string, started: boolean): void {
    if (typeof queue !== "string") throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `queue name must be a string, got ${JSON.stringify(queue)}`);
    if (this.queues.gate.setStarted(queue, started === true)) this.queues.actions.requeueAll();
  }

  setDefaultQueue(queue: string | undefined): void {
    if (queue !== undefined && typeof queue !== "string") {
      throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `default queue must be a string, got ${JSON.stringify(queue)}`);
    }
    if (this.queues.gate.setDefault(queue)) this.queues.actions.requeueAll();
  }

  config(): Record<string, unknown> {
    return this.conf();
  }

  registerExecutor(name: string, executor: Executor, plugin?: string): () => void {
    if (!this.executors) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, "this job manager has no executor registry");
    return this.executors.register(name, executor, plugin);
  }
}

function pluginStateOf(store: JobStore): PluginStateStore {
  return {
    get: (plugin, key) => {
      const v = store.pluginGet(plugin, key);
      return v === undefined ? undefined : JSON.parse(v);
    },
    set: (plugin, key, value) => store.pluginSet(plugin, key, JSON.stringify(value)),
    delete: (plugin, key) => store.pluginDelete(plugin, key),
    keys: (plugin) => store.pluginKeys(plugin),
  };
}

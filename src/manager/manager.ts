/**
 * The job manager: wires the store, the event engine, the plugin port, the scheduler and
 * the executors, and offers the library API (submit, cancel, raise, urgency, listings,
 * eventlogs, wait, an event stream, close).
 *
 * Construction follows Flux's start-up order: open the store → replay every eventlog with
 * no callbacks → attach the plugin host (`opts.plugins`) → restart callbacks → scheduling.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import { Actions } from "./actions.js";
import { RealClock, type Clock } from "./base/clock.js";
import { Engine, type JournalEntry } from "./engine/engine.js";
import { LocalExecutor } from "./exec/local-exec.js";
import { outputRecord, readOutputFile } from "./exec/output-files.js";
import { processLauncher } from "./exec/run-as.js";
import { Executors, savedState } from "./exec/registry.js";
import { TestExecutor } from "./exec/test-exec.js";
import { FluidGenerator, formatJobId, type JobId } from "./base/ids.js";
import { InactiveCache, resultName, type InactiveRecord } from "./engine/inactive.js";
import { newActiveJob, type ActiveJob, type WaitResult } from "./engine/job.js";
import { ManagerPortImpl, type ManagerLookups } from "./port-impl.js";
import { QueueGate } from "./core/queues.js";
import { NO_PLUGINS, type ManagerPort } from "./port/port.js";
import type { EventEntry, Jobspec } from "./port/records.js";
import { replayStore, restartCallbacks, settleRestored } from "./restart.js";
import { keptEventlogReader, parseStoredJob, replayJob, storedEventlogReader } from "./stored-job.js";
import { Scheduler } from "./scheduler/scheduler.js";
import { writableJobspec } from "./core/frozen.js";
import type { JobStore } from "./store/types.js";
import { Submitter, type SharedJobspecs, type SubmitOptions, type SubmitOutcome } from "./submit.js";
import { JobCommands, type RaiseOptions } from "./commands.js";
import { DEFAULT_JOB_LIMITS } from "./core/limits.js";
import { JobUpdater, type UpdateOptions } from "./update.js";
import { activeInfo, inactiveInfo, waitResultOf, type JobInfo } from "./engine/views.js";
import type { State } from "./base/states.js";
import type { ManagerStats } from "./base/tally.js";
import type { ClassAd } from "../classad/classad.js";
import { JobAds } from "./jobads.js";
import { HostAds } from "./ads/hostads.js";
import { Matchmaker } from "./policy/matchmaker.js";
import { policyAnalyzer } from "./policy/analyze-why.js";
import { PeriodicPolicy } from "./policy/periodic.js";
import { policyActions, policyCopyOf } from "./policy/periodic-actions.js";
import { PreemptPolicy } from "./policy/preempt.js";
import { evictToQueue } from "./evict.js";
import { Evaluator } from "../classad/evaluator.js";
import { carveSlots, describeSlots } from "./scheduler/slots.js";
import { hostname } from "node:os";
import { defaultLog, guestRunnable, openStore, outputDirOf, poolOf, type JobFilter, type JobManagerOptions } from "./options.js";

export type { JobFilter, JobManagerOptions } from "./options.js";
import type { Explanation } from "./port/reasons.js";
import { explainJob, whyLookups, type WhyDeps } from "./why.js";
import { BriefReasons } from "./why-brief.js";
import type { SchedAnalyzer } from "./why-sched.js";

/** The job manager's library API (see `createJobManager`). */
export class JobManager {
  readonly port: ManagerPort;
  readonly owner: number;
  private readonly submitter: Submitter;
  private readonly commands: JobCommands;
  private readonly updater: JobUpdater;
  /** Job ads, cached per job (jobads.ts). */
  readonly jobAds: JobAds;
  /** The machine ad and the slot ads, and what plugins publish into them (hostads.ts). */
  readonly hostAds: HostAds;
  private closed = false;
  /** PeriodicRemove/Hold/Release (policy/periodic.ts); armed once the manager is up. */
  readonly periodic: PeriodicPolicy;
  /** Slots' PREEMPT over their running jobs (policy/preempt.ts). */
  private readonly preempt: PreemptPolicy;
  private analyzer: SchedAnalyzer | undefined;
  /** Where local jobs' output goes when their jobspec names no file. */
  outputDir = "";
  /** Seconds the open spent replaying the store (set once by createJobManager). */
  replaySeconds = 0;

  /** Use `createJobManager`; the constructor does not replay or attach plugins. */
  constructor(
    private readonly engine: Engine,
    private readonly store: JobStore,
    private readonly scheduler: Scheduler,
    private readonly inactive: InactiveCache,
    readonly executors: Executors,
    ids: FluidGenerator,
    opts: JobManagerOptions,
    private readonly queues: { gate: QueueGate; actions: Actions },
  ) {
    this.owner = opts.owner ?? process.getuid?.() ?? 0;
    engine.limits = { ...DEFAULT_JOB_LIMITS, ...opts.limits };
    this.submitter = new Submitter(engine, ids, this.owner, engine.limits, {
      exists: (n) => n <= scheduler.slots.length,
      describe: () => describeSlots(scheduler.slots),
      infeasible: (r) => scheduler.infeasible(r),
    }, guestRunnable(opts.launcher, this.owner));
    this.commands = new JobCommands(engine, this.owner, (id) => this.inactive.has(id));
    this.updater = new JobUpdater(engine, this.owner, (id) => this.inactive.has(id), (r) => scheduler.infeasible(r));
    this.jobAds = new JobAds({
      hostname: hostname(),
      outputDir: outputDirOf(opts),
      owner: this.owner,
      active: (id) => engine.active.get(id),
      inactive: (id) => this.loadInactive(id),
      scheduler,
    });
    this.hostAds = new HostAds({
      hostname: hostname(),
      clock: engine.clock,
      pool: scheduler.pool,
      slotUse: () => scheduler.slotUse(),
      ...(opts.statedir ? { diskPath: opts.statedir } : {}),
      ...(opts.slotPolicy ? { policy: opts.slotPolicy } : {}),
      changed: () => {
        scheduler.poke();
        this.preempt?.request();
      },
    });
    // time() in policy expressions is the manager's clock (simulated in tests), in seconds.
    const policyEvaluator = new Evaluator({ clock: () => Math.floor(engine.clock.now() / 1000), sealed: true });
    scheduler.useMatcher(new Matchmaker({
      hostAds: this.hostAds,
      active: (id) => engine.active.get(id),
      jobAd: (job) => this.jobAds.of(job),
      evaluator: policyEvaluator,
      log: opts.log ?? defaultLog,
    }));
    this.preempt = new PreemptPolicy({
      clock: engine.clock,
      hostAds: this.hostAds,
      slotUse: () => scheduler.slotUse(),
      active: (id) => engine.active.get(id),
      jobAd: (job) => this.jobAds.of(job),
      evaluator: policyEvaluator,
      log: opts.log ?? defaultLog,
      evict: (job, _slot, reason) =>
        evictToQueue({ engine, jobAd: (j) => this.jobAds.of(j), submit: (js, o) => this.submit(js, o), owner: this.owner, log: opts.log ?? defaultLog }, job, reason),
    });
    scheduler.beforePass = () => this.preempt.check();
    // `job why`'s better-analyze (policy/analyze-why.ts); setSchedAnalyzer may replace it.
    this.analyzer = policyAnalyzer({
      active: (id) => engine.active.get(id),
      jobAd: (job) => this.jobAds.of(job),
      slotAds: () => this.hostAds.slotAds(),
      constrained: () => this.hostAds.constrained,
      evaluator: policyEvaluator,
    });
    this.periodic = new PeriodicPolicy({
      clock: engine.clock,
      intervalMs: opts.periodicExprIntervalMs ?? 60_000,
      jobs: () => engine.active.values(),
      active: (id) => engine.active.get(id),
      copyOf: (job) => policyCopyOf(engine, job),
      jobAd: (job) => this.jobAds.of(job),
      policyAds: (reads) => this.jobAds.policyAds(reads),
      watch: (name, fn) => engine.watch(name, fn),
      evaluator: policyEvaluator,
      log: opts.log ?? defaultLog,
      actions: policyActions(engine, this.owner, opts.log ?? defaultLog, (js, o) => this.submit(js, o), (job) => this.jobAds.of(job)),
      ...(opts.systemPeriodic ? { system: opts.systemPeriodic } : {}),
    });
    const conf = opts.config ?? {};
    const lookups: ManagerLookups = {
      inactiveCore: (id) => this.loadInactive(id)?.core,
      inactiveArgs: (id) => {
        const job = this.loadInactive(id);
        return job && engine.args(job);
      },
      inactiveSaved: (id) => {
        const job = this.loadInactive(id);
        return job && (savedState(job.eventlog, job.execlog) ?? {});
      },
      jobAdOf: (id) => this.jobAdOf(id),
      hostAds: this.hostAds,
    };
    const port = new ManagerPortImpl(engine, lookups, () => conf, store, engine.clock, this.owner, queues, executors);
    port.submitter = (jobspec, o) => this.submit(jobspec, o);
    this.port = port;
  }

  get clock(): Clock {
    return this.engine.clock;
  }

  /** Submits a job; resolves with its id once its eventlog is durable (or rejects). */
  submit(jobspec: unknown, opts?: SubmitOptions): Promise<JobId> {
    try {
      this.checkOpen();
    } catch (err) {
      return Promise.reject(err);
    }
    return this.submitter.submit(jobspec, opts);
  }

  /** Submits several jobs as one batch; each gets its own outcome (Flux's per-job errors). */
  async submitMany(jobs: ReadonlyArray<{ jobspec: unknown; opts?: SubmitOptions }>): Promise<SubmitOutcome[]> {
    this.checkOpen();
    // Jobs of one call often share one jobspec object (`--cc`): checked and serialized once.
    // The manager never mutates a submitted jobspec, and the caller cannot during this call.
    const shared: SharedJobspecs = new Map();
    return this.submitter.submitAll(jobs, shared);
  }

  /** Cancels a job: a severity-0 `cancel` exception. */
  cancel(id: JobId, opts: { note?: string; userid?: number } = {}): void {
    this.checkOpen();
    this.commands.raise(id, { type: "cancel", severity: 0, note: opts.note ?? "", userid: opts.userid ?? this.owner });
  }

  /** Raises an exception (validated as Flux's raise RPC does). */
  raise(id: JobId, opts: RaiseOptions): void {
    this.checkOpen();
    this.commands.raise(id, opts);
  }

  /** Changes a job's urgency; returns the old urgency. */
  /** Sends signal `signum` to a running job's processes (`flux job kill`); see JobCommands.kill. */
  kill(id: JobId, signum: number, opts: { userid?: number } = {}): void {
    this.checkOpen();
    this.commands.kill(id, signum, opts.userid ?? this.owner, (job, sig) => this.queues.actions.signal(job, sig));
  }

  setUrgency(id: JobId, urgency: number, opts: { userid?: number } = {}): number {
    this.checkOpen();
    return this.commands.setUrgency(id, urgency, opts.userid ?? this.owner);
  }

  /** Updates jobspec keys of an active job (spec §10, src/manager/update.ts): all or nothing. */
  update(id: JobId, updates: Record<string, unknown>, opts: UpdateOptions = {}): Promise<void> {
    this.checkOpen();
    return this.updater.update(id, updates, opts);
  }

  /**
   * Flux's `job-exec-override`: drives a test-executor job submitted with
   * `attributes.system.exec.test.override` — `start` posts its start; `finish` ends it
   * with `status`. Only the job's owner may (as in Flux). Throws naming the job and why.
   */
  execOverride(id: JobId, event: string, opts: { status?: number; userid?: number } = {}): void {
    this.checkOpen();
    const test = this.executors.get("test");
    if (!(test instanceof TestExecutor)) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, "the test executor is not registered");
    test.override(id, event, opts.userid ?? this.owner, opts.status ?? 0);
  }

  /** One job's listing record; throws UNKNOWN_JOB. */
  job(id: JobId): JobInfo {
    const a = this.engine.active.get(id);
    if (a) return activeInfo(a);
    const r = this.inactive.get(id);
    if (r) return inactiveInfo(r);
    throw new JobtapError(ErrorCode.UNKNOWN_JOB, `unknown job ${formatJobId(id)}`);
  }

  /**
   * A job's ad: HTCondor's ClassAd view of it (docs/ads.md). Frozen and shared between
   * callers (`clone()` to change it); rebuilt only after the job's next event. Throws
   * UNKNOWN_JOB.
   */
  jobAd(id: JobId): ClassAd {
    const ad = this.jobAds.get(id);
    if (!ad) throw new JobtapError(ErrorCode.UNKNOWN_JOB, `unknown job ${formatJobId(id)}`);
    return ad;
  }

  /** The job ad of an active or inactive job, or undefined (the port's `jobAd`). */
  jobAdOf(id: JobId): ClassAd | undefined {
    return this.jobAds.get(id);
  }

  /** Jobs, active first (queue order is not implied), then inactive, most recent first. */
  jobs(filter: JobFilter = {}): JobInfo[] {
    const out: JobInfo[] = [];
    const want = (s: State, uid: number) =>
      (filter.states === undefined || filter.states.includes(s)) && (filter.userid === undefined || filter.userid === uid);
    for (const j of this.engine.active.values()) if (j.core.state !== "NEW" && want(j.core.state, j.core.userid)) out.push(activeInfo(j));
    if (filter.states === undefined || filter.states.includes("INACTIVE")) {
      for (const r of this.inactive.newestFirst(filter.userid)) out.push(inactiveInfo(r));
    }
    return out;
  }

  /**
   * Inactive jobs, most recently cleaned first (a listing's order), optionally one user's,
   * built as the caller iterates: a listing that stops after N jobs reads at most N stored
   * records, not every inactive job's.
   */
  *inactiveNewest(userid?: number): IterableIterator<JobInfo> {
    for (const r of this.inactive.newestCleaned(userid)) yield inactiveInfo(r);
  }

  /** How many jobs `jobs()` would list (active past NEW, and inactive), without building one record. */
  jobCount(): number {
    let n = this.inactive.size;
    for (const j of this.engine.active.values()) if (j.core.state !== "NEW") n++;
    return n;
  }

  /** A job's eventlog (active: from memory; inactive: read from the store). */
  eventlog(id: JobId): EventEntry[] {
    const a = this.engine.active.get(id);
    if (a) return [...a.eventlog];
    const r = this.loadInactive(id);
    if (!r) throw new JobtapError(ErrorCode.UNKNOWN_JOB, `unknown job ${formatJobId(id)}`);
    return r.eventlog;
  }

  /**
   * A job's exec eventlog (Flux's `exec` path: executor state saved for reattach), empty if
   * its executor saved nothing. Entries a store written before the exec eventlog existed
   * keeps in the main eventlog stay there.
   */
  execEventlog(id: JobId): EventEntry[] {
    const a = this.engine.active.get(id);
    if (a) return [...(a.execlog ?? [])];
    const r = this.loadInactive(id);
    if (!r) throw new JobtapError(ErrorCode.UNKNOWN_JOB, `unknown job ${formatJobId(id)}`);
    return r.execlog ?? [];
  }

  /**
   * A job's eventlog and full jobspec together: for an inactive job one store read and
   * replay instead of one each (listings build a view per job from both).
   */
  eventlogAndJobspec(id: JobId): { eventlog: EventEntry[]; jobspec: Jobspec } {
    const a = this.engine.active.get(id);
    if (a) return { eventlog: [...a.eventlog], jobspec: a.core.jobspec };
    // Parsed, not replayed: the entries are all a view needs (a listing reads thousands).
    const text = this.inactive.has(id) ? this.engine.batch.storedView(id) : undefined;
    const r = text && parseStoredJob(text);
    if (!r || "error" in r) throw new JobtapError(ErrorCode.UNKNOWN_JOB, `unknown job ${formatJobId(id)}`);
    return r;
  }

  /**
   * A job's full jobspec (environment included: the caller is the owner's library), as a
   * writable object of the caller's own (the job keeps a frozen one: frozen.ts).
   */
  jobspec(id: JobId): Jobspec {
    const a = this.engine.active.get(id) ?? this.loadInactive(id);
    if (!a) throw new JobtapError(ErrorCode.UNKNOWN_JOB, `unknown job ${formatJobId(id)}`);
    return writableJobspec(a.core.jobspec);
  }

  /** Resolves when the job is INACTIVE, with its result. */
  wait(id: JobId): Promise<WaitResult> {
    const a = this.engine.active.get(id);
    if (!a) {
      const r = this.inactive.get(id);
      if (r && resultName(r) === "COMPLETED") return Promise.resolve({ id, result: "COMPLETED", success: true });
      const core = this.loadInactive(id)?.core;
      if (!core) return Promise.reject(new JobtapError(ErrorCode.UNKNOWN_JOB, `unknown job ${formatJobId(id)}`));
      return Promise.resolve(waitResultOf(core));
    }
    // The resolver itself is the waiter (no closure per wait); a first waiter gets a
    // one-slot array (a push onto [] reserves 17).
    return new Promise((resolve) => {
      if (a.waiters === undefined) a.waiters = [resolve];
      else a.waiters.push(resolve);
    });
  }

  /** What the manager counts about itself, updated in place: passes, store batches, replay time. */
  get stats(): ManagerStats {
    return { jobs: this.engine.counts, passes: this.scheduler.passStats, batches: this.engine.batch.stats, replaySeconds: this.replaySeconds };
  }

  /** Subscribes to every processed event of every job (the journal). */
  on(_type: "event", fn: (j: JournalEntry) => void): void {
    this.engine.onJournal(fn);
  }

  /** Stops a subscription made with `on`. */
  off(_type: "event", fn: (j: JournalEntry) => void): void {
    this.engine.offJournal(fn);
  }

  /** Yields a job's eventlog so far, then each new entry, ending after `clean` (or invalidate). */
  async *follow(id: JobId): AsyncGenerator<EventEntry> {
    const buffered: EventEntry[] = [];
    let wake: (() => void) | undefined;
    const fn = (j: JournalEntry) => {
      if (j.id !== id) return;
      buffered.push(j.entry);
      wake?.();
    };
    this.engine.onJournal(fn);
    try {
      const past = this.eventlog(id);
      for (const e of past) yield e;
      if (past.some((e) => e.name === "clean")) return;
      for (;;) {
        while (buffered.length > 0) {
          const e = buffered.shift()!;
          yield e;
          if (e.name === "clean" || e.name === "invalidate") return;
        }
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
      }
    } finally {
      this.engine.offJournal(fn);
    }
  }

  /**
   * Holds the whole alloc queue (daemon shutdown): no new allocations while paused; pending
   * requests stay queued (jobs stay in SCHED) and running jobs are untouched.
   */
  pauseScheduling(): void {
    this.scheduler.pause();
  }

  /** Ends `pauseScheduling()`: a scheduling pass runs over the kept requests. */
  resumeScheduling(): void {
    this.scheduler.resume();
  }

  /** Purges an inactive job now (job.inactive-remove); false if it is not inactive. */
  purge(id: JobId): boolean {
    return this.inactive.remove(id);
  }

  /**
   * `flux job purge`: inactive jobs by id, or those beyond the newest `numLimit` and those
   * inactive for more than `ageLimit` seconds (guests: only their own). An id that is
   * active is refused (BAD_STATE naming it) and nothing is purged. Returns the ids that
   * match; they are purged only with `force` (Flux's dry run otherwise).
   */
  purgeJobs(o: { ids?: JobId[]; ageLimit?: number; numLimit?: number; userid?: number; force?: boolean }): JobId[] {
    this.checkOpen();
    const userid = o.userid ?? this.owner;
    const mine = (uid: number) => userid === this.owner || uid === userid;
    let victims: JobId[];
    if (o.ids !== undefined && o.ids.length > 0) {
      for (const id of o.ids) {
        const a = this.engine.active.get(id);
        if (a !== undefined) throw new JobtapError(ErrorCode.BAD_STATE, `job ${formatJobId(id)}: cannot purge an active job (${a.core.state})`);
        const uid = this.inactive.userid(id);
        if (uid === undefined) throw new JobtapError(ErrorCode.UNKNOWN_JOB, `job ${formatJobId(id)}: unknown job`);
        if (!mine(uid)) throw new JobtapError(ErrorCode.PERMISSION_DENIED, `job ${formatJobId(id)}: guests may only purge their own jobs`);
      }
      victims = [...new Set(o.ids)];
    } else {
      if (o.ageLimit === undefined && o.numLimit === undefined) {
        throw new JobtapError(ErrorCode.INVALID_ARGUMENT, "purge: give job ids, an age limit or a count limit");
      }
      // Ids, users and clean times only: no record is read (a stored job's would be a store read).
      const records: Array<{ id: JobId; t_clean: number }> = [];
      this.inactive.eachOldest((id, uid, t_clean) => void (mine(uid) && records.push({ id, t_clean })));
      const cutoff = o.ageLimit === undefined ? -Infinity : this.clock.now() / 1000 - o.ageLimit;
      const overCount = o.numLimit === undefined ? 0 : Math.max(0, records.length - o.numLimit);
      victims = records.filter((r, i) => i < overCount || r.t_clean < cutoff).map((r) => r.id);
    }
    if (o.force === true) for (const id of victims) this.inactive.remove(id);
    return victims;
  }

  /**
   * What a local job wrote to `stream` from byte `offset` on (at most `max` bytes), for
   * `jobtap submit --watch`: the job's own user or the owner only. `done` says the job was
   * inactive before the read, so nothing more will come once `data` is empty. Only the file
   * the job was started with (its `exec-state`) is read, and only if it is a regular file
   * owned by the uid the job ran as (exec/output-files.ts); a job not started yet has no output so
   * far, an inactive job that never started is BAD_STATE. `tail`: the last `max` bytes instead.
   */
  output(id: JobId, stream: "stdout" | "stderr", offset: number, opts: { userid?: number; max?: number; tail?: boolean } = {}): { data: string; offset: number; done: boolean } {
    const info = this.job(id);
    const userid = opts.userid ?? this.owner;
    if (userid !== this.owner && userid !== info.userid) {
      throw new JobtapError(ErrorCode.PERMISSION_DENIED, `job ${formatJobId(id)}: only the job's user may read its output`);
    }
    const done = info.state === "INACTIVE";
    const job = this.engine.active.get(id) ?? this.loadInactive(id);
    const files = job && outputRecord(savedState(job.eventlog, job.execlog) ?? {});
    if (files === undefined) {
      if (!done) return { data: "", offset, done };
      throw new JobtapError(ErrorCode.BAD_STATE, `job ${formatJobId(id)} never started a local process: it has no output`, { id: formatJobId(id) });
    }
    return { ...readOutputFile(files[stream], files.uid, offset, opts.max ?? 1 << 20, opts.tail === true), done };
  }

  /** Jobs set aside as corrupt at start. */
  lostAndFound(): Array<{ id: JobId; reason: string }> {
    return this.store.lostAndFound();
  }

  /**
   * Commits the current batch now (tests, shutdown): waiting submissions are acknowledged
   * when it is durable (at once on a synchronous store; with the SQLite writer thread, when
   * the writer replies).
   */
  flush(): void {
    this.engine.batch.commit(true);
  }

  /** Stops timers and executors, writes the last batch, closes the store. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Plugins go first, while the manager can still record what their removal does
    // (nothing is scheduled meanwhile); their timers would otherwise keep a daemon alive.
    this.scheduler.pause();
    try {
      await this.engine.port.close?.();
    } catch (err) {
      this.engine.log("error", `closing plugins: ${(err as Error).message}`);
    }
    this.scheduler.close();
    this.periodic.stop();
    this.preempt.stop();
    this.inactive.close();
    this.executors.close();
    this.engine.batch.commit(true);
    this.engine.batch.stopTimers();
    await this.engine.batch.settled();
    if (!this.engine.batch.fatal) this.store.markClean?.(lowestKey(this.engine.active), this.inactive.size);
    await this.store.close();
  }

  // --- inactive jobs, read back from the store on demand --------------------------------

  /** A cached inactive job replayed from the store (no callbacks), or undefined. */
  private loadInactive(id: JobId): ActiveJob | undefined {
    if (!this.inactive.has(id)) return undefined;
    const text = this.engine.batch.storedView(id);
    if (!text) return undefined;
    const r = replayJob(text);
    if ("error" in r) return undefined;
    const job = newActiveJob(r.core);
    job.eventlog = r.eventlog;
    job.execlog = r.execlog;
    return job;
  }

  /**
   * Why the job is not running, or how it ended (issue 36, docs/why.md): every layer's
   * reasons, computed only now (nothing is kept on the job's path). Throws UNKNOWN_JOB.
   */
  why(id: JobId): Promise<Explanation> {
    this.checkOpen();
    return explainJob(this.whyDeps(), id);
  }

  /**
   * The scheduler's better-analyze producer for `why` (the matchmaking policy's); undefined
   * removes it. Until one is set `why` reports the resource request only.
   */
  setSchedAnalyzer(analyzer: SchedAnalyzer | undefined): void {
    this.analyzer = analyzer;
  }

  /**
   * One-line reasons for a listing: `of(id)` gives a pending job's first reason (manager
   * state only, no plugin call), undefined for others. Use one per listing.
   */
  briefReasons(): (id: JobId) => string | undefined {
    const brief = new BriefReasons(this.scheduler, whyLookups(this.whyDeps()));
    return (id) => {
      const job = this.engine.active.get(id);
      return job === undefined ? undefined : brief.of(job);
    };
  }

  private whyDeps(): WhyDeps {
    return {
      engine: this.engine,
      scheduler: this.scheduler,
      gate: this.queues.gate,
      loadInactive: (id) => this.loadInactive(id),
      stateOf: (id) => this.engine.active.get(id)?.core.state ?? (this.inactive.has(id) ? "INACTIVE" : undefined),
      analyzer: this.analyzer,
    };
  }

  /** The job's R (its allocated resources), active or cached inactive; undefined before
   *  allocation. Throws UNKNOWN_JOB like `job(id)`. */
  jobR(id: JobId): Record<string, unknown> | undefined {
    const core = this.engine.active.get(id)?.core ?? this.loadInactive(id)?.core;
    if (core === undefined) this.job(id);
    return core?.R;
  }

  /**
   * @internal The manager's parts, for the repository's own tests and benches only (stripped
   * from the published declarations): the engine, the store and the scheduler.
   */
  static internals(m: JobManager) {
    return {
      engine: m.engine,
      store: m.store,
      scheduler: m.scheduler,
      inactive: m.inactive,
      /** A cached inactive job replayed from the store (restart callbacks). */
      loadInactive: (id: JobId) => m.loadInactive(id),
    };
  }

  private checkOpen(): void {
    if (this.closed) throw new JobtapError(ErrorCode.MANAGER_CLOSED, "job manager is closed");
    if (this.engine.fatal) throw this.engine.fatal;
  }
}

/**
 * Creates a job manager: opens the store, replays it, attaches plugins, runs the restart
 * callbacks, then starts scheduling. Throws STORE_OPEN if the store cannot be opened.
 */
export async function createJobManager(opts: JobManagerOptions = {}): Promise<JobManager> {
  const clock = opts.clock ?? new RealClock();
  const log = opts.log ?? defaultLog;
  const store = openStore(opts, clock.now());
  try {
    await store.ready?.();
  } catch (err) {
    await store.close();
    throw err;
  }
  const engine = new Engine({ clock, store, batchWindowMs: opts.batchWindowMs ?? 10, log });
  const post = (id: JobId, name: string, context?: Record<string, unknown>) => {
    const job = engine.active.get(id);
    if (job) engine.post(job, name, context);
  };
  const pool = poolOf(opts);
  const slots = carveSlots(pool, opts.slots);
  const scheduler = new Scheduler(pool, clock, {
    alloc: (id, R) => {
      const job = engine.active.get(id);
      if (job) engine.post(job, "alloc", { R });
      else scheduler.free(id);
    },
    unsatisfiable: (id, why) => post(id, "exception", { type: "alloc", severity: 0, note: why }),
  }, opts.queueDepth ?? 1, slots);
  const outputDir = outputDirOf(opts);
  const executors = new Executors(engine);
  const launcher = opts.launcher ?? processLauncher();
  const owner = opts.owner ?? process.getuid?.() ?? 0;
  executors.register("local", new LocalExecutor(clock, { outputDir, killTimeoutMs: opts.killTimeoutMs ?? 5000, launcher, owner }));
  executors.register("test", new TestExecutor(clock));
  let onPurge: (r: InactiveRecord) => void = () => undefined;
  const limits = { ageLimit: opts.inactiveAgeLimit, numLimit: opts.inactiveNumLimit };
  const inactive = new InactiveCache(clock, limits, (r) => onPurge(r));
  const queues = new QueueGate();
  const actions = new Actions({ engine, scheduler, executors, inactive, queues });
  engine.actions = actions;
  // Real time (a measurement for /metrics): the replay, then its callbacks once plugins load.
  let began = performance.now();
  const readEventlog = keptEventlogReader(storedEventlogReader(store), engine);
  const replay = replayStore({ engine, store, inactive, scheduler, readEventlog });
  let replayMs = performance.now() - began;
  const ids = new FluidGenerator(store.epoch(), () => clock.now());
  if (replay.maxId !== undefined) ids.advancePast(replay.maxId);
  const m = new JobManager(engine, store, scheduler, inactive, executors, ids, { ...opts, launcher }, { gate: queues, actions });
  m.outputDir = outputDir;
  onPurge = (r) => purgeRecord(engine, m.jobAds, r);
  engine.port = opts.plugins ? await opts.plugins(m.port) : NO_PLUGINS;
  const { loadInactive } = JobManager.internals(m);
  began = performance.now();
  await restartCallbacks({ engine, store, inactive, scheduler, actions, executors, readEventlog }, replay, loadInactive);
  replayMs += performance.now() - began;
  m.replaySeconds = replayMs / 1000;
  m.port.reprioritizeAll();
  // In the background: the open does not wait for the restart's events to be written.
  settleRestored(engine, readEventlog).catch((err: unknown) => engine.log("error", `restart: ${(err as Error).message}`));
  m.periodic.resume();
  m.periodic.start();
  return m;
}

/** job.inactive-remove (args read back from the store only if someone listens), then delete. */
function purgeRecord(e: Engine, jobAds: JobAds, r: InactiveRecord): void {
  if (e.port.matches("job.inactive-remove")) {
    const text = e.batch.storedView(r.id);
    const replayed = text && replayJob(text);
    if (replayed && !("error" in replayed)) {
      const job = newActiveJob(replayed.core);
      job.eventlog = replayed.eventlog;
      const pending = e.callJob(job, "job.inactive-remove");
      if (pending) pending.catch(() => undefined);
    }
  }
  e.batch.storePurge(r.id);
  e.countStored(r.userid, -r.jobspecBytes);
  jobAds.forget(r.id);
}

/** The lowest key of a map of active jobs (undefined if empty): a clean shutdown's summary floor. */
function lowestKey(active: Map<JobId, unknown>): JobId | undefined {
  let low: JobId | undefined;
  for (const id of active.keys()) if (low === undefined || id < low) low = id;
  return low;
}

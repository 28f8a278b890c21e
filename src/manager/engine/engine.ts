/**
 * The event engine: per-job mailboxes, the order of work for one event (spec §3), plugin
 * stack calls with their OUT values applied per topic. Store writes are batched in
 * batch.ts; state actions (what happens on entering a state) live in actions.ts.
 */
import { ErrorCode, JobtapError } from "../../errors.js";
import type { Clock } from "../base/clock.js";
import { NO_COMMIT } from "../core/events.js";
import { formatJobId, type JobId } from "../base/ids.js";
import { newActiveJob, redactedJobspec, type ActiveJob } from "./job.js";
import { isPlainObject, mergeNullDeletes } from "../core/jobspec.js";
import { NO_PLUGINS, PRIORITY_UNAVAILABLE, type PluginPort, type StackResult } from "../port/port.js";
import type { EventEntry, JobArgs, Jobspec } from "../port/records.js";
import { PRIORITY_MAX, RESULTS, STATES, stateTopic, URGENCY_EXPEDITE, URGENCY_HOLD, type State, type StateTopic } from "../base/states.js";
import type { JobCounts } from "../base/tally.js";
import { runSteps } from "../base/steps.js";
import type { AppliedTopic, OutOf } from "../port/topics.js";
import type { JobStore } from "../store/types.js";
import { StoreBatcher } from "./batch.js";
import { checkEventlogEntries, DEFAULT_JOB_LIMITS, type JobLimits } from "../core/limits.js";
import { applyEvent, type JobCore } from "../core/transition.js";

export type LogLevel = "debug" | "info" | "error";
export type Logger = (level: LogLevel, msg: string) => void;

/** One journal record: an event as it was processed, for the manager's event stream. */
export interface JournalEntry {
  id: JobId;
  entry: EventEntry;
  state: State;
  prev_state: State;
}

/** Called for one event name after the job's state update (see `Engine.watch`). */
export type EventWatcher = (job: ActiveJob, e: EventEntry) => void;

/** What the engine calls for state actions (implemented in actions.ts). */
export interface ActionRunner {
  run(job: ActiveJob): void;
  /** An `alloc` was refused (job left SCHED meanwhile): give the resources back. */
  allocRefused(job: ActiveJob): void;
  resourceUpdate(job: ActiveJob): void;
}

export interface EngineOptions {
  clock: Clock;
  store: JobStore;
  batchWindowMs: number;
  log: Logger;
}

/** Applies the hold/expedite overrides: urgency 0 forces 0, urgency 31 forces the maximum. */
export function overridePriority(urgency: number, priority: number): number {
  if (urgency === URGENCY_HOLD) return 0;
  if (urgency === URGENCY_EXPEDITE) return PRIORITY_MAX;
  return priority;
}

/** Per-job mailboxes and the order of work for each event (spec §3). */
export class Engine {
  readonly active = new Map<JobId, ActiveJob>();
  port: PluginPort = NO_PLUGINS;
  actions!: ActionRunner;
  private readonly journalListeners = new Set<(j: JournalEntry) => void>();
  /** One watcher per event name (`watch`). */
  private readonly watchers = new Map<string, EventWatcher>();
  /** Count of jobs in RUN or CLEANUP (Flux's running-job counter). */
  running = 0;
  /** Redacted jobspec per jobspec object, shared by jobs submitted with the same object. */
  private readonly redactions = new WeakMap<Jobspec, Jobspec>();
  private readonly eventTopics = new EventTopics();

  /** The batch window's pending store writes. */
  readonly batch: StoreBatcher;
  /** Accepted and retired jobs, counted in place for /metrics (no journal listener needed). */
  readonly counts: JobCounts = { submitted: 0, inactive: new Float64Array(RESULTS.length) };

  constructor(readonly opts: EngineOptions) {
    this.batch = new StoreBatcher(opts.clock, opts.store, opts.batchWindowMs, opts.log);
  }

  /** Set once a store commit failed (the manager refuses further work). */
  get fatal(): JobtapError | undefined {
    return this.batch.fatal;
  }

  get clock(): Clock {
    return this.opts.clock;
  }

  get log(): Logger {
    return this.opts.log;
  }

  /** Looks up an active job or throws UNKNOWN_JOB naming the id. */
  activeJob(id: JobId): ActiveJob {
    const job = this.active.get(id);
    if (!job) throw new JobtapError(ErrorCode.UNKNOWN_JOB, `unknown job ${formatJobId(id)}`, { id: formatJobId(id) });
    return job;
  }

  /** Active jobs per userid ([limits] jobs-per-user). */
  private readonly perUser = new Map<number, number>();

  /** Adds a job to the active set (submit or replay). */
  admit(job: ActiveJob): void {
    this.active.set(job.core.id, job);
    const u = job.core.userid;
    this.perUser.set(u, (this.perUser.get(u) ?? 0) + 1);
  }

  /** Removes a job from the active set (inactive, rejected or set aside). */
  dismiss(job: ActiveJob): void {
    if (!this.active.delete(job.core.id)) return;
    const u = job.core.userid;
    const n = (this.perUser.get(u) ?? 1) - 1;
    if (n > 0) this.perUser.set(u, n);
    else this.perUser.delete(u);
  }

  /** [limits] eventlog-entries (set by the manager). */
  limits: JobLimits = DEFAULT_JOB_LIMITS;

  /**
   * LIMIT_EXCEEDED if a request would add an entry to a job whose eventlog is full. Only
   * requests check this (urgency, update, post-event, non-fatal exceptions): state changes,
   * cancels and fatal exceptions always proceed, so a full job can still end.
   */
  checkRoom(job: ActiveJob): void {
    checkEventlogEntries(formatJobId(job.core.id), job.eventCount + job.queue.length, this.limits);
  }

  /** Jobspec bytes of each user's stored jobs, active and inactive ([limits] jobspec-bytes-per-user). */
  private readonly storedBytes = new Map<number, number>();

  /**
   * Counts `bytes` of jobspec more (or, negative, fewer) stored for `userid`: a job entering
   * admission or replayed at restart adds its bytes; a rejected, purged or set-aside job
   * takes them back.
   */
  countStored(userid: number, bytes: number): void {
    const n = (this.storedBytes.get(userid) ?? 0) + bytes;
    if (n > 0) this.storedBytes.set(userid, n);
    else this.storedBytes.delete(userid);
  }

  /** The jobspec bytes `userid`'s stored jobs hold. */
  storedBytesOf(userid: number): number {
    return this.storedBytes.get(userid) ?? 0;
  }

  /** How many active jobs `userid` has. */
  activeOf(userid: number): number {
    return this.perUser.get(userid) ?? 0;
  }

  newJob = newActiveJob;

  /**
   * Builds an entry stamped with the clock, in seconds as RFC 18 wants. Inside a cascade
   * (see `cascade`) every entry gets the clock reading of the cascade's first one.
   */
  entry(name: string, context?: Record<string, unknown>): EventEntry {
    // One literal per shape: a context added afterwards would need a property array of its own.
    const timestamp = this.stampMs() / 1000;
    return context !== undefined && hasKeys(context) ? { timestamp, name, context } : { timestamp, name };
  }

  /**
   * How deep the engine is in posts and drains on the stack: above 0 during a cascade, the
   * synchronous stretch from an outermost post (or drain) until it returns, which processes
   * that event and every event it causes, for this job and others.
   */
  private cascade = 0;
  /** The clock reading shared by the entries of the current cascade (NaN: none read yet). */
  private cascadeMs = NaN;

  /**
   * The time to stamp an entry with. A cascade reads the clock once, at its first entry, and
   * ends within the same turn of the event loop: its events share one timestamp, as if it
   * took no time (docs/semantics.md). Outside one, each entry reads the clock.
   */
  private stampMs(): number {
    if (this.cascade === 0) return this.clock.now();
    const t = this.cascadeMs;
    return t === t ? t : (this.cascadeMs = this.clock.now());
  }

  /** Leaves a post or drain; the outermost one ends the cascade's shared timestamp. */
  private leaveCascade(): void {
    if (--this.cascade === 0) this.cascadeMs = NaN;
  }

  /**
   * Posts an event to a job's mailbox. If the job is idle and not held, the event and every
   * event it causes for this job are processed before this returns (a synchronous cascade).
   */
  post(job: ActiveJob, name: string, context?: Record<string, unknown>, origin?: string): void {
    this.cascade++;
    try {
      const e = this.entry(name, context);
      if (origin !== undefined) this.origins.set(e, origin);
      job.queue.push(e);
      this.drain(job);
    } finally {
      this.leaveCascade();
    }
  }

  /**
   * Appends an entry to the job's exec eventlog (executor state), stored in the same batch as
   * its events. Not an event of the job: no state change, no callbacks, no journal entry,
   * never in the main eventlog (Flux keeps executor state in a separate exec eventlog).
   */
  postExec(job: ActiveJob, name: string, context: Record<string, unknown>): void {
    const e = this.entry(name, context);
    (job.execlog ??= []).push(e);
    // A job under admission is stored once accepted, its exec eventlog with it (storeNewJob).
    if (job.unstoredFrom === undefined) this.batch.appendExec(job, e);
  }

  /** Who posted an event from outside the manager (a plugin), for its error if it fails. */
  private readonly origins = new WeakMap<EventEntry, string>();

  /** Runs queued events until the mailbox is empty, the job is held, or already running. */
  drain(job: ActiveJob): void {
    if (job.busy) return;
    job.busy = true;
    this.cascade++;
    try {
      while (job.hold === 0 && job.queue.length > 0) {
        const e = job.queue.shift()!;
        const pending = this.process(job, e);
        if (pending) this.holdUntil(job, pending);
      }
    } finally {
      job.busy = false;
      this.leaveCascade();
    }
  }

  /** Holds the job's mailbox until an async callback settles; other jobs keep moving. */
  holdUntil(job: ActiveJob, pending: Promise<void>): void {
    job.hold++;
    pending
      .catch((err: unknown) => this.log("error", `job ${formatJobId(job.core.id)}: ${(err as Error)?.message ?? err}`))
      .finally(() => {
        job.hold--;
        this.drain(job);
      });
  }

  /** Order of work for one event (spec §3): state update, journal, batch, callbacks, action. */
  private process(job: ActiveJob, e: EventEntry): void | Promise<void> {
    if (e.name === "alloc" && e.context?.R === undefined && job.core.R) e.context = { ...e.context, R: job.core.R };
    const prev = job.core.state;
    // The job's own record is updated in place (no copy per event); transition() applies the
    // same rules to a copy for replay and tests.
    const error = applyEvent(job.core, e);
    if (error !== undefined) {
      const origin = this.origins.get(e);
      // The manager's own state event, queued before a fatal exception (a plugin's, say)
      // ended the job, is stale rather than wrong.
      const stale = origin === undefined && job.core.endEvent?.name === "exception";
      this.log(stale ? "debug" : "error", `job ${formatJobId(job.core.id)}: ${error}${origin === undefined ? "" : ` (posted by ${origin})`}`);
      if (e.name === "alloc") this.actions.allocRefused(job);
      return;
    }
    job.revision++;
    if (e.name === "jobspec-update") {
      job.redacted = undefined;
      job.request = undefined;
    }
    if (!NO_COMMIT.has(e.name)) {
      job.appendEvent(e);
      // A job under admission is stored once accepted, its eventlog so far with it.
      if (job.unstoredFrom === undefined) this.batch.append(job, e);
    }
    this.countRunning(prev, job.core.state);
    if (this.watchers.size > 0) this.watched(job, e);
    if (this.journalListeners.size > 0) this.journal({ id: job.core.id, entry: e, state: job.core.state, prev_state: prev });
    return this.callbacks(job, e, prev);
  }

  private countRunning(prev: State, next: State): void {
    if (prev === next) return;
    if (next === "RUN") this.running++;
    if (prev === "CLEANUP") this.running--;
  }

  /** Steps 7-11 of spec §3, in order; the rest waits for an async callback to settle. */
  private callbacks(job: ActiveJob, e: EventEntry, prev: State): void | Promise<void> {
    // Inline while every step is synchronous (no context object per event); from the first
    // step that returns a Promise, the step loop runs the rest after it settles.
    for (let step = 0; step < 4; step++) {
      const r = Engine.callbackStep(this, job, e, prev, step);
      if (r !== undefined) {
        if (step === 3) return r;
        const rest: Callbacks = { engine: this, job, e, prev };
        return r.then(() => runSteps<Callbacks, never>(rest, 4, Engine.stepOf, step + 1)) as Promise<void>;
      }
    }
  }

  private static stepOf({ engine, job, e, prev }: Callbacks, step: number): void | Promise<void> {
    return Engine.callbackStep(engine, job, e, prev, step);
  }

  private static callbackStep(engine: Engine, job: ActiveJob, e: EventEntry, prev: State, step: number): void | Promise<void> {
    switch (step) {
      case 0:
        return engine.notifySubscribers(job, e);
      case 1:
        return e.name === "jobspec-update" ? engine.callJob(job, "job.update", { updates: e.context ?? {} }) : undefined;
      case 2:
        return job.core.state === prev ? undefined : engine.callState(job, e, prev);
      default:
        if (e.name === "resource-update") engine.actions.resourceUpdate(job);
        engine.actions.run(job);
    }
  }

  private notifySubscribers(job: ActiveJob, e: EventEntry): void | Promise<void> {
    const port = this.port;
    const listens = port.hasSubscribers ? port.hasSubscribers(job.core.id, e.name) : port.matches(this.eventTopics.of(e.name));
    if (listens) return this.notifyEvent(job, e);
  }

  /** Calls the job's subscribers (their function context is made only for an event that has any). */
  private notifyEvent(job: ActiveJob, e: EventEntry): void | Promise<void> {
    const port = this.port;
    const fail = (err: unknown) => this.log("error", `job ${formatJobId(job.core.id)}: event.${e.name} callback failed: ${errText(err)}`);
    try {
      const r = port.notifyEvent(this.args(job, { entry: e }));
      return r instanceof Promise ? r.catch(fail) : undefined;
    } catch (err) {
      fail(err);
    }
  }

  /**
   * Standard IN args (spec §4.1), built fresh for each stack call (plugins may keep them).
   * The jobspec, dependencies and flags are shared, read-only views of the job's own.
   * Key order: the standard ten, then `extra`'s keys, then R and end_event when set.
   */
  args(job: ActiveJob, extra?: Partial<JobArgs>): JobArgs {
    const c = job.core;
    // A leaving job's args (job.inactive-add, job.destroy) in one literal: keys added one by
    // one past the literal's ten would each extend a property array of their own.
    if (extra === undefined && c.R && c.endEvent) return ended(c, redactedJobspec(job, this.redactions));
    const a: JobArgs = {
      id: c.id,
      userid: c.userid,
      urgency: c.urgency,
      priority: c.priority,
      state: c.state,
      t_submit: c.t_submit,
      jobspec: redactedJobspec(job, this.redactions),
      dependencies: c.dependencies,
      annotations: c.annotations,
      flags: c.flags,
    };
    if (extra !== undefined) Object.assign(a, extra);
    if (c.R) a.R = redactR(c.R);
    if (c.endEvent) a.end_event = c.endEvent;
    return a;
  }

  /**
   * `job.state.<state>` for the state `e` moved the job into from `prev`: the standard args
   * plus `entry` and `prev_state` (the hottest stack call, one per state a job passes
   * through). The shapes met on every job are one literal each: before R (PRIORITY, SCHED)
   * and with R and end_event (CLEANUP, INACTIVE).
   */
  private callState(job: ActiveJob, e: EventEntry, prev: State): void | Promise<void> {
    const topic = STATE_TOPIC[job.core.state];
    if (!this.port.matches(topic)) return;
    const c = job.core;
    let a: JobArgs;
    if (!c.R && !c.endEvent) a = entered(c, redactedJobspec(job, this.redactions), e, prev);
    else if (c.R && c.endEvent) a = endedEntered(c, redactedJobspec(job, this.redactions), e, prev);
    else {
      a = this.args(job);
      a.entry = e;
      a.prev_state = prev;
    }
    return this.callWith(job, topic, a);
  }

  /**
   * A generic stack call: skipped entirely when nobody listens; OUT applied per topic.
   * Returns a Promise only when a handler was asynchronous.
   */
  callJob(job: ActiveJob, topic: AppliedTopic, extra?: Partial<JobArgs>): void | Promise<void> {
    if (!this.port.matches(topic)) return;
    return this.callWith(job, topic, this.args(job, extra));
  }

  private callWith(job: ActiveJob, topic: AppliedTopic, args: JobArgs): void | Promise<void> {
    // The host labels plugin failures itself; a throw here is a host bug, which must not
    // take the job's mailbox (or the manager) down with it.
    let res: StackResult<OutOf<AppliedTopic>> | Promise<StackResult<OutOf<AppliedTopic>>>;
    try {
      res = this.port.callJob(topic, args);
    } catch (err) {
      this.callFailed(job, topic, err);
      return;
    }
    if (res instanceof Promise) {
      return res.then(
        (r) => this.applyOut(job, topic, r),
        (err: unknown) => this.callFailed(job, topic, err),
      );
    }
    this.applyOut(job, topic, res);
  }

  private callFailed(job: ActiveJob, topic: AppliedTopic, err: unknown): void {
    this.log("error", `job ${formatJobId(job.core.id)}: ${topic}: ${errText(err)}`);
  }

  /**
   * Honours the merged OUT of a generic topic (spec §4.2). The host has checked it against
   * the topic table (an integer priority, object annotations, R only from SCHED); what is
   * left here is what depends on the job: R once, priority only in PRIORITY/SCHED.
   */
  applyOut(job: ActiveJob, topic: AppliedTopic, res: StackResult<OutOf<AppliedTopic>>): void {
    if (res.error) this.log("debug", `job ${formatJobId(job.core.id)}: ${topic}: plugin ${res.error.plugin}: ${res.error.message}`);
    const out = res.out;
    if (out.priority !== undefined && out.priority >= 0) this.reprioritize(job, out.priority);
    // A bare null clears what earlier plugins set in the same call: nothing to apply.
    if (out.annotations) this.outAnnotations(job, topic, out.annotations);
    const R = topic === "job.state.sched" ? (out as OutOf<"job.state.sched">).R : undefined;
    if (R !== undefined) {
      if (job.core.R) this.log("error", `job ${formatJobId(job.core.id)}: ${topic}: R is already set`);
      else this.updateCore(job, { R });
    }
  }

  private outAnnotations(job: ActiveJob, topic: AppliedTopic, a: Record<string, unknown>): void {
    const merged = mergeNullDeletes(job.core.annotations ?? {}, a);
    const next = Object.keys(merged).length === 0 ? null : merged;
    // job.new annotations are stored but not published (Flux).
    if (topic === "job.new") this.updateCore(job, { annotations: next });
    else this.post(job, "annotations", { annotations: next });
  }

  /** Changes recorded fields outside the eventlog (plugin OUT), in place like an event. */
  private updateCore(job: ActiveJob, changes: Pick<Partial<JobCore>, "R" | "annotations">): void {
    Object.assign(job.core, changes);
    job.revision++;
  }

  /** Flux reprioritize_job: no-op outside PRIORITY/SCHED; overrides; no event if unchanged in SCHED. */
  reprioritize(job: ActiveJob, priority: number): void {
    const c = job.core;
    if (c.state !== "PRIORITY" && c.state !== "SCHED") return;
    if (priority === PRIORITY_UNAVAILABLE || priority < 0) return;
    const p = overridePriority(c.urgency, Math.min(priority, PRIORITY_MAX));
    if (c.state === "SCHED" && p === c.priority) return;
    this.post(job, "priority", priorityContext(p));
  }

  /**
   * Whether an event posted now would be processed while the job is still in NEW. Flux
   * checks "fatal exception in NEW" when an event is processed, not when it is posted: a
   * job waiting out its submit batch window has `validate` queued, so whatever is posted
   * behind it lands in DEPEND. Only a post made during admission meets the job in NEW.
   */
  processedInNew(job: ActiveJob): boolean {
    return job.core.state === "NEW" && !job.queue.some((e) => e.name === "validate");
  }

  /** Posts an exception event (checked by the caller). */
  raise(job: ActiveJob, type: string, severity: number, note: string, extra?: Record<string, unknown>): void {
    this.post(job, "exception", { type, severity, note, ...extra });
  }

  // --- event stream --------------------------------------------------------------------

  onJournal(fn: (j: JournalEntry) => void): void {
    this.journalListeners.add(fn);
  }

  offJournal(fn: (j: JournalEntry) => void): void {
    this.journalListeners.delete(fn);
  }

  /**
   * Sets (or with undefined, clears) the watcher of events named `name`, called where the
   * journal is, before its listeners: a part of the manager that needs a few event names
   * (the periodic policy) costs the other events one map lookup, not a journal record.
   */
  watch(name: string, fn: EventWatcher | undefined): void {
    if (fn === undefined) this.watchers.delete(name);
    else this.watchers.set(name, fn);
  }

  private watched(job: ActiveJob, e: EventEntry): void {
    const fn = this.watchers.get(e.name);
    if (fn === undefined) return;
    try {
      fn(job, e);
    } catch (err) {
      this.log("error", `job ${formatJobId(job.core.id)}: ${e.name} watcher failed: ${(err as Error).message}`);
    }
  }

  private journal(j: JournalEntry): void {
    for (const fn of this.journalListeners) {
      try {
        fn(j);
      } catch (err) {
        this.log("error", `event stream listener failed: ${(err as Error).message}`);
      }
    }
  }
}

/** One event's callbacks (the step loop's context). */
interface Callbacks {
  engine: Engine;
  job: ActiveJob;
  e: EventEntry;
  prev: State;
}

/** Topic strings built once, not per event. */
const STATE_TOPIC = Object.fromEntries(STATES.map((s) => [s, stateTopic(s)])) as Record<State, StateTopic>;

/** `job.event.<name>` strings, cached per engine (bounded: event names are open-ended). */
class EventTopics {
  private readonly cache = new Map<string, string>();

  of(name: string): string {
    let t = this.cache.get(name);
    if (t === undefined) {
      t = `job.event.${name}`;
      if (this.cache.size < 1024) this.cache.set(name, t);
    }
    return t;
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function hasKeys(o: object): boolean {
  for (const _k in o) return true;
  return false;
}

/** The args of a job with R and an end event (keys in `Engine.args` order). */
function ended(c: JobCore, jobspec: Jobspec): JobArgs {
  return {
    id: c.id,
    userid: c.userid,
    urgency: c.urgency,
    priority: c.priority,
    state: c.state,
    t_submit: c.t_submit,
    jobspec,
    dependencies: c.dependencies,
    annotations: c.annotations,
    flags: c.flags,
    R: redactR(c.R!),
    end_event: c.endEvent,
  };
}

/** `job.state.*` args of a job without R or an end event. */
function entered(c: JobCore, jobspec: Jobspec, entry: EventEntry, prev_state: State): JobArgs {
  return {
    id: c.id,
    userid: c.userid,
    urgency: c.urgency,
    priority: c.priority,
    state: c.state,
    t_submit: c.t_submit,
    jobspec,
    dependencies: c.dependencies,
    annotations: c.annotations,
    flags: c.flags,
    entry,
    prev_state,
  };
}

/** `job.state.*` args of a job with R and an end event. */
function endedEntered(c: JobCore, jobspec: Jobspec, entry: EventEntry, prev_state: State): JobArgs {
  return {
    id: c.id,
    userid: c.userid,
    urgency: c.urgency,
    priority: c.priority,
    state: c.state,
    t_submit: c.t_submit,
    jobspec,
    dependencies: c.dependencies,
    annotations: c.annotations,
    flags: c.flags,
    R: redactR(c.R!),
    end_event: c.endEvent,
    entry,
    prev_state,
  };
}

/** R as plugins see it: the top-level `scheduling` key removed. */
function redactR(R: Record<string, unknown>): Record<string, unknown> {
  if (!("scheduling" in R)) return R;
  const { scheduling: _omit, ...rest } = R;
  return rest;
}

/**
 * A `priority` event's context: one frozen object per value for the priorities most jobs get
 * (0-4095: the default plugin's urgency-based values and a fair-share's small numbers), so
 * its eventlog text is made once (eventlog-text.ts); a larger value gets its own. Event
 * contexts are read-only to plugins (docs/plugins.md).
 */
function priorityContext(p: number): Record<string, unknown> {
  if (!(Number.isInteger(p) && p >= 0 && p < PRIORITY_CONTEXTS.length)) return { priority: p };
  return (PRIORITY_CONTEXTS[p] ??= Object.freeze({ priority: p }));
}
const PRIORITY_CONTEXTS = new Array<Readonly<{ priority: number }> | undefined>(4096);

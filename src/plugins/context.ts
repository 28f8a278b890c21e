/**
 * The context factory: the handle a plugin's setup receives (spec flux-jobtap §5 in TS form).
 *
 * Adding a context method (e.g. `p.jobAd`):
 * 1. declare it in `PluginContext` below, with a JSDoc line on when it may be called;
 *    a read that may one day cross a worker thread returns `Read<T>` (plugins `await` it);
 * 2. implement it in the group it belongs to (`setupApi`: shapes the plugin, setup only;
 *    `jobApi`: the Flux job API, each call through a guard; `auxApi`: per-job values), or in
 *    a new group spread into `createContext`; reach the manager only through `g.job(...)` /
 *    `ctx.manager(...)` so every failure is labelled with plugin, topic and job;
 * 3. if it needs something new from the host, add it to `ContextHost` (keep it small: what
 *    the context may ask for, never the registry or the dispatcher themselves);
 * 4. add its row to `CONTEXT_METHODS` (context-methods.ts): when it may be called, its
 *    arguments, what it returns, how it crosses to an isolated plugin's worker; the worker's
 *    proxy and the host's side of the protocol are made from that row (nothing else to write
 *    for isolation; a missing row fails the typecheck and test/plugins/context-methods);
 * 5. export any new public type from src/plugin.ts and document it in docs/plugins.md.
 *
 * "Current job" in Flux is the job whose callback is running. Here every job call takes an
 * explicit id, and a job is *current for a plugin* while one of that plugin's handlers for
 * that job is running or its Promise has not settled; so the rules carry over to async
 * handlers. Each call checks its phase and fails with a coded JobtapError naming plugin,
 * topic and job.
 */
import { adsApi, type AdsApi } from "./ads-api.js";
import { ErrorCode, JobtapError, isJobtapError } from "../errors.js";
import type { Clock } from "../manager/base/clock.js";
import type { HookUsers } from "../hooks/types.js";
import { formatJobId, type JobId } from "../manager/base/ids.js";
import { checkJobspecUpdate } from "../manager/core/jobspec.js";
import type { ManagerPort, PluginStateStore, PluginSubmitOptions, StackResult } from "../manager/port/port.js";
import type { JobArgs, Jobspec } from "../manager/port/records.js";
import { PRIORITY_UNAVAILABLE } from "../manager/port/port.js";
import type { JobResult, State } from "../manager/base/states.js";
import type { Executor } from "../manager/port/executor.js";
import { auxDelete, auxSet, pluginState } from "./aux.js";
import { msg, type HostLogger } from "./dispatch.js";
import type { JobspecShield } from "./shield.js";
import { takesOnlyFirstArg, type Frame } from "./stack.js";
import type { LoadSortOrder, PluginRecord, ServiceCred } from "./record.js";
import { compileTopicGlob } from "./record.js";
import type { AnyHandler, HandlerFor, Rejection } from "./topics.js";

/** Logging for a plugin; messages are prefixed with the plugin name by the host. */
export interface PluginLog {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Flags a plugin may set on a job (Flux accepts exactly these). */
export type JobFlag = "alloc-bypass" | "debug" | "immutable";

/** A service handler: reachable through the daemon as `<plugin>.<method>`. */
export type ServiceHandler = (payload: unknown, cred: ServiceCred) => unknown;

/**
 * What a context read (`lookup`, `jobResult`, `auxGet`, `state.get`, `call`) returns: the
 * value itself for a plugin running in the manager's thread, and possibly a Promise of it
 * for a plugin behind a worker-thread boundary. `await` it (or use `withRead` to stay
 * synchronous when the value is at hand): such code does not change when a read does.
 */
export type Read<T> = T | Promise<T>;

/**
 * Calls `fn` with a read's value: at once when it is a value (so a synchronous handler stays
 * synchronous), after it settles when it is a Promise.
 */
export function withRead<T, R>(value: Read<T>, fn: (value: T) => R): R | Promise<Awaited<R>> {
  return value instanceof Promise ? (value.then(fn) as Promise<Awaited<R>>) : fn(value);
}

/** Persistent key/value state of one plugin (JSON values), kept in the job store. */
export interface PluginState {
  get<T = unknown>(key: string): Read<T | undefined>;
  /** Durable when the call returns; survives a restart of the manager. */
  set(key: string, value: unknown): void;
  delete(key: string): void;
  keys(): Read<string[]>;
}

/** The per-plugin handle given to `setup`. */
export interface PluginContext extends AdsApi {
  /** The plugin's list name (`fairshare.js`, `.priority-default`). */
  readonly name: string;
  /** The plugin's own configuration (the TOML `conf` table or `load` arguments). */
  readonly conf: Readonly<Record<string, unknown>>;
  readonly log: PluginLog;
  /** The instance owner's uid (Flux's instance owner: full rights over every job). */
  readonly owner: number;
  /**
   * The hook runner's run-as seam (`new HookRunner({ users: p.hookUsers })`, then a HookSpec's
   * `runAs`): set in a multi-user instance, where a hook may run as a job's user or (perilog)
   * root through the privileged launcher; undefined otherwise (hooks run as the daemon's user).
   */
  readonly hookUsers: HookUsers | undefined;
  /** The manager's clock: simulated in tests, so plugins never read Date.now directly. */
  readonly clock: Clock;
  /** This plugin's persistent state (beyond Flux): rebuilt state need not be replayed. */
  readonly state: PluginState;
  /** Registers a handler for a topic or glob; only the first match per plugin runs. Setup only. */
  on<P extends string>(topic: P, handler: HandlerFor<P>): void;
  /** Replay order of job.create/job.new when loaded at runtime. Setup only. */
  setLoadSortOrder(order: LoadSortOrder): void;
  /** A rejection OUT value; with no message Flux's "rejected by job-manager plugin '<name>'". */
  reject(message?: string): Rejection;
  /** The OUT value meaning "priority unavailable": the job waits in PRIORITY. */
  priorityUnavailable(): { priority: number };
  reprioritizeJob(id: JobId, priority: number): void;
  reprioritizeAll(): void;
  /** Flux queue start/stop: jobs of a stopped queue wait in SCHED with no alloc request.
   *  Also allowed from `onRemove`, to start again what the plugin stopped. */
  setQueueStarted(queue: string, started: boolean): void;
  /** The queue of jobs that name none, for `setQueueStarted` (undefined: none). */
  setDefaultQueue(queue: string | undefined): void;
  /** NEW or DEPEND only; see docs/semantics.md for the duplicate rule. */
  dependencyAdd(id: JobId, description: string): void;
  dependencyRemove(id: JobId, description: string): void;
  raiseException(id: JobId, type: string, severity: number, note: string): void;
  postEvent(id: JobId, name: string, context?: Record<string, unknown>): void;
  /** Receive `job.event.*` for this job until it is inactive or the plugin is removed. */
  subscribe(id: JobId): void;
  unsubscribe(id: JobId): void;
  /** Current job only (one of this plugin's handlers is running for it). */
  prologStart(id: JobId, description: string): void;
  prologFinish(id: JobId, description: string, status: number): void;
  /** Current job only, in CLEANUP. */
  epilogStart(id: JobId, description: string): void;
  epilogFinish(id: JobId, description: string, status: number): void;
  auxGet<T = unknown>(id: JobId, key: string): Read<T | undefined>;
  /** Replacing a key runs the old value's destructor; all run when the job goes inactive. */
  auxSet<T>(id: JobId, key: string, value: T, destructor?: (value: T) => void): void;
  auxDelete(id: JobId, key: string): void;
  /** Standard IN args of an active or cached inactive job; undefined if unknown. */
  lookup(id: JobId): Read<JobArgs | undefined>;
  /** The result of an inactive job (or one in CLEANUP). */
  jobResult(id: JobId): Read<JobResult>;
  eventPosted(id: JobId, name: string): boolean;
  /** The merged `exec-state` contexts its executor saved for a job, active or inactive (its exec eventlog); {} if none. */
  execSaved(id: JobId): Record<string, unknown>;
  setFlag(id: JobId, flag: JobFlag): void;
  /**
   * For the current job: staged, posted as one `jobspec-update` after this handler returns.
   * For any other job: posted at once (not run through job.validate).
   */
  jobspecUpdate(id: JobId, updates: Record<string, unknown>): void;
  /**
   * Ids of the active jobs in `state` (every active state when absent), in submission
   * order; pair with `jobAd`/`lookup`. Any time after setup.
   */
  jobIds(state?: State): JobId[];
  /**
   * Submits a new job (the job router's routed copy) as `opts.userid` (default: the
   * owner), through job.validate like any submission; resolves with its id once durable.
   * `opts.environmentFrom` gives it the environment of that active job (plugins never see
   * environments themselves). Any time after setup.
   */
  submit(jobspec: Jobspec, opts?: PluginSubmitOptions): Promise<JobId>;
  /** Calls a custom topic (not `job.*`) on every plugin, `id` (if given) being current. */
  call(
    topic: string,
    args?: Record<string, unknown>,
    id?: JobId,
  ): Read<StackResult>;
  /** Registers `<plugin>.<method>` for the daemon; owner-only unless `guests`. Setup only. */
  serviceRegister(method: string, handler: ServiceHandler, opts?: { guests?: boolean }): void;
  /**
   * Runs when the plugin is removed, after its aux destructors. If it returns a promise
   * (processes still ending), the manager's close waits for it, up to 10 s.
   */
  onRemove(fn: () => void | Promise<unknown>): void;
  /**
   * Registers an executor under `name` (setup only). A job runs on it when its jobspec
   * says `attributes.system.exec.name = name` (set it at submit, or with `jobspecUpdate`
   * before RUN). Removing the plugin unregisters it; jobs already running on it stay bound
   * to it until the name is registered again (a reload), whose executor reattaches them.
   * See docs/plugins.md "Executors".
   */
  registerExecutor(name: string, executor: Executor): void;
}

/**
 * What a context may ask of the host: the boundary between plugin code and the host's
 * registry and dispatcher (one object per host, shared by every plugin's context).
 */
export interface ContextHost {
  readonly clock: Clock;
  /** The instance owner's uid. */
  readonly owner: number;
  /** `p.hookUsers` (multi-user instance only). */
  readonly hookUsers: HookUsers | undefined;
  /** Bench only (bench why's A/B): `job.explain` handlers are not registered. */
  readonly withoutExplain?: boolean;
  /** Hands out deep-frozen jobspecs (`lookup`). */
  readonly shield: JobspecShield;
  report: HostLogger;
  /** The manager, or a PLUGIN_PHASE error naming `who` when none is attached yet. */
  manager(who: string): ManagerPort;
  /** The per-plugin state store (the manager's, or memory when there is none). */
  stateStore(): PluginStateStore;
  /** The innermost callback running for `id` on behalf of `plugin`, if any. */
  currentFrame(id: JobId, plugin: PluginRecord): Frame | undefined;
  /** Labels a ManagerPort failure with plugin, topic (or service) and job, keeping its code. */
  wrapError(plugin: PluginRecord, id: JobId | undefined, what: string, e: unknown): JobtapError;
  subscribe(plugin: PluginRecord, id: JobId): void;
  unsubscribe(plugin: PluginRecord, id: JobId): void;
  /** A stack call of a custom topic over every plugin. */
  callCustom(topic: string, args: Record<string, unknown>, id: JobId | undefined): StackResult | Promise<StackResult>;
  /** A plugin's handlers changed (`p.on`). */
  handlersChanged(): void;
  /** Runs a plugin's service handler; context calls made from it are labelled with it. */
  inService<T>(plugin: PluginRecord, method: string, fn: () => T): T;
}

/** The phase checks every context call goes through. */
interface Guards {
  phase(what: string, why: string): JobtapError;
  /** Fails once the plugin has been removed. */
  live(what: string): void;
  setupOnly(what: string): void;
  /** Runs a ManagerPort call, labelling any failure with plugin, topic and job. */
  job<T>(what: string, id: JobId, fn: (m: ManagerPort) => T): T;
  /** `job` without the removal check: finishing a prolog or epilog the plugin started. */
  finishing<T>(what: string, id: JobId, fn: (m: ManagerPort) => T): T;
  /** Fails unless one of this plugin's handlers is running for the job. */
  current(what: string, id: JobId): void;
}

function guards(host: ContextHost, rec: PluginRecord): Guards {
  const phase = (what: string, why: string): JobtapError =>
    new JobtapError(ErrorCode.PLUGIN_PHASE, `plugin ${rec.name}: ${what}: ${why}`, {
      plugin: rec.name,
    });
  const live = (what: string): void => {
    if (rec.removed) throw phase(what, "the plugin has been removed");
  };
  const finishing = <T>(what: string, id: JobId, fn: (m: ManagerPort) => T): T => {
    const mgr = host.manager(`plugin ${rec.name}: ${what}`);
    try {
      return fn(mgr);
    } catch (e) {
      throw host.wrapError(rec, id, what, e);
    }
  };
  return {
    phase,
    live,
    setupOnly(what) {
      live(what);
      if (!rec.inSetup) throw phase(what, "allowed only during setup");
    },
    job(what, id, fn) {
      live(what);
      return finishing(what, id, fn);
    },
    finishing,
    current(what, id) {
      if (host.currentFrame(id, rec) !== undefined) return;
      const why = "allowed only for the current job (inside this plugin's callback for it)";
      throw host.wrapError(rec, id, what, new JobtapError(ErrorCode.PLUGIN_PHASE, why));
    },
  };
}

/** Builds the context for one plugin record. */
export function createContext(host: ContextHost, rec: PluginRecord): PluginContext {
  const g = guards(host, rec);
  const log = (level: "debug" | "info" | "warn" | "error") => (m: string) =>
    host.report(level, `${rec.name}: ${m}`, rec.name);
  return {
    name: rec.name,
    conf: rec.conf,
    get owner() {
      return host.owner;
    },
    hookUsers: host.hookUsers,
    clock: pluginClock(host, rec),
    log: { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") },
    state: pluginState(host, rec, g.live),
    reject: (message) => ({ reject: message ?? "" }),
    priorityUnavailable: () => ({ priority: PRIORITY_UNAVAILABLE }),
    ...setupApi(host, rec, g),
    ...jobApi(host, rec, g),
    ...auxApi(host, rec, g),
    ...adsApi(host, rec, g.live),
  };
}

/**
 * The manager's clock as a plugin sees it: a timer callback that throws (or whose Promise
 * rejects) is logged with the plugin's name instead of taking the manager down.
 */
function pluginClock(host: ContextHost, rec: PluginRecord): Clock {
  const report = (e: unknown) =>
    host.report("warn", `plugin ${rec.name}: timer callback failed: ${msg(e)}`, rec.name);
  return {
    now: () => host.clock.now(),
    setTimeout(fn, ms) {
      const h = host.clock.setTimeout(() => {
        rec.timers.delete(h);
        try {
          const r = fn() as unknown;
          if (r instanceof Promise) r.catch(report);
        } catch (e) {
          report(e);
        }
      }, ms);
      if (rec.removed) host.clock.clearTimeout(h);
      else rec.timers.add(h);
      return h;
    },
    clearTimeout: (h) => {
      rec.timers.delete(h);
      host.clock.clearTimeout(h);
    },
  };
}

type SetupApi = Pick<PluginContext, "on" | "setLoadSortOrder" | "serviceRegister" | "onRemove" | "registerExecutor">;

/** Calls that shape the plugin itself: allowed during setup only (onRemove: any time). */
function setupApi(host: ContextHost, rec: PluginRecord, g: Guards): SetupApi {
  return {
    on(topic, handler) {
      g.setupOnly("on");
      if (host.withoutExplain === true && topic === "job.explain") return;
      const matches = compileTopicGlob(topic);
      rec.handlers.push({ glob: topic, matches, fn: handler as AnyHandler, firstArgOnly: takesOnlyFirstArg(handler) });
      host.handlersChanged();
    },
    setLoadSortOrder(order) {
      g.setupOnly("setLoadSortOrder");
      if (order !== "none" && order !== "state" && order !== "-state") {
        throw g.phase("setLoadSortOrder", `"${String(order)}" is not none, state or -state`);
      }
      rec.sortOrder = order;
    },
    serviceRegister(method, handler, opts) {
      g.setupOnly("serviceRegister");
      if (!/^[A-Za-z0-9_-]+$/.test(method) || rec.services.has(method)) {
        throw g.phase("serviceRegister", `"${method}" is not a valid, unused method name`);
      }
      rec.services.set(method, { method, guests: opts?.guests === true, handler });
    },
    onRemove(fn) {
      g.live("onRemove");
      rec.onRemove.push(fn);
    },
    registerExecutor(name, executor) {
      g.setupOnly("registerExecutor");
      const m = host.manager(`plugin ${rec.name}: registerExecutor`);
      if (typeof m.registerExecutor !== "function") {
        throw g.phase("registerExecutor", "this job manager has no executor registry");
      }
      try {
        rec.onRemove.push(m.registerExecutor(name, executor, rec.name));
      } catch (e) {
        const code = isJobtapError(e) ? e.code : ErrorCode.INVALID_ARGUMENT;
        throw new JobtapError(code, `plugin ${rec.name}: registerExecutor: ${msg(e)}`, { plugin: rec.name });
      }
    },
  };
}

type JobApi = Omit<
  PluginContext,
  | keyof SetupApi
  | "auxGet" | "auxSet" | "auxDelete"
  | keyof AdsApi
  | "name" | "conf" | "owner" | "hookUsers" | "log" | "clock" | "state" | "reject" | "priorityUnavailable"
>;

/** The Flux job API: each call checked, then handed to the manager. */
function jobApi(host: ContextHost, rec: PluginRecord, g: Guards): JobApi {
  const { job } = g;
  return {
    reprioritizeJob: (id, prio) => job("reprioritizeJob", id, (m) => m.reprioritizeJob(id, prio)),
    reprioritizeAll() {
      g.live("reprioritizeAll");
      host.manager(`plugin ${rec.name}: reprioritizeAll`).reprioritizeAll();
    },
    // No live() check: a plugin's onRemove must be able to start the queues it stopped.
    setQueueStarted(queue, started) {
      queuePort(host, rec, "setQueueStarted").setQueueStarted!(queue, started);
    },
    setDefaultQueue(queue) {
      queuePort(host, rec, "setDefaultQueue").setDefaultQueue!(queue);
    },
    dependencyAdd: (id, d) => job("dependencyAdd", id, (m) => m.dependencyAdd(id, d)),
    dependencyRemove: (id, d) => job("dependencyRemove", id, (m) => m.dependencyRemove(id, d)),
    // The plugin's name travels with the event: if the manager cannot apply it later (the
    // job moved on meanwhile), its error names who posted it.
    raiseException: (id, type, severity, note) =>
      job("raiseException", id, (m) => m.raiseException(id, type, severity, note, `plugin ${rec.name}`)),
    postEvent: (id, name, context) => job("postEvent", id, (m) => m.postEvent(id, name, context, `plugin ${rec.name}`)),
    subscribe(id) {
      job("subscribe", id, (m) => activeOrThrow(m, id));
      host.subscribe(rec, id);
    },
    unsubscribe: (id) => host.unsubscribe(rec, id),
    prologStart(id, description) {
      g.current("prologStart", id);
      job("prologStart", id, (m) => m.prologStart(id, nonEmpty(description)));
    },
    // No live() check for the two finishes: a removed plugin (its onRemove, or a hook that
    // ends after it) must still close the prologs and epilogs it opened, or the job waits for ever.
    prologFinish: (id, d, status) =>
      g.finishing("prologFinish", id, (m) => m.prologFinish(id, nonEmpty(d), status)),
    epilogStart(id, description) {
      g.current("epilogStart", id);
      job("epilogStart", id, (m) => m.epilogStart(id, nonEmpty(description)));
    },
    epilogFinish: (id, d, status) =>
      g.finishing("epilogFinish", id, (m) => m.epilogFinish(id, nonEmpty(d), status)),
    lookup(id) {
      g.live("lookup");
      return host.shield.args(host.manager(`plugin ${rec.name}: lookup`).lookup(id));
    },
    jobResult: (id) => job("jobResult", id, (m) => m.jobResult(id)),
    eventPosted: (id, name) => job("eventPosted", id, (m) => m.eventPosted(id, name)),
    execSaved: (id) => job("execSaved", id, (m) => m.execSaved(id)),
    setFlag: (id, flag) => job("setFlag", id, (m) => m.setFlag(id, flag)),
    jobspecUpdate(id, updates) {
      const frame = host.currentFrame(id, rec);
      if (frame === undefined) return job("jobspecUpdate", id, (m) => m.jobspecUpdate(id, updates));
      // Staged, yet checked now as Flux does, so the caller gets the error, not the log.
      job("jobspecUpdate", id, (m) => checkJobspecUpdate(formatJobId(id), activeOrThrow(m, id).state, updates));
      frame.staged = { ...frame.staged, ...updates };
    },
    jobIds(state) {
      g.live("jobIds");
      const m = host.manager(`plugin ${rec.name}: jobIds`);
      if (typeof m.jobIds !== "function") throw g.phase("jobIds", "this job manager cannot list jobs");
      return m.jobIds(state);
    },
    submit(jobspec, opts = {}) {
      g.live("submit");
      const m = host.manager(`plugin ${rec.name}: submit`);
      if (typeof m.submitJob !== "function") return Promise.reject(g.phase("submit", "this job manager cannot submit for plugins"));
      try {
        return m.submitJob(jobspec, opts);
      } catch (e) {
        return Promise.reject(host.wrapError(rec, opts.environmentFrom, "submit", e));
      }
    },
    call(topic, args = {}, id) {
      g.live("call");
      if (topic.startsWith("job.")) {
        throw g.phase("call", `"${topic}": custom topics must not start with "job."`);
      }
      if (id !== undefined) job("call", id, (m) => knownOrThrow(m, id));
      return host.callCustom(topic, args, id);
    },
  };
}

/** The manager, if it offers queue start/stop (bare fakes do not). */
function queuePort(host: ContextHost, rec: PluginRecord, what: "setQueueStarted" | "setDefaultQueue"): ManagerPort {
  const m = host.manager(`plugin ${rec.name}: ${what}`);
  if (typeof m[what] !== "function") {
    throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `plugin ${rec.name}: ${what}: this job manager has no queue start/stop`);
  }
  return m;
}

/** Per-plugin, per-job values with destructors (Flux's job aux). */
function auxApi(
  host: ContextHost,
  rec: PluginRecord,
  g: Guards,
): Pick<PluginContext, "auxGet" | "auxSet" | "auxDelete"> {
  return {
    auxGet: <T>(id: JobId, key: string) => rec.aux.get(id)?.get(key)?.value as T | undefined,
    auxSet(id, key, value, destructor) {
      g.job("auxSet", id, (m) => knownOrThrow(m, id));
      auxSet(host, rec, id, key, value, destructor as ((v: unknown) => void) | undefined);
    },
    auxDelete: (id, key) => auxDelete(host, rec, id, key),
  };
}

function nonEmpty(description: string): string {
  if (typeof description !== "string" || description.length === 0) {
    throw new JobtapError(ErrorCode.INVALID_ARGUMENT, "a description is required");
  }
  return description;
}

function knownOrThrow(m: ManagerPort, id: JobId): void {
  if (m.lookup(id) === undefined) throw new JobtapError(ErrorCode.UNKNOWN_JOB, "unknown job");
}

function activeOrThrow(m: ManagerPort, id: JobId): JobArgs {
  const args = m.lookup(id);
  if (args === undefined) throw new JobtapError(ErrorCode.UNKNOWN_JOB, "unknown job");
  if (args.state === "INACTIVE") throw new JobtapError(ErrorCode.JOB_INACTIVE, "job is inactive");
  return args;
}

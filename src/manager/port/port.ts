/**
 * The seam between the job manager (src/manager) and the jobtap plugin host (src/plugins).
 *
 * The manager decides *when* a topic is called (spec flux-jobtap §3: the per-event order of
 * work, submit, restart) and what the merged OUT values *do* (priority, annotations, R,
 * errmsg). The host decides *who* is called and how (load order, first matching handler per
 * plugin, stop at the first error, OUT merge, async handlers and their deadline, labels).
 *
 * Until a plugin host is attached the manager uses `NO_PLUGINS`, which matches nothing.
 *
 * Ownership: the manager side (ManagerPort) is implemented in src/manager; the host side
 * (PluginPort) in src/plugins. Change this file only in ways both sides can follow.
 */
import type { JobId } from "../base/ids.js";
import type { JobResult, State } from "../base/states.js";
import type { Clock } from "../base/clock.js";
import type { JobTopic, OutOf } from "./topics.js";
import type { Executor } from "./executor.js";
import type { ClassAd } from "../../classad/classad.js";
import type { JobArgs, Jobspec } from "./records.js";
import type { Reason } from "./reasons.js";

/**
 * Merged OUT of a stack call (spec §4.2). The manager interprets the keys per topic:
 * `priority` (>=0 reprioritize, PRIORITY_UNAVAILABLE keeps the job waiting), `annotations`
 * (deep-merged, null deletes), `R` (job.state.sched only), `errmsg`, and for
 * `job.update.<key>`: `validated`, `feasibility`, `updates`.
 */
export type StackOut = Record<string, unknown>;

/** Sentinel for "priority unavailable" (Flux's -2). Never stored. */
export const PRIORITY_UNAVAILABLE = -2;

/** The outcome of one stack call; `O` is the topic's merged OUT (`OutOf<topic>`). */
export interface StackResult<O = StackOut> {
  /** Number of plugins that had a matching handler (0: nobody listens). */
  handled: number;
  /** Set when a handler failed or was rejected; the stack stopped at that plugin. */
  error?: { plugin: string; message: string };
  out: O;
}

/**
 * Where a published ad is merged. `ad: "machine"` merges into the machine ad; otherwise
 * (the default) into slot ads: those listed in `slotIds` (all when absent), then, the first
 * selector that is set deciding (HTCondor's order): `constraint` true with MY = the
 * published ad and TARGET = the slot ad as merged so far; the slot's `Name` starting with
 * `namePrefix` (so `slot1` also selects `slot10`); `slotTypeId` equal to `SlotTypeID`;
 * `slotId` equal to `SlotID`. No selector: every listed slot.
 */
export interface AdTarget {
  ad?: "machine" | "slots";
  slotIds?: readonly number[];
  constraint?: string;
  namePrefix?: string;
  slotTypeId?: number;
  slotId?: number;
}

/** The host's machine and slot ads as the plugin host reaches them (ads/hostads.ts implements it). */
export interface HostAdsApi {
  publish(source: string, ad: ClassAd, target?: AdTarget): void;
  withdraw(source: string): boolean;
  sources(): string[];
  machineAd(): ClassAd;
  slotAds(): ClassAd[];
  slotAd(id: number): ClassAd | undefined;
}

/** What the manager calls on the plugin host. */
export interface PluginPort {
  /** True if any loaded plugin has a handler whose glob matches `topic`; false means the
   *  manager builds no args at all (Flux's short cut). Must be cheap (cached per topic). */
  matches(topic: string): boolean;
  /**
   * A Flux stack call of a job topic over all plugins in load order. Returns synchronously
   * when every handler that ran was synchronous; otherwise a Promise, and the manager holds
   * that job's mailbox until it settles (other jobs keep moving). The OUT is merged and
   * checked by the host per the topic table (src/manager/port/topics.ts): the manager applies it.
   */
  callJob<T extends JobTopic>(topic: T, args: JobArgs): StackResult<OutOf<T>> | Promise<StackResult<OutOf<T>>>;
  /** `job.event.<name>` to the job's subscribers only; errors are logged, never thrown. */
  notifyEvent(args: JobArgs): void | Promise<void>;
  /** The job left the active set (after job.destroy): drop its aux data and subscriptions. */
  jobGone(id: JobId): void;
  /** Optional fast check: does any plugin subscribe to this job's events (with `event`: and
   *  handle `job.event.<event>`)? When absent the manager falls back to
   *  `matches("job.event.<name>")` before calling notifyEvent. */
  hasSubscribers?(id: JobId, event?: string): boolean;
  /** Optional: `job why`'s host-level reasons (an isolated plugin restarting that holds
   *  the job); asked only when someone asks why, whatever `job.explain` handlers exist. */
  hostReasons?(args: JobArgs): Reason[];
  /** Optional: restart has re-run every job's restart callbacks (including async ones);
   *  called before the restart actions, the first scheduling pass and reprioritize-all. */
  replayDone?(): void | Promise<void>;
  /** Optional: the manager is closing; release every plugin's timers, aux data and
   *  handles (Flux destroys its plugins with the job manager). Called with scheduling
   *  paused, before the last batch is written. */
  close?(): void | Promise<void>;
}

/**
 * The plugin port used when no host is attached. It behaves as a host holding only
 * `.priority-default` (priority = urgency), so a bare manager still schedules jobs; every
 * other topic has no listener.
 */
export const NO_PLUGINS: PluginPort = {
  matches: (topic) => topic === "job.state.priority" || topic === "job.priority.get",
  callJob: <T extends JobTopic>(topic: T, args: JobArgs): StackResult<OutOf<T>> =>
    topic === "job.state.priority" || topic === "job.priority.get"
      ? { handled: 1, out: { priority: args.urgency } as never }
      : { handled: 0, out: {} as never },
  notifyEvent: () => undefined,
  jobGone: () => undefined,
};

/**
 * What the plugin host may ask of the manager: the Flux jobtap API's manager half
 * (spec §5). Every method validates the job id (UNKNOWN_JOB / JOB_INACTIVE) and the state
 * it is allowed in (BAD_STATE) and throws a JobtapError with a message naming the job;
 * the host adds the plugin name and topic. Event posts obey the per-job mailbox rules.
 */
export interface ManagerPort {
  /** Standard IN args for an active job or one still in the inactive cache. */
  lookup(id: JobId): JobArgs | undefined;
  /**
   * The job ad (HTCondor ClassAd view, src/manager/ads/jobad.ts) of an active or inactive job,
   * undefined if the job is unknown. Frozen and shared: `clone()` it to change it. Cached per
   * job until its next event, so calling it for every job at every poll is cheap.
   * Optional: bare fakes lack it.
   */
  jobAd?(id: JobId): ClassAd | undefined;
  /** The host's machine ad and slot ads, and publishing into them (hostads.ts). Optional. */
  readonly hostAds?: HostAdsApi;
  /**
   * The active jobs plugins have been told of, for the runtime-load and restart replays: past
   * NEW, or in NEW with their admission at job.new or later (accepted, as Flux's job.new
   * follows acceptance), the job whose job.new is under way included.
   */
  activeJobs(): JobArgs[];
  /**
   * Ids of the active jobs in `state` (all active states past NEW when absent), in
   * submission order. Cheap: no IN args are built. Optional: bare fakes lack it.
   */
  jobIds?(state?: State): JobId[];
  /**
   * Submits a new job on a plugin's behalf (the job router's routed copy), as user
   * `userid`; resolves with its id once its eventlog is durable. `environmentFrom` copies
   * the (redacted from plugins) environment of that active job into the new jobspec.
   * Optional: bare fakes lack it.
   */
  submitJob?(jobspec: Jobspec, opts: PluginSubmitOptions): Promise<JobId>;
  /** `origin` (e.g. "plugin NAME") is named in the error if the event cannot be applied. */
  postEvent(id: JobId, name: string, context?: Record<string, unknown>, origin?: string): void;
  raiseException(id: JobId, type: string, severity: number, note: string, origin?: string): void;
  /** NEW or DEPEND only. See docs/semantics.md for the duplicate rule. */
  dependencyAdd(id: JobId, description: string): void;
  dependencyRemove(id: JobId, description: string): void;
  /** No-op unless the job is in PRIORITY or SCHED; applies hold/expedite overrides. */
  reprioritizeJob(id: JobId, priority: number): void;
  /** `job.priority.get` over every PRIORITY/SCHED job, then one reorder of the queue. */
  reprioritizeAll(): void;
  jobResult(id: JobId): JobResult;
  eventPosted(id: JobId, name: string): boolean;
  /** The merged `exec-state` contexts of a job (old stores' main eventlog, then its exec eventlog); {} if none. */
  execSaved(id: JobId): Record<string, unknown>;
  setFlag(id: JobId, flag: "alloc-bypass" | "debug" | "immutable"): void;
  /** Posts one `jobspec-update` (keys start with attributes., resources. or tasks.). */
  jobspecUpdate(id: JobId, updates: Record<string, unknown>): void;
  prologStart(id: JobId, description: string): void;
  prologFinish(id: JobId, description: string, status: number): void;
  epilogStart(id: JobId, description: string): void;
  epilogFinish(id: JobId, description: string, status: number): void;
  /**
   * Queue start/stop (Flux §2.3/§9): jobs of a stopped queue stay in SCHED with no alloc
   * request (pending requests are withdrawn); starting it sends them. A job's queue is
   * `attributes.system.queue`, else the default queue. Optional: bare fakes lack it.
   */
  setQueueStarted?(queue: string, started: boolean): void;
  /** The queue of jobs whose jobspec names none (undefined: such jobs are in no queue). */
  setDefaultQueue?(queue: string | undefined): void;
  /** The whole instance configuration (what `conf.update` receives). */
  config(): Record<string, unknown>;
  /** The manager's clock, handed to plugins as `p.clock` (simulated in tests). Added by
   *  the plugin host; when absent the host uses the clock it was given or the real one. */
  readonly clock?: Clock;
  /** Persistent per-plugin key/value state kept in the job store (survives restarts).
   *  Values are JSON-serializable. Added by the job manager; absent in bare fakes. */
  readonly pluginState?: PluginStateStore;
  /** The instance owner's uid, handed to plugins as `p.owner`. Optional: when absent the
   *  host uses its own `owner` option, else this process's uid. */
  readonly owner?: number;
  /**
   * Registers a named executor (`p.registerExecutor`); throws INVALID_ARGUMENT for a bad
   * or taken name. Returns the unregister function. Optional: bare fakes lack it.
   */
  registerExecutor?(name: string, executor: Executor, plugin?: string): () => void;
}

/** Options of a plugin's submit (`p.submit`). */
export interface PluginSubmitOptions {
  /** The submitting user (default: the instance owner). */
  userid?: number;
  urgency?: number;
  /** An active job whose `attributes.system.environment` the new job gets. */
  environmentFrom?: JobId;
}

/** Per-plugin key/value state in the job store; writes are durable when the call returns. */
export interface PluginStateStore {
  get(plugin: string, key: string): unknown;
  set(plugin: string, key: string, value: unknown): void;
  delete(plugin: string, key: string): void;
  keys(plugin: string): string[];
}

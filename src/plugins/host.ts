/**
 * The jobtap plugin host: the plugin list in load order, the per-topic match cache, the
 * "current job" frames, subscriptions, and the PluginPort the job manager calls.
 *
 * Runtime control (load, remove, list, query, config reload, services) lives in control.ts;
 * the per-plugin API in context.ts; the stack loop in stack.ts.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { ErrorCode, JobtapError, isJobtapError } from "../errors.js";
import type { Clock } from "../manager/clock.js";
import type { JobId } from "../manager/ids.js";
import { formatJobId } from "../manager/ids.js";
import type {
  JobArgs,
  ManagerPort,
  PluginPort,
  PluginStateStore,
  StackResult,
} from "../manager/port.js";
import type { PluginRecord } from "./record.js";
import { destroyJobAux } from "./record.js";
import { JobspecShield } from "./shield.js";
import type { DeadlineTimer, Frame, HandlerRecord, StackEntry, StackHost } from "./stack.js";
import { runStack, stackCall } from "./stack.js";
import { isStateTopic } from "./topics.js";

/** Host log sink. `plugin` is set for messages a plugin logged or caused. */
export type HostLogger = (
  level: "debug" | "info" | "warn" | "error",
  message: string,
  plugin?: string,
) => void;

/** Default per-plugin deadline for async handlers (30 s). */
export const DEFAULT_DEADLINE_MS = 30_000;

/** Options of a PluginHost. */
export interface HostOptions {
  clock: Clock;
  log?: HostLogger;
  /** Default deadline for async handlers; a plugin's TOML `deadline` overrides it. */
  deadlineMs?: number;
  /** The whole instance configuration, as `conf.update` receives it. */
  config?: Record<string, unknown>;
  /** The instance owner's uid (`p.owner`); default: the manager's, else this process's. */
  owner?: number;
}

const NO_ENTRIES: readonly StackEntry[] = [];
/** Bound on cached topics (job.update.<key>, job.event.<name> are open-ended). */
const MAX_CACHED_TOPICS = 4096;

/** The plugin host. One per job manager; no module-level state. */
export class PluginHost implements PluginPort, StackHost {
  readonly clock: Clock;
  readonly log: HostLogger;
  readonly defaultDeadlineMs: number;
  readonly timer: DeadlineTimer;
  /** Plugins in load order (builtins first). */
  plugins: PluginRecord[] = [];
  config: Record<string, unknown>;
  private mgr: ManagerPort | undefined;
  private readonly ownerOption: number | undefined;
  private matchCache = new Map<string, readonly StackEntry[]>();
  /** Callbacks running synchronously, innermost last (Flux's current-job stack). */
  private frames: Frame[] = [];
  /** Callbacks whose Promise has not settled: their job stays current for the plugin. */
  private pendingFrames = new Set<Frame>();
  /** Per job: the plugins subscribed to its `job.event.*`. */
  private subscribers = new Map<JobId, Set<PluginRecord>>();
  private memoryState: PluginStateStore | undefined;
  private inspectors = new Set<(record: HandlerRecord) => void>();
  /** The service handler running (across its awaits), so context errors name it. */
  private readonly serviceScope = new AsyncLocalStorage<{ plugin: PluginRecord; method: string }>();
  /** Hands plugins deep-frozen jobspecs (see shield.ts). */
  readonly shield = new JobspecShield();
  /** True while the inspection stream has listeners (the stack checks it per handler). */
  inspecting = false;

  constructor(opts: HostOptions) {
    this.clock = opts.clock;
    this.log = opts.log ?? defaultLogger;
    this.defaultDeadlineMs = opts.deadlineMs ?? DEFAULT_DEADLINE_MS;
    this.config = opts.config ?? {};
    this.ownerOption = opts.owner;
    this.timer = (ms, onExpire) => {
      const h = this.clock.setTimeout(onExpire, ms);
      return () => this.clock.clearTimeout(h);
    };
  }

  /** Connects the job manager; called once, before any plugin touches a job. */
  attach(mgr: ManagerPort): void {
    this.mgr = mgr;
  }

  /** The manager, or a PLUGIN_PHASE error naming who asked too early. */
  manager(who: string): ManagerPort {
    if (this.mgr === undefined) {
      throw new JobtapError(ErrorCode.PLUGIN_PHASE, `${who}: no job manager is attached yet`);
    }
    return this.mgr;
  }

  /** The manager's per-plugin state store, or an in-memory one (fakes, no manager). */
  stateStore(): PluginStateStore {
    return this.mgr?.pluginState ?? (this.memoryState ??= memoryStateStore());
  }

  /**
   * The instance owner's uid: the host's `owner` option, else the manager's (ManagerPort
   * `owner`), else the uid of this process (what a manager defaults to).
   */
  get owner(): number {
    return this.ownerOption ?? this.mgr?.owner ?? process.getuid?.() ?? 0;
  }

  /** True once a manager is attached. */
  hasManager(): boolean {
    return this.mgr !== undefined;
  }

  // --- PluginPort ------------------------------------------------------------------------

  /** Cheap: one cached lookup per topic. */
  matches(topic: string): boolean {
    return this.entriesFor(topic).length > 0;
  }

  /** A Flux stack call over all plugins; sync unless a handler returned a Promise. */
  callJob(topic: string, args: JobArgs): StackResult | Promise<StackResult> {
    const entries = this.entriesFor(topic);
    if (entries.length === 0) return { handled: 0, out: {} };
    return runStack(this, stackCall(topic, this.shield.args(args), args.id, entries));
  }

  /** `job.event.<name>` to the job's subscribers in load order; failures are logged. */
  notifyEvent(args: JobArgs): void | Promise<void> {
    const subs = this.subscribers.get(args.id);
    if (subs === undefined || args.entry === undefined) return;
    const topic = `job.event.${args.entry.name}`;
    const entries = this.entriesFor(topic).filter((e) => subs.has(e.plugin));
    if (entries.length === 0) return;
    const r = runStack(this, stackCall(topic, this.shield.args(args), args.id, entries));
    if (r instanceof Promise) return r.then(() => undefined);
  }

  /** `plugin.replay-done` (reason `restart`) to every plugin; errors are logged. */
  async replayDone(): Promise<void> {
    await this.replayDoneTo(this.entriesFor("plugin.replay-done"), "restart");
  }

  /** Runs `plugin.replay-done` over the given entries (a notify stack call, no job). */
  protected async replayDoneTo(entries: readonly StackEntry[], reason: "restart" | "load") {
    if (entries.length === 0) return;
    await runStack(this, stackCall("plugin.replay-done", this.shield.args({ reason }), undefined, entries));
  }

  /** True if some plugin subscribed to this job's events (the manager's fast check). */
  hasSubscribers(id: JobId): boolean {
    return this.subscribers.has(id);
  }

  /** Drops the job's aux data (running destructors) and its subscriptions. */
  jobGone(id: JobId): void {
    this.subscribers.delete(id);
    for (const p of this.plugins) {
      destroyJobAux(p, id, (e) => this.report("warn", `${p.name}: aux destructor: ${msg(e)}`));
    }
  }

  // --- stack support ---------------------------------------------------------------------

  /** One entry per plugin that has a handler matching `topic`: its first match. */
  entriesFor(topic: string): readonly StackEntry[] {
    const hit = this.matchCache.get(topic);
    if (hit !== undefined) return hit;
    const entries: StackEntry[] = [];
    for (const plugin of this.plugins) {
      const h = plugin.handlers.find((e) => e.matches(topic));
      if (h !== undefined) entries.push({ plugin, fn: h.fn });
    }
    if (this.matchCache.size >= MAX_CACHED_TOPICS) this.matchCache.clear();
    const result = entries.length === 0 ? NO_ENTRIES : entries;
    this.matchCache.set(topic, result);
    return result;
  }

  /** Must be called whenever the plugin list or a plugin's handlers change. */
  invalidate(): void {
    this.matchCache.clear();
  }

  enter(id: JobId | undefined, plugin: PluginRecord, topic: string): Frame | undefined {
    if (id === undefined) return undefined;
    const frame: Frame = { id, plugin, topic, staged: undefined };
    this.frames.push(frame);
    return frame;
  }

  /** The handler returned a Promise: its frame stays current until it settles. */
  suspend(frame: Frame | undefined): void {
    if (frame === undefined) return;
    this.dropFrame(frame);
    this.pendingFrames.add(frame);
  }

  leave(frame: Frame | undefined): void {
    if (frame === undefined) return;
    if (!this.pendingFrames.delete(frame)) this.dropFrame(frame);
    if (frame.staged !== undefined) this.postStaged(frame);
  }

  private dropFrame(frame: Frame): void {
    const stack = this.frames;
    if (stack[stack.length - 1] === frame) stack.pop();
    else {
      const i = stack.lastIndexOf(frame);
      if (i >= 0) stack.splice(i, 1);
    }
  }

  /** The innermost callback running for `id` (on behalf of `plugin`), if any. */
  currentFrame(id: JobId, plugin?: PluginRecord): Frame | undefined {
    const match = (f: Frame) => f.id === id && (plugin === undefined || f.plugin === plugin);
    for (let i = this.frames.length - 1; i >= 0; i--) {
      if (match(this.frames[i]!)) return this.frames[i];
    }
    for (const f of this.pendingFrames) if (match(f)) return f;
    return undefined;
  }

  /** Flux posts staged jobspec updates as one event after each plugin's callback. */
  private postStaged(frame: Frame): void {
    const updates = frame.staged!;
    frame.staged = undefined;
    try {
      this.manager(frame.plugin.name).jobspecUpdate(frame.id, updates);
    } catch (e) {
      this.report("warn", `${this.label(frame.plugin, frame.topic, frame.id)}: ${msg(e)}`);
    }
  }

  badPriority(plugin: PluginRecord, topic: string, id: JobId | undefined, value: unknown): void {
    const what = `priority must be an integer, got ${JSON.stringify(value) ?? typeof value}`;
    this.report("warn", `${this.label(plugin, topic, id)}: ${what}`);
    // Flux raises a non-fatal exception typed by the topic on the generic job topics, so
    // the stuck job is visible; job.priority.get only logs and keeps the current priority.
    if (id === undefined || topic === "job.priority.get" || !topic.startsWith("job.")) return;
    if (!isStateTopic(topic) && topic !== "job.new") return;
    try {
      const note = `${plugin.name}: ${what} (job may be stuck in PRIORITY state)`;
      this.manager(plugin.name).raiseException(id, topic, 4, note);
    } catch (e) {
      this.report("warn", `${this.label(plugin, topic, id)}: ${msg(e)}`);
    }
  }

  report(level: "debug" | "info" | "warn" | "error", message: string, plugin?: string): void {
    this.log(level, message, plugin);
  }

  label(plugin: PluginRecord, topic: string, id: JobId | undefined): string {
    const job = id === undefined ? "" : `: job ${formatJobId(id)}`;
    return `plugin ${plugin.name}: ${topic}${job}`;
  }

  // --- inspection stream (beyond Flux) -------------------------------------------------

  /**
   * Listens to every handler call: topic, plugin, job, duration, outcome. Costs nothing
   * while nobody listens. Returns the function that stops listening.
   */
  inspect(listener: (record: HandlerRecord) => void): () => void {
    this.inspectors.add(listener);
    this.inspecting = true;
    return () => {
      this.inspectors.delete(listener);
      this.inspecting = this.inspectors.size > 0;
    };
  }

  inspected(record: HandlerRecord): void {
    for (const listener of this.inspectors) {
      try {
        listener(record);
      } catch (e) {
        this.report("warn", `inspection listener failed: ${msg(e)}`);
      }
    }
  }

  // --- subscriptions ---------------------------------------------------------------------

  subscribe(plugin: PluginRecord, id: JobId): void {
    let subs = this.subscribers.get(id);
    if (subs === undefined) this.subscribers.set(id, (subs = new Set()));
    subs.add(plugin);
  }

  unsubscribe(plugin: PluginRecord, id: JobId): void {
    const subs = this.subscribers.get(id);
    if (subs === undefined) return;
    subs.delete(plugin);
    if (subs.size === 0) this.subscribers.delete(id);
  }

  /** Drops every subscription a plugin holds (plugin removal). */
  unsubscribeAll(plugin: PluginRecord): void {
    for (const id of [...this.subscribers.keys()]) this.unsubscribe(plugin, id);
  }

  /** Runs a stack call of a custom topic (`p.call`), the job (if any) being current. */
  callCustom(topic: string, args: Record<string, unknown>, id: JobId | undefined) {
    const entries = this.entriesFor(topic);
    if (entries.length === 0) return { handled: 0, out: {} };
    return runStack(this, stackCall(topic, args, id, entries));
  }

  /** Runs a plugin's service handler; context calls made from it are labelled with it. */
  inService<T>(plugin: PluginRecord, method: string, fn: () => T): T {
    return this.serviceScope.run({ plugin, method }, fn);
  }

  /** Labels a ManagerPort failure with plugin, topic and job, keeping its code. */
  wrapError(plugin: PluginRecord, id: JobId | undefined, what: string, e: unknown): JobtapError {
    const frame = id === undefined ? undefined : this.currentFrame(id);
    const service = this.serviceScope.getStore();
    const inService = service?.plugin === plugin ? `service ${service.method}` : undefined;
    const topic = frame?.topic ?? inService ?? "(outside a callback)";
    const code = isJobtapError(e) ? e.code : ErrorCode.PLUGIN_CALL;
    return new JobtapError(code, `${this.label(plugin, topic, id)}: ${what}: ${msg(e)}`, {
      plugin: plugin.name,
      topic,
    });
  }
}

/** The message of anything thrown. */
export function msg(e: unknown): string {
  return e instanceof Error || isJobtapError(e) ? e.message : String(e);
}

function defaultLogger(level: string, message: string): void {
  if (level === "warn" || level === "error") process.stderr.write(`jobtap: ${message}\n`);
}

/** Plugin state kept in memory only (lost on restart): for hosts without a job store. */
function memoryStateStore(): PluginStateStore {
  const data = new Map<string, Map<string, unknown>>();
  const of = (plugin: string) => {
    let m = data.get(plugin);
    if (m === undefined) data.set(plugin, (m = new Map()));
    return m;
  };
  return {
    get: (plugin, key) => data.get(plugin)?.get(key),
    set: (plugin, key, value) => void of(plugin).set(key, structuredClone(value)),
    delete: (plugin, key) => void data.get(plugin)?.delete(key),
    keys: (plugin) => [...(data.get(plugin)?.keys() ?? [])],
  };
}

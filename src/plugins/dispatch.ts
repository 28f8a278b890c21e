/**
 * The dispatcher: runs stack calls (stack.ts) over what the registry says a topic reaches,
 * keeps Flux's "current job" frames (including those of async handlers that have not
 * settled), the per-job `job.event.*` subscriptions and the inspection stream. It is the
 * PluginPort half of the host: the manager's calls land here.
 *
 * Everything a stack call takes and returns is plain data (args in, StackResult out), so a
 * worker-thread boundary can sit between the dispatcher and the plugins later.
 */
import type { Clock } from "../manager/base/clock.js";
import type { JobId } from "../manager/base/ids.js";
import type { ManagerPort, StackOut, StackResult } from "../manager/port/port.js";
import type { JobArgs } from "../manager/port/records.js";
import type { JobTopic, OutOf } from "../manager/port/topics.js";
import type { PluginRecord } from "./record.js";
import { destroyJobAux } from "./record.js";
import { handlerOf, type PluginRegistry, type TopicHandlers } from "./registry.js";
import { JobspecShield } from "./shield.js";
import type { Frame, HandlerRecord, StackEntry, StackHost } from "./stack.js";
import { bothCells, type CellOf, type HandlerTimes, type HandlerTiming } from "./timing.js";
import { label, runStack } from "./stack.js";
import { topicRule } from "../manager/port/topics.js";

/** Host log sink. `plugin` is set for messages a plugin logged or caused. */
export type HostLogger = (
  level: "debug" | "info" | "warn" | "error",
  message: string,
  plugin?: string,
) => void;

/** What the dispatcher needs from the host around it. */
export interface DispatcherDeps {
  clock: Clock;
  log: HostLogger;
  /** The attached manager, if any (raising exceptions, posting staged jobspec updates). */
  manager(): ManagerPort | undefined;
}

type Result<O = StackOut> = StackResult<O> | Promise<StackResult<O>>;

const NOTHING: StackResult = { handled: 0, out: {} };

/** Frames kept for reuse: enough for any realistic nesting of synchronous stack calls. */
const SPARE_FRAMES = 64;

/** Runs stack calls; one per host. */
export class Dispatcher {
  /** Hands plugins deep-frozen jobspecs (see shield.ts). */
  readonly shield = new JobspecShield();
  /** Callbacks running synchronously, innermost last (Flux's current-job stack). */
  private readonly frames: Frame[] = [];
  /** Callbacks whose Promise has not settled: their job stays current for the plugin. */
  private readonly pendingFrames = new Set<Frame>();
  /** Per job: the plugins subscribed to its `job.event.*`. */
  private readonly subscribers = new Map<JobId, Set<PluginRecord>>();
  private readonly inspectors = new Set<(record: HandlerRecord) => void>();
  private readonly timers = new Set<HandlerTiming>();
  private readonly cellProviders = new Set<CellOf>();
  /** The stack engine's view of this dispatcher. */
  private readonly stack: StackHost & { inspecting: boolean; timing: HandlerTimes | undefined };

  constructor(
    private readonly registry: PluginRegistry,
    private readonly deps: DispatcherDeps,
  ) {
    this.stack = this.stackHost();
  }

  // --- the manager's calls (PluginPort) --------------------------------------------------

  /** Cheap: one cached lookup per topic. */
  matches(topic: string): boolean {
    return this.registry.handlers(topic).entries.length > 0;
  }

  /** A Flux stack call over all plugins; sync unless a handler returned a Promise. */
  callJob<T extends JobTopic>(topic: T, args: JobArgs): Result<OutOf<T>> {
    const to = this.registry.handlers(topic);
    if (to.entries.length === 0) return NOTHING as StackResult<OutOf<T>>;
    return this.run(to, to.entries, this.shield.args(args), args.id) as Result<OutOf<T>>;
  }

  /**
   * `job.event.<name>` to the job's subscribers in the order they subscribed, as Flux keeps
   * a job's subscriber list; like any Flux stack call it stops at the first subscriber that
   * fails (logged, and the event itself stands).
   */
  notifyEvent(args: JobArgs): void | Promise<void> {
    const subs = this.subscribers.get(args.id);
    if (subs === undefined || args.entry === undefined) return;
    const to = this.registry.eventHandlers(args.entry.name);
    let entries: StackEntry[] | undefined;
    for (const plugin of subs) {
      const entry = entryOf(to.entries, plugin);
      if (entry === undefined) continue;
      if (entries === undefined) entries = [entry];
      else entries.push(entry);
    }
    if (entries === undefined) return;
    const r = this.run(to, entries, this.shield.args(args), args.id);
    if (r instanceof Promise) return r.then(() => undefined);
  }

  /** `plugin.replay-done` (reason `restart`) to every plugin; errors are logged. */
  async replayDone(): Promise<void> {
    const to = this.registry.handlers("plugin.replay-done");
    if (to.entries.length > 0) await this.run(to, to.entries, { reason: "restart" }, undefined);
  }

  /**
   * True if some plugin subscribed to this job's events (with `event`: and one of them
   * handles `job.event.<event>`): the manager's check before it builds the args.
   */
  hasSubscribers(id: JobId, event?: string): boolean {
    // Asked for every event of every job; most jobs have no subscriber, and a lookup by a
    // bigint id costs a hash computed outside the JIT's inline paths.
    if (this.subscribers.size === 0) return false;
    const subs = this.subscribers.get(id);
    if (subs === undefined) return false;
    if (event === undefined) return true;
    const entries = this.registry.eventHandlers(event).entries;
    for (const plugin of subs) if (entryOf(entries, plugin) !== undefined) return true;
    return false;
  }

  /** Drops the job's aux data (running destructors) and its subscriptions. */
  jobGone(id: JobId): void {
    // No lookup by bigint id in an empty map (the common case: no job has subscribers).
    if (this.subscribers.size > 0) this.subscribers.delete(id);
    // An index loop: for-of makes an iterator result per plugin per job until optimized.
    const plugins = this.registry.plugins;
    for (let i = 0; i < plugins.length; i++) {
      const p = plugins[i]!;
      // Most plugins hold no aux data at all: no lookup, no closure per plugin per job.
      if (p.aux.size === 0 || !p.aux.has(id)) continue;
      destroyJobAux(p, id, (e) => this.report("warn", `${p.name}: aux destructor: ${msg(e)}`));
    }
  }

  // --- the host's and the plugins' calls -------------------------------------------------

  /** Runs one plugin's first matching handler for a topic; undefined if it has none. */
  callOne(rec: PluginRecord, topic: string, args: unknown, id: JobId | undefined): Result | undefined {
    const entry = handlerOf(rec, topic);
    if (entry === undefined) return undefined;
    return this.run({ topic, rule: topicRule(topic) }, [entry], this.shield.args(args), id);
  }

  /** Runs a stack call of a custom topic (`p.call`), the job (if any) being current. */
  callCustom(topic: string, args: Record<string, unknown>, id: JobId | undefined): Result {
    const to = this.registry.handlers(topic);
    if (to.entries.length === 0) return { handled: 0, out: {} };
    const r = this.run(to, to.entries, args, id);
    // The caller is a plugin, which may keep or change what it gets: never a shared result.
    return Object.isFrozen(r) ? { handled: (r as StackResult).handled, out: {} } : r;
  }

  private run(to: Pick<TopicHandlers, "topic" | "rule">, entries: readonly StackEntry[], args: unknown, id: JobId | undefined): Result {
    return runStack(this.stack, to, entries, args, id);
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

  /**
   * Listens to every handler call: topic, plugin, job, duration, outcome. Costs nothing
   * while nobody listens. Returns the function that stops listening.
   */
  inspect(listener: (record: HandlerRecord) => void): () => void {
    this.inspectors.add(listener);
    this.stack.inspecting = true;
    return () => {
      this.inspectors.delete(listener);
      this.stack.inspecting = this.inspectors.size > 0;
    };
  }

  /**
   * Gives each timed handler call to `listener` (the dashboard's statistics): the sample of
   * timing.ts, one stack call of a topic in SAMPLE_EVERY; no record is made. Returns the function that stops
   * this listener.
   */
  time(listener: HandlerTiming): () => void {
    this.timers.add(listener);
    this.retime();
    return () => {
      this.timers.delete(listener);
      this.retime();
    };
  }

  /**
   * Counts every handler call into cells, timing a sample (the metrics' histogram; see
   * timing.ts): `cellOf` is asked once per (plugin, topic) stack entry and the entry keeps
   * the cell, so a call costs a count, with no lookup. Returns the function that stops it.
   */
  timeCells(cellOf: CellOf): () => void {
    this.cellProviders.add(cellOf);
    this.retime();
    return () => {
      this.cellProviders.delete(cellOf);
      this.retime();
    };
  }

  /** One listener or provider is used directly; several through one that calls each. */
  private retime(): void {
    const all = [...this.timers];
    const each: HandlerTiming | undefined =
      all.length <= 1 ? all[0] : (plugin, topic, ms, failed) => {
        for (const t of all) t(plugin, topic, ms, failed);
      };
    const providers = [...this.cellProviders];
    const cellOf: CellOf | undefined = providers.length <= 1 ? providers[0] : (plugin, topic) => bothCells(providers.map((p) => p(plugin, topic)));
    this.stack.timing = each === undefined && cellOf === undefined ? undefined : { cellOf, each };
    // The cached stack entries keep the cells of the providers they were timed with.
    this.registry.invalidate();
  }

  private report(level: "debug" | "info" | "warn" | "error", message: string): void {
    this.deps.log(level, message);
  }

  // --- the stack engine's view ---------------------------------------------------------

  private stackHost(): StackHost & { inspecting: boolean; timing: HandlerTimes | undefined } {
    const { clock } = this.deps;
    const inspectors = this.inspectors;
    const spare: Frame[] = [];
    return {
      timer: (ms, onExpire) => {
        const h = clock.setTimeout(onExpire, ms);
        return () => clock.clearTimeout(h);
      },
      enter: (id, plugin, topic) => {
        if (id === undefined) return undefined;
        const frame = spare.pop();
        if (frame === undefined) return this.pushFrame({ id, plugin, topic, staged: undefined, pending: false });
        frame.id = id;
        frame.plugin = plugin;
        frame.topic = topic;
        return this.pushFrame(frame);
      },
      suspend: (frame) => {
        if (frame === undefined) return;
        this.dropFrame(frame);
        frame.pending = true;
        this.pendingFrames.add(frame);
      },
      leave: (frame) => {
        if (frame === undefined) return;
        if (frame.pending) {
          frame.pending = false;
          this.pendingFrames.delete(frame);
        } else this.dropFrame(frame);
        if (frame.staged !== undefined) this.postStaged(frame);
        // Nothing refers to a frame once its handler has returned: the next handler call
        // reuses it (each stack call with a job would otherwise allocate one).
        if (spare.length < SPARE_FRAMES) spare.push(frame);
      },
      raise: (plugin, topic, id, note) => {
        try {
          this.deps.manager()?.raiseException(id, topic, 4, note, `plugin ${plugin.name}`);
        } catch (e) {
          this.report("warn", `${label(plugin, topic, id)}: ${msg(e)}`);
        }
      },
      report: (level, message) => this.report(level, message),
      // A plain field, read once per handler call: kept up to date by inspect().
      inspecting: false,
      timing: undefined,
      inspected: (record) => {
        for (const listener of inspectors) {
          try {
            listener(record);
          } catch (e) {
            this.report("warn", `inspection listener failed: ${msg(e)}`);
          }
        }
      },
    };
  }

  private pushFrame(frame: Frame): Frame {
    this.frames.push(frame);
    return frame;
  }

  private dropFrame(frame: Frame): void {
    const stack = this.frames;
    if (stack[stack.length - 1] === frame) stack.pop();
    else {
      const i = stack.lastIndexOf(frame);
      if (i >= 0) stack.splice(i, 1);
    }
  }

  /** Flux posts staged jobspec updates as one event after each plugin's callback. */
  private postStaged(frame: Frame): void {
    const updates = frame.staged!;
    frame.staged = undefined;
    try {
      this.deps.manager()?.jobspecUpdate(frame.id, updates);
    } catch (e) {
      this.report("warn", `${label(frame.plugin, frame.topic, frame.id)}: ${msg(e)}`);
    }
  }
}

/** The plugin's entry among a topic's entries, if it handles the topic. */
function entryOf(entries: readonly StackEntry[], plugin: PluginRecord): StackEntry | undefined {
  for (let i = 0; i < entries.length; i++) if (entries[i]!.plugin === plugin) return entries[i];
  return undefined;
}

/** The message of anything thrown. */
export function msg(e: unknown): string {
  return e instanceof Error || (typeof e === "object" && e !== null && "message" in e)
    ? String((e as { message: unknown }).message)
    : String(e);
}

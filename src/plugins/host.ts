/**
 * The jobtap plugin host (`JobtapHost`): the plugins' lifecycle — load, setup, replay,
 * remove, list, query, config reload, plugin services, isolated workers' restarts (spec
 * flux-jobtap §7.3–§7.5) — over three parts, each with one job:
 * - the registry (registry.ts): load order, names, which handler a topic reaches;
 * - the dispatcher (dispatch.ts): stack calls, OUT merging, deadlines, current-job frames;
 *   the manager's PluginPort calls are forwarded to it;
 * - the context factory (context.ts): the per-plugin API, reaching the host only through
 *   the `ContextHost` (host-context.ts) built for each host.
 * This is what the daemon calls.
 */
import { ErrorCode, JobtapError, isJobtapError } from "../errors.js";
import type { Clock } from "../manager/base/clock.js";
import type { JobId } from "../manager/base/ids.js";
import type { HookLauncher } from "../hooks/types.js";
import { launcherHookUsers } from "./hook-users.js";
import type { ManagerPort, PluginPort, StackResult } from "../manager/port/port.js";
import type { JobArgs } from "../manager/port/records.js";
import type { JobTopic, OutOf } from "../manager/port/topics.js";
import type { BuiltinEntry, ShippedEntry } from "./builtins.js";
import { readPluginConfig, type PluginDirective } from "./config.js";
import { createContext, type ContextHost, type PluginContext } from "./context.js";
import { Dispatcher, msg, type HostLogger } from "./dispatch.js";
import { fileListName, importPlugin, ownListName, pluginShape, resolvePlugin } from "./loader.js";
import {
  DEFAULT_HEAP_MB,
  DEFAULT_RESTART,
  isolatedDefinition,
  type IsolateOptions,
  type Isolation,
} from "./isolate.js";
import { probationVerdict, type MissedDeadline } from "./isolate-probation.js";
import type { PluginDefinition, PluginModule } from "./loader.js";
import type { PluginRecord, ServiceCred } from "./record.js";
import { destroyJobAux, newRecord, pluginName, restartSurvived, runOnRemove, takeOwnName } from "./record.js";
import { contextHost, defaultLogger } from "./host-context.js";
import { PluginRegistry, handlerOf } from "./registry.js";
import { restartingReason } from "./isolate-why.js";
import type { Reason } from "../manager/port/reasons.js";
import { replayJobs, replayLate, type ReplayHost } from "./replay.js";
import { settleWithin, type DeadlineTimer, type HandlerRecord, type HandlerTiming, type CellOf } from "./stack.js";
import { isThenable } from "../manager/base/steps.js";

/** Default per-plugin deadline for async handlers (30 s). */
export const DEFAULT_DEADLINE_MS = 30_000;

/** How long the manager's close waits for removed plugins' onRemove promises (real ms). */
export const CLOSE_WAIT_MS = 10_000;

/** Resolves once every promise settled, or after `ms` of real time (an unref'd timer). */
function settledOrAfter(ps: Array<Promise<unknown>>, ms: number): Promise<void> {
  if (ps.length === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    t.unref();
    void Promise.allSettled(ps).then(() => {
      clearTimeout(t);
      resolve();
    });
  });
}

/** Options of a JobtapHost. */
export interface JobtapHostOptions {
  clock: Clock;
  log?: HostLogger;
  /** Default deadline for async handlers; a plugin's TOML `deadline` overrides it. */
  deadlineMs?: number;
  /** The whole instance configuration, as `conf.update` receives it. */
  config?: Record<string, unknown>;
  /** The instance owner's uid (`p.owner`); default: the manager's, else this process's. */
  owner?: number;
  /** The builtin table (jobtap's: BUILTINS of plugins-builtin/index.ts); default: none. */
  builtins?: readonly BuiltinEntry[];
  /** Plugins shipped but not loaded by default, found by plain name after the search
   *  path (jobtap's: SHIPPED of plugins-builtin/index.ts); default: none. */
  shipped?: readonly ShippedEntry[];
  /** Directories searched for plugin names that are not paths. */
  searchPath?: readonly string[];
  /** The privileged launcher of a multi-user instance: hooks run as other users through it (`p.hookUsers`). */
  hookLauncher?: HookLauncher;
  /** Bench only: no `job.explain` handler is registered (bench why's "nobody asks" A/B). */
  withoutExplain?: boolean;
}

/** Per-load options. */
export interface LoadOptions {
  /** Deadline for this plugin's async handlers (ms); default: the host's. */
  deadlineMs?: number;
  /** Replay active jobs to the new plugin (runtime load). False while the manager starts. */
  replay?: boolean;
  /** Run the plugin in a worker thread (isolate.ts); plugin files only. */
  isolate?: boolean | IsolateOptions;
}

/** One row of `list`. */
export interface PluginInfo {
  name: string;
  path: string;
  builtin: boolean;
  /** Set for an isolated plugin: `running`, `restarting`, or `failed` (unloaded by the
   *  restart policy; listed until removed or loaded again, with `reason`). */
  isolated?: "running" | "restarting" | "failed";
  reason?: string;
}

/** The plugin host: one per job manager; no module-level state. */
export class JobtapHost implements PluginPort {
  readonly builtins: readonly BuiltinEntry[];
  readonly shipped: readonly ShippedEntry[];
  searchPath: readonly string[];
  /** The `[job-manager] plugins` directives last applied (see reapplyPlugins). */
  appliedDirectives: readonly PluginDirective[] = [];
  /** The whole instance configuration last accepted by every plugin (`conf.update`). */
  config: Record<string, unknown>;
  private readonly registry = new PluginRegistry();
  private readonly dispatcher: Dispatcher;
  private readonly contextHost: ContextHost;
  private readonly clock: Clock;
  private readonly log: HostLogger;
  private readonly defaultDeadlineMs: number;
  private mgr: ManagerPort | undefined;
  private loads = 0;
  /** Isolated plugins the restart policy unloaded: listed until removed or loaded again. */
  private readonly failed = new Map<string, PluginInfo>();
  /** Removed plugins' onRemove promises not settled yet (close waits for them). */
  private readonly ending = new Set<Promise<void>>();
  /** Deadline timers on the host's clock (setup). */
  private readonly timer: DeadlineTimer = (ms, onExpire) => {
    const h = this.clock.setTimeout(onExpire, ms);
    return () => this.clock.clearTimeout(h);
  };

  constructor(opts: JobtapHostOptions) {
    this.builtins = opts.builtins ?? [];
    this.shipped = opts.shipped ?? [];
    this.searchPath = opts.searchPath ?? [];
    this.config = opts.config ?? {};
    this.clock = opts.clock;
    this.log = opts.log ?? defaultLogger;
    this.defaultDeadlineMs = opts.deadlineMs ?? DEFAULT_DEADLINE_MS;
    const manager = (who: string) => this.manager(who);
    this.dispatcher = new Dispatcher(this.registry, {
      clock: opts.clock,
      log: this.log,
      manager: () => this.manager("plugin host"),
    });
    this.contextHost = contextHost(this.dispatcher, this.registry, {
      clock: opts.clock,
      log: this.log,
      manager,
      owner: () => opts.owner ?? this.mgr?.owner ?? process.getuid?.() ?? 0,
      stateStore: () => this.mgr?.pluginState,
      hookUsers: opts.hookLauncher ? launcherHookUsers(opts.hookLauncher, () => this.mgr) : undefined,
      withoutExplain: opts.withoutExplain === true,
    });
  }

  /** Connects the job manager; called once, before any plugin touches a job. */
  attach(mgr: ManagerPort): void {
    this.mgr = mgr;
  }

  /** The instance owner's uid: the `owner` option, else the manager's, else this process's. */
  get owner(): number {
    return this.contextHost.owner;
  }

  /** Logs through the host's logger (`plugin`: the plugin the message is about). */
  report(level: "debug" | "info" | "warn" | "error", message: string, plugin?: string): void {
    this.log(level, message, plugin);
  }

  private manager(who: string): ManagerPort {
    if (this.mgr === undefined) {
      throw new JobtapError(ErrorCode.PLUGIN_PHASE, `${who}: no job manager is attached yet`);
    }
    return this.mgr;
  }

  // --- PluginPort: the manager's calls, forwarded to the dispatcher ---------------------

  matches(topic: string): boolean {
    return this.dispatcher.matches(topic);
  }

  callJob<T extends JobTopic>(topic: T, args: JobArgs): StackResult<OutOf<T>> | Promise<StackResult<OutOf<T>>> {
    return this.dispatcher.callJob(topic, args);
  }

  notifyEvent(args: JobArgs): void | Promise<void> {
    return this.dispatcher.notifyEvent(args);
  }

  hasSubscribers(id: JobId, event?: string): boolean {
    return this.dispatcher.hasSubscribers(id, event);
  }

  jobGone(id: JobId): void {
    this.dispatcher.jobGone(id);
  }

  replayDone(): Promise<void> {
    return this.dispatcher.replayDone();
  }

  /**
   * Listens to every handler call: topic, plugin, job, duration, outcome. Costs nothing
   * while nobody listens. Returns the function that stops listening.
   */
  inspect(listener: (record: HandlerRecord) => void): () => void {
    return this.dispatcher.inspect(listener);
  }

  /** Times every handler call without making records (the dashboard; see Dispatcher.time). */
  time(listener: HandlerTiming): () => void {
    return this.dispatcher.time(listener);
  }

  /**
   * `job why` at host level: for each isolated plugin whose worker is restarting and that
   * holds something on this job, one reason (isolate-why.ts), in load order.
   */
  hostReasons(args: JobArgs): Reason[] {
    const out: Reason[] = [];
    const now = this.clock.now();
    for (const p of this.registry.plugins) {
      if (p.isolation === undefined) continue;
      const priority = handlerOf(p, "job.priority.get") !== undefined || handlerOf(p, "job.state.priority") !== undefined;
      const r = restartingReason(p.name, p.isolation, args, priority, now);
      if (r !== undefined) out.push(r);
    }
    return out;
  }

  /** Times every handler call into per-(plugin, topic) cells (the metrics; see Dispatcher.timeCells). */
  timeCells(cellOf: CellOf): () => void {
    return this.dispatcher.timeCells(cellOf);
  }

  /** Calls sent to isolated plugins' workers and not yet answered (tests, diagnostics). */
  isolatedInFlight(): number {
    let n = 0;
    for (const p of this.registry.plugins) n += p.isolation?.inFlight() ?? 0;
    return n;
  }

  /** The innermost callback running for `id` on behalf of `plugin` (tests, diagnostics). */
  currentTopic(id: JobId, plugin: string): string | undefined {
    const rec = this.find(plugin);
    return rec === undefined ? undefined : this.dispatcher.currentFrame(id, rec)?.topic;
  }

  // --- control ---------------------------------------------------------------------------

  /**
   * Loads the builtins in table order (manager start; no replay): those marked
   * `afterConfig` only when `afterConfig` is true, the others only when it is not.
   */
  async loadBuiltins(afterConfig = false): Promise<void> {
    for (const b of this.builtins) {
      if ((b.afterConfig === true) === afterConfig) await this.load(b.name, {}, { replay: false });
    }
  }

  /**
   * Loads a plugin: resolve, import, setup, `conf.update` (must pass), append to the load
   * order, then (runtime load) replay active jobs to it and reprioritize all.
   */
  async load(
    nameOrPath: string,
    conf: Record<string, unknown> = {},
    opts: LoadOptions = {},
  ): Promise<PluginInfo> {
    const source = resolvePlugin(nameOrPath, this.builtins, this.searchPath, this.shipped);
    const listName = source.kind === "file" ? fileListName(source.path) : source.name;
    this.checkUnique(listName);
    if (opts.isolate !== undefined && opts.isolate !== false) {
      if (source.kind !== "file") {
        throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `${listName}: builtin and shipped plugins run in the manager's thread; isolate applies to plugin files`);
      }
      const o = opts.isolate === true ? {} : opts.isolate;
      const iso: Isolation = {
        heapMb: o.heapMb ?? DEFAULT_HEAP_MB,
        restart: o.restart ?? DEFAULT_RESTART,
        deaths: [],
        restarts: 0,
        state: "running",
        inFlight: () => 0,
        started: () => [],
        dependencies: new Map(),
      };
      return this.install(listName, source.path, { default: this.isolated(listName, source.path, conf, opts, iso) }, conf, opts, iso);
    }
    const mod = await importPlugin(source, ++this.loads);
    const path = source.kind === "file" ? source.path : source.kind;
    return this.install(listName, path, mod, conf, opts);
  }

  /**
   * Loads a plugin from an in-memory definition (tests, embedding): same sequence as
   * `load`, with `name` as its list name and path "inline".
   */
  async loadDefinition(
    name: string,
    definition: PluginDefinition,
    conf: Record<string, unknown> = {},
    opts: LoadOptions = {},
  ): Promise<PluginInfo> {
    this.checkUnique(name);
    return this.install(name, "inline", { default: definition }, conf, opts);
  }

  private checkUnique(listName: string): void {
    if (this.find(listName) !== undefined) {
      throw new JobtapError(ErrorCode.PLUGIN_ALREADY_LOADED, `${listName} already loaded`);
    }
  }

  private async install(
    listName: string,
    path: string,
    mod: PluginModule,
    conf: Record<string, unknown>,
    opts: LoadOptions,
    iso?: Isolation,
    restartOf?: PluginRecord,
  ): Promise<PluginInfo> {
    const file = !["builtin", "shipped", "inline"].includes(path);
    const shape = pluginShape(mod, file ? path : listName);
    // A file plugin is listed by the name its module exports, if any (an isolated one's
    // module is read in its worker: its name is known after setup).
    const name = file ? ownListName(listName, shape.name, path) : listName;
    if (name !== listName && restartOf === undefined) this.checkUnique(name);
    const deadline = opts.deadlineMs ?? this.defaultDeadlineMs;
    const rec = newRecord(name, shape.name, path, conf, deadline);
    if (iso !== undefined) {
      rec.isolation = iso;
      // The worker reports the module's own name before its setup: what setup keeps under
      // the plugin's name (persistent state) is then under the name it is listed by.
      // A name that is no plugin name, or one already loaded, is refused once setup is done
      // (below); meanwhile the plugin keeps its file name, so it touches no other's state.
      iso.named = (own) => {
        try {
          const ownName = pluginName(ownListName(listName, own, path));
          if (restartOf === undefined && ownName !== listName && this.find(ownName) !== undefined) return;
          takeOwnName(rec, listName, own, path);
        } catch {
          // refused below
        }
      };
    }
    try {
      await this.setup(rec, shape.setup);
      if (iso?.ownName !== undefined) takeOwnName(rec, listName, iso.ownName, path);
      await this.confUpdate(rec, this.config, "load");
      // setup may have awaited while another load finished
      if (restartOf === undefined) this.checkUnique(rec.name);
      // A restarted worker takes calls again only once its replay is answered: until then
      // the dead record stays in place and its handlers fail fast, so a worker that hangs
      // again in the replay costs no job a second deadline.
      else {
        const replayed = await this.replayRestart(rec, iso!);
        // Jobs that reached job.new meanwhile (their call went to the dead record) are
        // replayed too; the last check finds none and falls through to the swap below
        // synchronously, so no job's job.new can slip between them.
        for (let late = this.replayLate(rec, replayed); late !== undefined; late = this.replayLate(rec, replayed)) {
          await late;
          restartSurvived(iso!);
        }
      }
    } catch (e) {
      // A failed load, or the loser of two concurrent loads of one plugin, leaves nothing
      // behind: its timers, aux data, subscriptions and services go, its onRemove runs.
      this.unload(rec);
      throw e;
    }
    if (restartOf === undefined) {
      this.registry.add(rec);
      // Loaded again (isolated or not): no longer listed as failed.
      this.failed.delete(listName);
      this.failed.delete(rec.name);
    }
    else {
      this.registry.replace(restartOf, rec);
      this.unload(restartOf);
      iso!.state = "running";
      this.reprioritize(rec);
      return { name: rec.name, path: rec.path, builtin: rec.builtin };
    }
    if (opts.replay !== false && this.mgr !== undefined) await this.replay(rec);
    // No manager, no jobs to replay: the replay is trivially done.
    else if (opts.replay !== false) await this.callOne(rec, "plugin.replay-done", { reason: "load" }, undefined);
    return { name: rec.name, path: rec.path, builtin: rec.builtin };
  }

  /** The in-process stand-in of an isolated plugin (isolate.ts). */
  private isolated(listName: string, path: string, conf: Record<string, unknown>, opts: LoadOptions, iso: Isolation): PluginDefinition {
    const spec = {
      path,
      name: listName,
      conf,
      owner: this.owner,
      multiUser: this.contextHost.hookUsers !== undefined,
      heapMb: iso.heapMb,
      deadlineMs: opts.deadlineMs ?? this.defaultDeadlineMs,
      seq: ++this.loads,
    };
    const died = (reason: string, missed?: MissedDeadline) => {
      // By its isolation, not its name: a module that exports a name is listed by it.
      const rec = this.registry.plugins.find((p) => p.isolation === iso);
      if (rec?.isolation !== iso) return;
      if (iso.state === "running") this.isolatedDied(rec, reason, opts, missed);
      // While a restart is under way its own failure counts: replayRestart reports it.
      else iso.restartDeath ??= { reason, missed };
    };
    return isolatedDefinition(spec, { clock: this.clock, log: this.log, died }, iso);
  }

  /**
   * An isolated plugin's worker died: restart it (a fresh worker, its persistent state
   * kept, job.new replayed to it as a runtime load does) unless it died more than its
   * restart policy's `max` times within the window, or missed a deadline on probation
   * (isolate-probation.ts); then it is unloaded and listed as failed.
   * One restart at a time: a failed restart counts as the next death.
   */
  private isolatedDied(rec: PluginRecord, reason: string, opts: LoadOptions, missed?: MissedDeadline): void {
    const iso = rec.isolation!;
    const now = this.clock.now();
    iso.deaths = iso.deaths.filter((t) => now - t < iso.restart.windowMs);
    iso.deaths.push(now);
    const onProbation = probationVerdict(iso, now, reason, missed);
    if (iso.deaths.length > iso.restart.max || onProbation !== undefined) {
      const why = iso.deaths.length > iso.restart.max
        ? `isolated worker died ${iso.deaths.length} times within ${iso.restart.windowMs / 1000} s (restart max ${iso.restart.max}); last: ${reason}`
        : onProbation!;
      this.unload(rec);
      this.failed.set(rec.name, { name: rec.name, path: rec.path, builtin: false, isolated: "failed", reason: why });
      this.report("error", `plugin ${rec.name}: unloaded: ${why}`, rec.name);
      this.abandonDependencies(rec, iso, why);
      return;
    }
    iso.state = "restarting";
    iso.restartSince = now;
    iso.restarts++;
    iso.restartDeath = undefined;
    this.report("warn", `plugin ${rec.name}: restarting its worker (${iso.deaths.length} of ${iso.restart.max} restarts within ${iso.restart.windowMs / 1000} s)`, rec.name);
    const def = this.isolated(rec.name, rec.path, rec.conf, opts, iso);
    this.install(rec.name, rec.path, { default: def }, rec.conf, { ...opts, replay: true }, iso, rec).catch((e: unknown) => {
      const death = iso.restartDeath ?? { reason: `restart failed: ${msg(e)}` };
      if (this.find(rec.name) === rec) this.isolatedDied(rec, death.reason, opts, death.missed);
    });
  }

  /**
   * A restarted worker's replay (reprioritizing waits for the swap); fails if it died
   * meanwhile. Returns the ids replayed.
   */
  private async replayRestart(rec: PluginRecord, iso: Isolation): Promise<Set<JobId>> {
    const replayed = new Set<JobId>();
    if (this.mgr !== undefined) await replayJobs(this.replayHost(), rec, replayed);
    else await this.callOne(rec, "plugin.replay-done", { reason: "load" }, undefined);
    restartSurvived(iso);
    return replayed;
  }

  /** The jobs `rec`'s restart replay has not covered yet: undefined (synchronously) if none. */
  private replayLate(rec: PluginRecord, replayed: Set<JobId>): Promise<void> | undefined {
    return this.mgr === undefined ? undefined : replayLate(this.replayHost(), rec, replayed);
  }

  private replayHost(): ReplayHost {
    return { mgr: this.manager("replay"), callOne: (rec, topic, args, id) => this.callOne(rec, topic, args, id) };
  }

  /**
   * An isolated plugin unloaded for good leaves the dependencies it added unresolvable:
   * each job still waiting in DEPEND on one gets a fatal `dependency` exception naming it
   * and why the plugin was given up (what `job why` of that job then says).
   */
  private abandonDependencies(rec: PluginRecord, iso: Isolation, why: string): void {
    const mgr = this.mgr;
    for (const { id, description } of iso.dependencies.values()) {
      if (mgr?.lookup(id)?.state !== "DEPEND") continue;
      try {
        mgr.raiseException(id, "dependency", 0, `plugin ${rec.name} was unloaded: dependency "${description}" can never be resolved; ${why}`);
      } catch (e) {
        this.report("warn", `plugin ${rec.name}: dependency "${description}": ${msg(e)}`, rec.name);
      }
    }
    iso.dependencies.clear();
  }

  /** Runs setup; an async one must settle within the plugin's handler deadline. */
  private async setup(rec: PluginRecord, setup: (p: PluginContext) => unknown) {
    rec.inSetup = true;
    try {
      const r = setup(createContext(this.contextHost, rec));
      if (isThenable(r)) await settleWithin(this.timer, rec.deadlineMs, r, () => setupExpired(rec));
    } catch (e) {
      const code = isJobtapError(e) ? e.code : ErrorCode.PLUGIN_LOAD;
      throw new JobtapError(code, `${rec.name}: setup failed: ${msg(e)}`, { plugin: rec.name });
    } finally {
      rec.inSetup = false;
    }
  }

  /** Calls `conf.update` on one plugin; a failure throws (and fails the load or reload). */
  private async confUpdate(rec: PluginRecord, conf: Record<string, unknown>, why: string) {
    const r = await this.callOne(rec, "conf.update", { conf }, undefined);
    if (r?.error !== undefined) {
      throw new JobtapError(ErrorCode.CONFIG, r.error.message, { plugin: rec.name });
    }
  }

  /** Runs one plugin's first matching handler for a topic; undefined if it has none. */
  private callOne(
    rec: PluginRecord,
    topic: string,
    args: unknown,
    id: JobId | undefined,
  ): StackResult | Promise<StackResult> | undefined {
    return this.dispatcher.callOne(rec, topic, args, id);
  }

  /** Runtime-load replay (spec §7.3 step 5–6); errors are logged, never thrown. */
  private async replay(rec: PluginRecord): Promise<void> {
    await replayJobs(this.replayHost(), rec, new Set());
    this.reprioritize(rec);
  }

  private reprioritize(rec: PluginRecord): void {
    if (this.mgr === undefined) return;
    try {
      this.mgr.reprioritizeAll();
    } catch (e) {
      this.report("warn", `${rec.name}: reprioritize after load: ${msg(e)}`, rec.name);
    }
  }

  /**
   * Removes plugins by exact name, glob (leading-period rule: `*` spares builtins) or `all`
   * (every non-builtin; never fails). Returns the removed names.
   */
  remove(nameOrGlob: string): string[] {
    const victims = this.registry.matching(nameOrGlob);
    const failed = [...this.failed.keys()].filter((n) => nameOrGlob === "all" || this.registry.matchesName(nameOrGlob, n));
    for (const n of failed) this.failed.delete(n);
    if (victims.length === 0 && failed.length === 0 && nameOrGlob !== "all") {
      throw new JobtapError(
        ErrorCode.PLUGIN_NOT_FOUND,
        `${nameOrGlob}: Failed to find plugin to remove`,
      );
    }
    for (const rec of victims) this.unload(rec);
    return [...victims.map((p) => p.name), ...failed];
  }

  private unload(rec: PluginRecord): void {
    rec.removed = true;
    this.registry.delete(rec);
    const report = (e: unknown) => this.report("warn", `${rec.name}: destructor: ${msg(e)}`);
    for (const id of [...rec.aux.keys()]) destroyJobAux(rec, id, report);
    for (const t of rec.timers) this.clock.clearTimeout(t);
    rec.timers.clear();
    this.dispatcher.unsubscribeAll(rec);
    rec.services.clear();
    for (const p of runOnRemove(rec, report)) {
      this.ending.add(p);
      void p.then(() => this.ending.delete(p));
    }
  }

  /**
   * The manager is closing: every plugin, builtins included, is unloaded in reverse load
   * order (aux destructors, timers, subscriptions, services, onRemove), so nothing a plugin
   * armed outlives the manager. What their onRemove functions still do (hook runners
   * killing their processes) is waited for, up to CLOSE_WAIT_MS of real time: hook
   * processes end in real time whatever the manager's clock, and one that ignores its
   * signals must not hold the close forever.
   */
  async close(): Promise<void> {
    for (const rec of [...this.registry.plugins].reverse()) this.unload(rec);
    await settledOrAfter([...this.ending], CLOSE_WAIT_MS);
  }

  /** Worker restarts of each loaded isolated plugin since it was loaded (for /metrics). */
  isolatedRestarts(): { plugin: string; restarts: number }[] {
    return this.registry.plugins.flatMap((p) => (p.isolation === undefined ? [] : [{ plugin: p.name, restarts: p.isolation.restarts }]));
  }

  /** Loaded plugins in load order; builtins only with `all`. */
  list(opts: { all?: boolean } = {}): PluginInfo[] {
    const loaded = this.registry.plugins
      .filter((p) => opts.all === true || !p.builtin)
      .map((p): PluginInfo => {
        const info = { name: p.name, path: p.path, builtin: p.builtin };
        return p.isolation === undefined ? info : { ...info, isolated: p.isolation.state };
      });
    return [...loaded, ...this.failed.values()];
  }

  /** `plugin.query`: `{ name, path }` merged with what the plugin returns. */
  async query(name: string): Promise<Record<string, unknown>> {
    const rec = this.find(name);
    if (rec === undefined) {
      throw new JobtapError(ErrorCode.PLUGIN_NOT_FOUND, `${name}: plugin not found`);
    }
    const r = await this.callOne(rec, "plugin.query", {}, undefined);
    if (r?.error !== undefined) {
      throw new JobtapError(ErrorCode.PLUGIN_CALL, `${name}: ${r.error.message}`);
    }
    const { errmsg: _, ...out } = r?.out ?? {};
    return { name: rec.name, path: rec.path, ...out };
  }

  /**
   * Config reload: `conf.update` on every plugin in load order. The first failure fails the
   * reload; plugins that already accepted the new config get the old one back, so the
   * instance keeps running with the old config. A malformed `[job-manager]` plugin section
   * fails the reload before any plugin is asked (the `plugins` list itself is not
   * re-applied, as in Flux).
   */
  async reloadConfig(config: Record<string, unknown>): Promise<void> {
    readPluginConfig(config);
    const old = this.config;
    const accepted: PluginRecord[] = [];
    for (const rec of [...this.registry.plugins]) {
      try {
        await this.confUpdate(rec, config, "reload");
        accepted.push(rec);
      } catch (e) {
        for (const a of accepted) await this.confUpdate(a, old, "rollback").catch(() => undefined);
        throw e;
      }
    }
    this.config = config;
  }

  /** Calls a service registered with `p.serviceRegister`; owner-only unless opened. A
   *  caller whose uid is the instance owner's (`owner`) has the owner role. */
  async callService(
    plugin: string,
    method: string,
    payload: unknown,
    cred: ServiceCred,
  ): Promise<unknown> {
    const rec = this.registry.findService(plugin);
    const svc = rec?.services.get(method);
    if (rec === undefined || svc === undefined) {
      throw new JobtapError(ErrorCode.PLUGIN_NOT_FOUND, `${plugin}.${method}: no such service`);
    }
    // The instance owner's uid is the owner role (Flux: FLUX_ROLE_OWNER), whatever the caller said.
    const who = cred.owner || cred.userid !== this.owner ? cred : { ...cred, owner: true };
    if (!svc.guests && !who.owner) {
      throw new JobtapError(ErrorCode.PERMISSION_DENIED, "Request requires owner credentials");
    }
    try {
      return await this.contextHost.inService(rec, method, () => svc.handler(payload, who));
    } catch (e) {
      const code = isJobtapError(e) ? e.code : ErrorCode.PLUGIN_CALL;
      throw new JobtapError(code, serviceLabel(rec.name, method, msg(e)));
    }
  }

  /** The plugin with this list name, if loaded. */
  find(name: string): PluginRecord | undefined {
    return this.registry.find(name);
  }

  /** Puts the builtins back first, in table order (after re-applying a plugin list). */
  sortBuiltinsFirst(): void {
    const rank = (rec: PluginRecord) => this.builtins.findIndex((b) => b.name === rec.name);
    this.registry.sortBy(rank);
  }
}

/** A setup that did not settle within the plugin's deadline. */
function setupExpired(rec: PluginRecord): JobtapError {
  const ms = rec.deadlineMs;
  return new JobtapError(ErrorCode.PLUGIN_DEADLINE, `setup did not settle within ${ms} ms`, { plugin: rec.name });
}

/** Labels a service failure once: a context error already names the plugin (and maybe
 *  the service); only the missing part is added. */
function serviceLabel(plugin: string, method: string, why: string): string {
  const label = `plugin ${plugin}: service ${method}: `;
  if (why.startsWith(label)) return why;
  const bare = `plugin ${plugin}: `;
  return label + (why.startsWith(bare) ? why.slice(bare.length) : why);
}

/**
 * Isolated plugins (beyond Flux): a plugin loaded with `isolate = true` runs in a worker
 * thread of its own tinypool pool. The host keeps an ordinary record for it in the load
 * order, whose handlers and services are proxies: each call is a message to the worker
 * (batched per turn of the event loop), and its result comes back as a settled Promise, so
 * the dispatcher treats it as an async handler — the job's mailbox holds until it settles,
 * which keeps per-job ordering, and the frame stays current so the plugin's context calls
 * pass the same phase checks as in process. Those calls (worker-protocol.ts) are run by the
 * host on the record's ordinary context, at the path their row of the method table
 * (context-methods.ts) names.
 *
 * Containment: a handler past its deadline (an endless loop included) gets the worker
 * terminated; `process.exit`, an uncaught error, a heap past `heapMb` end it. Every call in
 * flight then fails with a labelled error (the job gets what a failing handler of that topic
 * gets), the death is logged with the plugin's name and the host applies the restart policy.
 * After a missed deadline the plugin is on probation (isolate-probation.ts): shorter call
 * deadlines for a window, and a second miss unloads it.
 */
import { MessageChannel, type MessagePort, type Worker } from "node:worker_threads";
import Tinypool from "tinypool";
import { adFromJSON, adToJSON } from "../classad/json.js";
import { ErrorCode, JobtapError } from "../errors.js";
import { compiledSibling } from "../worker-file.js";
import type { Clock, TimerHandle } from "../manager/base/clock.js";
import { formatJobId, type JobId } from "../manager/base/ids.js";
import { isThenable } from "../manager/base/steps.js";
import type { CallInfo } from "../manager/port/topics.js";
import type { ClassAd } from "../classad/classad.js";
import type { PluginContext } from "./context.js";
import { CONTEXT_METHODS, memberAt, type MethodRow, type Returns, type SessionMethod } from "./context-methods.js";
import type { HostLogger } from "./dispatch.js";
import type { PluginDefinition } from "./loader.js";
import { callDeadline, type MissedDeadline } from "./isolate-probation.js";
import type { ServiceCred } from "./record.js";
import {
  errorData,
  type ContextMessage,
  type Outcome,
  type ReadyMessage,
  type SessionEnd,
  type ToHost,
  type ToWorker,
} from "./worker-protocol.js";

/** How often an isolated plugin's worker may die before the plugin is unloaded. */
export interface RestartPolicy {
  /** Restarts allowed within `windowMs`; one more death unloads the plugin. */
  max: number;
  windowMs: number;
  /**
   * After a missed deadline, the deadline of every call within `windowMs` (default 1 s,
   * capped at the plugin's deadline); missing it unloads the plugin (isolate-probation.ts).
   */
  probationMs?: number;
}

/** Per-load options of an isolated plugin (TOML: `isolate`, `heap-mb`, `restart`). */
export interface IsolateOptions {
  /** The worker's heap cap in MiB (V8's old generation). */
  heapMb?: number;
  restart?: RestartPolicy;
}

export const DEFAULT_HEAP_MB = 512;
export const DEFAULT_RESTART: RestartPolicy = { max: 3, windowMs: 60_000 };

/** The host's state of one isolated plugin; shared by the records of its restarts. */
export interface Isolation {
  heapMb: number;
  restart: RestartPolicy;
  /** Host-clock times of the worker's deaths within the restart window. */
  deaths: number[];
  /** Worker restarts since the plugin was loaded (the /metrics counter). */
  restarts: number;
  /** `restarting` from a death until the new worker's setup and replay are done. */
  state: "running" | "restarting";
  /** Why the worker of a restart under way died (its restart then fails and counts). */
  restartDeath?: { reason: string; missed?: MissedDeadline };
  /** Host-clock time of the last missed deadline: the plugin is on probation for a window. */
  lastMissed?: number;
  /** The plugin's own name (`{ name, setup }`), learnt from its worker before its setup. */
  ownName?: string;
  /** Told the plugin's own name as soon as the worker reports it (before its setup runs). */
  named?: (ownName: string) => void;
  /** Calls and services sent to the current worker and not yet answered. */
  inFlight(): number;
  /** Prologs and epilogs the current worker started and has not finished (`job why`). */
  started(): Iterable<StartedAction>;
  /** Host-clock time the restart under way began (`state` is `restarting`). */
  restartSince?: number;
  /**
   * Dependencies the plugin added and has not removed (key: job id and description):
   * kept across restarts (a restarted plugin may take them up again, `dependencyAdd` of
   * an outstanding one being a no-op); raised on when the plugin is unloaded for good.
   */
  dependencies: Map<string, { id: JobId; description: string }>;
}

/** A prolog or epilog an isolated plugin's worker started on a job. */
export interface StartedAction {
  kind: "prolog" | "epilog";
  id: JobId;
  description: string;
}

/** What a session needs from the host. */
export interface SessionHooks {
  clock: Clock;
  log: HostLogger;
  /** The worker died (not removed): apply the restart policy; `missed`: it hung in a call. */
  died(reason: string, missed?: MissedDeadline): void;
}

/** What identifies the plugin to its worker. */
export interface SessionSpec {
  path: string;
  name: string;
  conf: Record<string, unknown>;
  owner: number;
  multiUser?: boolean;
  heapMb: number;
  deadlineMs: number;
  seq: number;
}

interface Pending {
  what: string;
  resolve(v: unknown): void;
  reject(e: unknown): void;
  cancel: (() => void) | undefined;
}

/** Key under which the host tracks jobs whose aux values live in the worker. */
const AUX_TRACK = "\0isolated-aux";

/** The compiled worker module (see compiledSibling). */
function workerFile(): string {
  return compiledSibling(
    import.meta.url,
    "isolate-worker.js",
    (file) => new JobtapError(ErrorCode.PLUGIN_LOAD, `isolated plugins need the compiled worker ${file} (npm run build)`),
  );
}

/**
 * The in-process definition standing for an isolated plugin: its setup starts the worker,
 * waits for the plugin's own setup there, then registers one proxy per handler and service.
 */
export function isolatedDefinition(spec: SessionSpec, hooks: SessionHooks, iso: Isolation): PluginDefinition {
  return async (p) => {
    const session = new IsolatedSession(spec, hooks, iso);
    iso.inFlight = () => session.inFlight;
    iso.started = () => session.startedActions();
    p.onRemove(() => session.close());
    const ready = await session.start(p);
    if (ready.ownName !== undefined) iso.ownName = ready.ownName;
    ready.handlers.forEach((glob, i) => {
      p.on(glob, ((args: unknown, info: CallInfo) => session.call(i, args, info)) as never);
    });
    for (const s of ready.services) {
      p.serviceRegister(s.method, (payload, cred) => session.service(s.method, payload, cred), { guests: s.guests });
    }
    p.setLoadSortOrder(ready.sortOrder);
  };
}

/** One worker running one plugin, from start to removal or death. */
export class IsolatedSession {
  private pool: Tinypool | undefined;
  private port: MessagePort | undefined;
  private replyPort: MessagePort | undefined;
  private readonly signal = new Int32Array(new SharedArrayBuffer(4));
  private outbox: ToWorker[] = [];
  private flushing = false;
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  private ctx: PluginContext | undefined;
  private readonly timers = new Map<number, TimerHandle>();
  private ready: ((m: ReadyMessage) => void) | undefined;
  private loadFailed: ((e: unknown) => void) | undefined;
  /** Why the worker is gone (set once). */
  private ended: string | undefined;

  /** Prologs and epilogs this worker started and has not finished (key: kind, job, description). */
  private readonly started = new Map<string, StartedAction>();

  constructor(
    private readonly spec: SessionSpec,
    private readonly hooks: SessionHooks,
    private readonly iso: Isolation,
  ) {}

  /** Starts the worker and the plugin's setup in it; resolves when it is ready. */
  start(ctx: PluginContext): Promise<ReadyMessage> {
    this.ctx = ctx;
    const started = new Promise<ReadyMessage>((res, rej) => {
      this.ready = res;
      this.loadFailed = rej;
    });
    const channel = new MessageChannel();
    const reply = new MessageChannel();
    this.port = channel.port1;
    this.replyPort = reply.port1;
    this.port.on("message", (batch: ToHost[]) => this.receive(batch));
    const pool = (this.pool = new Tinypool({
      filename: workerFile(),
      minThreads: 1,
      maxThreads: 1,
      concurrentTasksPerWorker: 1,
      idleTimeout: 0,
      useAtomics: false,
      resourceLimits: { maxOldGenerationSizeMb: this.spec.heapMb },
    }));
    const { path, name, conf, owner, seq, multiUser } = this.spec;
    const task = { path, name, conf, owner, seq, multiUser, now: this.hooks.clock.now(), port: channel.port2, replyPort: reply.port2, signal: this.signal };
    pool.run(task, { transferList: [channel.port2, reply.port2] as never }).then(
      (end: SessionEnd) => void end,
      (e: unknown) => this.die(deathReason(e, this.spec.heapMb), ErrorCode.PLUGIN_CALL),
    );
    const thread = (pool.threads[0] as unknown as { thread?: Worker } | undefined)?.thread;
    thread?.once("error", (e) => this.die(deathReason(e, this.spec.heapMb), ErrorCode.PLUGIN_CALL));
    // After an error (heap cap, uncaught) comes an exit too: the error names the cause.
    thread?.once("exit", (code) => setImmediate(() => this.die(`the worker exited with code ${code}`, ErrorCode.PLUGIN_CALL)));
    return started;
  }

  /** Calls and services not yet answered (a setup under way counts as one). */
  get inFlight(): number {
    return this.pending.size + (this.ready === undefined ? 0 : 1);
  }

  /** Prologs and epilogs this worker started and has not finished. */
  startedActions(): Iterable<StartedAction> {
    return this.started.values();
  }

  /** Runs handler number `handler` in the worker. */
  call(handler: number, args: unknown, info: CallInfo): Promise<unknown> {
    return this.request(info.topic, (seq) => ({ t: "call", seq, handler, args, info }));
  }

  /** Runs a service in the worker. */
  service(method: string, payload: unknown, cred: ServiceCred): Promise<unknown> {
    return this.request(`service ${method}`, (seq) => ({ t: "service", seq, method, payload, cred }));
  }

  /** The plugin was removed (or its load failed): ends the session and the worker. */
  close(): void {
    if (this.ended !== undefined) return;
    this.ended = "the plugin was removed";
    this.failAll(ErrorCode.PLUGIN_CALL, "the plugin was removed");
    for (const h of this.timers.values()) this.hooks.clock.clearTimeout(h);
    if (this.ready !== undefined) {
      // Setup never finished (a failed load): nothing in the worker to run onRemove for.
      this.loadFailed?.(new JobtapError(ErrorCode.PLUGIN_LOAD, `${this.spec.name}: removed during setup`));
      this.ready = this.loadFailed = undefined;
      void this.terminate();
      return;
    }
    this.send({ t: "remove" });
    this.flush();
    // A worker stuck in a handler never reads the message: terminate it after a grace.
    const grace = setTimeout(() => void this.terminate(), 2000);
    grace.unref();
    this.port?.once("close", () => {
      clearTimeout(grace);
      void this.terminate();
    });
  }

  private request(what: string, make: (seq: number) => ToWorker): Promise<unknown> {
    if (this.ended !== undefined) {
      return Promise.reject(new JobtapError(ErrorCode.PLUGIN_CALL, `isolated worker is gone: ${this.ended}`));
    }
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      const cancel = this.deadline(seq, what);
      this.pending.set(seq, { what, resolve, reject, cancel });
      this.send(make(seq));
    });
  }

  /**
   * The per-call deadline: past it the worker is terminated (it may be in an endless loop).
   * A plugin on probation (isolate-probation.ts) gets the shorter probation deadline.
   */
  private deadline(seq: number, what: string): (() => void) | undefined {
    if (!(this.spec.deadlineMs > 0 && Number.isFinite(this.spec.deadlineMs))) return undefined;
    const { clock } = this.hooks;
    const { ms, kind } = callDeadline(this.iso, this.spec.deadlineMs, clock.now());
    const h = clock.setTimeout(() => {
      const p = this.pending.get(seq);
      if (p === undefined) return;
      this.pending.delete(seq);
      const on = kind === "probation" ? " (probation after a missed deadline)" : "";
      const why = `${what} did not settle within ${ms} ms${on}; the worker was terminated`;
      p.reject(new JobtapError(ErrorCode.PLUGIN_DEADLINE, why, { plugin: this.spec.name }));
      this.die(why, ErrorCode.PLUGIN_CALL, kind);
    }, ms);
    return () => clock.clearTimeout(h);
  }

  private send(m: ToWorker): void {
    this.outbox.push(m);
    if (this.flushing) return;
    this.flushing = true;
    queueMicrotask(() => this.flush());
  }

  private flush(): void {
    this.flushing = false;
    if (this.outbox.length === 0 || this.port === undefined) return;
    const messages = this.outbox;
    this.outbox = [];
    try {
      this.port.postMessage({ now: this.hooks.clock.now(), messages });
    } catch (e) {
      // Arguments that cannot be cloned (the manager's are plain data; a plugin's `call`
      // args may not be): fail those calls, send the rest.
      for (const m of messages) this.sendAlone(m, e);
    }
  }

  private sendAlone(m: ToWorker, batchError: unknown): void {
    try {
      this.port!.postMessage({ now: this.hooks.clock.now(), messages: [m] });
    } catch {
      if (m.t !== "call" && m.t !== "service") return;
      this.settle(m.seq, { ok: false, error: errorData(batchError, ErrorCode.INVALID_ARGUMENT) });
    }
  }

  private receive(batch: ToHost[]): void {
    for (const m of batch) {
      switch (m.t) {
        case "named":
          this.iso.ownName = m.ownName;
          this.iso.named?.(m.ownName);
          break;
        case "ready":
          this.ready?.(m);
          this.ready = this.loadFailed = undefined;
          break;
        case "load-failed":
          this.loadFailed?.(JobtapError.from(m.error));
          this.ready = this.loadFailed = undefined;
          break;
        case "result":
          this.settle(m.seq, m.result);
          break;
        case "ctx":
          this.contextCall(m);
          break;
      }
    }
  }

  private settle(seq: number, result: Outcome): void {
    const p = this.pending.get(seq);
    if (p === undefined) return;
    this.pending.delete(seq);
    p.cancel?.();
    if (result.ok) p.resolve(result.value);
    else p.reject(JobtapError.from(result.error));
  }

  /** Runs a context call on the plugin's host-side context and answers it. */
  private contextCall(m: ContextMessage): void {
    let value: unknown;
    try {
      value = this.runContext(m);
    } catch (e) {
      this.answer(m, { ok: false, error: errorData(e, ErrorCode.PLUGIN_CALL) });
      return;
    }
    if (isThenable(value)) {
      value.then(
        (v) => this.answer(m, { ok: true, value: v }),
        (e: unknown) => this.answer(m, { ok: false, error: errorData(e, ErrorCode.PLUGIN_CALL) }),
      );
    } else this.answer(m, { ok: true, value });
  }

  private answer(m: ContextMessage, result: Outcome): void {
    if (m.mode === "async") {
      this.send({ t: "answer", seq: m.seq, result });
    } else if (m.mode === "sync") {
      const now = this.hooks.clock.now();
      try {
        this.replyPort!.postMessage({ now, result });
      } catch (e) {
        this.replyPort!.postMessage({ now, result: { ok: false, error: errorData(e, ErrorCode.PLUGIN_CALL) } });
      }
      Atomics.store(this.signal, 0, 1);
      Atomics.notify(this.signal, 0);
    } else if (!result.ok) {
      this.hooks.log("warn", `plugin ${this.spec.name}: ${m.method}: ${result.error.message}`, this.spec.name);
    }
  }

  /** Runs a context call at its row's path on the plugin's in-process context (every
   *  phase check is the in-process one); the worker's plumbing calls are answered here. */
  private runContext(m: ContextMessage): unknown {
    const row: MethodRow = CONTEXT_METHODS[m.method];
    if (row.session === true) return this.plumbing[m.method as SessionMethod](m.args);
    const args = m.args.map((a, i) => (row.args[i] === "ad" && a !== undefined ? adFromJSON(a) : a));
    const fn = memberAt(this.ctx!, m.method) as (...args: unknown[]) => unknown;
    const value = fn(...args);
    this.track(m.method, args[0] as JobId, args[1] as string);
    return valueOut(row.returns, value);
  }

  /** The worker's plumbing: what it needs of the host that is not a member of `p`. */
  private readonly plumbing: Record<SessionMethod, (args: unknown[]) => unknown> = {
    auxTrack: ([id]) => this.ctx!.auxSet(id as JobId, AUX_TRACK, true, () => this.send({ t: "aux-gone", id: id as JobId })),
    timerSet: ([id, ms]) => {
      const h = this.ctx!.clock.setTimeout(() => {
        this.timers.delete(id as number);
        this.send({ t: "timer", timer: id as number });
      }, ms as number);
      this.timers.set(id as number, h);
    },
    timerClear: ([id]) => {
      const h = this.timers.get(id as number);
      this.timers.delete(id as number);
      if (h !== undefined) this.ctx!.clock.clearTimeout(h);
    },
  };

  /** Keeps count of what a dead worker would leave a job waiting for. */
  private track(method: string, id: JobId, description: string): void {
    const key = `${id} ${description}`;
    switch (method) {
      case "prologStart":
      case "epilogStart": {
        const kind = method === "prologStart" ? "prolog" : "epilog";
        this.started.set(`${kind} ${key}`, { kind, id, description });
        return;
      }
      case "prologFinish":
        this.started.delete(`prolog ${key}`);
        return;
      case "epilogFinish":
        this.started.delete(`epilog ${key}`);
        return;
      case "dependencyAdd":
        this.iso.dependencies.set(key, { id, description });
        return;
      case "dependencyRemove":
        this.iso.dependencies.delete(key);
        return;
    }
  }

  /**
   * A prolog or epilog the dead worker started would hold its job for ever (the restarted
   * plugin knows nothing of it): finished with status 1, a failure, so the job goes on as
   * after a failed prolog (an exception) or epilog.
   */
  private finishStarted(reason: string): void {
    const p = this.ctx!;
    for (const { kind, id, description } of this.started.values()) {
      try {
        if (kind === "prolog") p.prologFinish(id, description, 1);
        else p.epilogFinish(id, description, 1);
        this.hooks.log("warn", `plugin ${this.spec.name}: ${kind} "${description}" of job ${formatJobId(id)} finished with status 1: the isolated worker died (${reason})`, this.spec.name);
      } catch (e) {
        this.hooks.log("warn", `plugin ${this.spec.name}: ${kind} "${description}" of job ${formatJobId(id)}: ${errorData(e, ErrorCode.PLUGIN_CALL).message}`, this.spec.name);
      }
    }
    this.started.clear();
  }

  /** The worker is gone (not removed): fail what is in flight, log, tell the host. */
  private die(reason: string, code: ErrorCode, missed?: MissedDeadline): void {
    if (this.ended !== undefined) return;
    this.ended = reason;
    if (this.loadFailed !== undefined) {
      this.loadFailed(new JobtapError(ErrorCode.PLUGIN_LOAD, `the isolated worker died during setup: ${reason}`));
      this.ready = this.loadFailed = undefined;
      void this.terminate();
      return;
    }
    this.failAll(code, `the isolated worker died: ${reason}`);
    for (const h of this.timers.values()) this.hooks.clock.clearTimeout(h);
    this.timers.clear();
    void this.terminate();
    this.hooks.log("error", `plugin ${this.spec.name}: isolated worker died: ${reason}`, this.spec.name);
    this.finishStarted(reason);
    this.hooks.died(reason, missed);
  }

  private failAll(code: ErrorCode, why: string): void {
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const p of calls) {
      p.cancel?.();
      p.reject(new JobtapError(code, why, { plugin: this.spec.name }));
    }
  }

  private async terminate(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    this.port?.close();
    this.replyPort?.close();
    await pool?.destroy().catch(() => undefined);
  }
}

/** An answer as it crosses: ClassAds as their JSON form. */
function valueOut(returns: Returns, v: unknown): unknown {
  if (returns === "ad") return adToJSON(v as ClassAd);
  if (returns === "ads") return (v as ClassAd[]).map(adToJSON);
  if (returns === "ad?") return v === undefined ? undefined : adToJSON(v as ClassAd);
  return v;
}

/** A worker death in words: the heap cap, an exit, or the uncaught error's message. */
function deathReason(e: unknown, heapMb: number): string {
  const code = (e as { code?: unknown } | null)?.code;
  if (code === "ERR_WORKER_OUT_OF_MEMORY") return `its heap passed the ${heapMb} MB limit (heap-mb)`;
  const why = e instanceof Error ? e.message : String(e);
  return `uncaught error: ${why}`;
}

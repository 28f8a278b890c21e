/**
 * The worker-thread side of an isolated plugin: the tinypool task that imports the plugin
 * module, runs its setup against a context whose calls cross to the host (worker-protocol.ts),
 * then runs its handlers for as long as the plugin is loaded. The session task settles when
 * the host removes the plugin.
 *
 * What stays in the worker: the plugin's handlers, services, timers' callbacks, aux values
 * and their destructors, onRemove functions. Everything that touches a job or the manager is
 * a context call answered by the host, which runs it on the plugin's host-side context; a
 * call that must be able to throw at its call site (every job call) is synchronous
 * (Atomics.wait until the answer is there), `call` returns a Promise, logging and timers
 * are one-way: each as its row of the method table (context-methods.ts) says.
 */
import { receiveMessageOnPort, type MessagePort } from "node:worker_threads";
import { adFromJSON, adToJSON } from "../classad/json.js";
import type { ClassAd } from "../classad/classad.js";
import { ErrorCode, JobtapError } from "../errors.js";
import type { TimerHandle } from "../manager/base/clock.js";
import type { JobId } from "../manager/base/ids.js";
import { PRIORITY_UNAVAILABLE } from "../manager/port/port.js";
import { isThenable } from "../manager/base/steps.js";
import type { PluginContext } from "./context.js";
import { crossingRows, setMemberAt, type Arg, type Crossing, type MethodRow, type Returns } from "./context-methods.js";
import { importPlugin, pluginShape } from "./loader.js";
import { compileTopicGlob, type LoadSortOrder } from "./record.js";
import type { AnyHandler } from "./topics.js";
import { ISOLATED_HOOK_USERS } from "./hook-users.js";
import {
  errorData,
  type ContextMethod,
  type HostBatch,
  type Outcome,
  type SessionEnd,
  type SessionTask,
  type ToHost,
  type ToWorker,
} from "./worker-protocol.js";

type Destructor = ((value: unknown) => void) | undefined;

/** One session: one plugin, from import to removal. */
class WorkerSession {
  private now: number;
  private readonly port: MessagePort;
  private readonly replyPort: MessagePort;
  private outbox: ToHost[] = [];
  private flushing = false;
  private seq = 0;
  private inSetup = false;
  private removed = false;
  private sortOrder: LoadSortOrder = "none";
  private readonly handlers: Array<{ glob: string; fn: AnyHandler }> = [];
  private readonly services = new Map<string, { fn: (payload: unknown, cred: never) => unknown; guests: boolean }>();
  private readonly timers = new Map<number, () => unknown>();
  private readonly aux = new Map<JobId, Map<string, { value: unknown; destructor: Destructor }>>();
  private readonly onRemove: Array<() => void> = [];
  private readonly answers = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  private end: (v: SessionEnd) => void = () => undefined;

  constructor(private readonly task: SessionTask) {
    this.now = task.now;
    this.port = task.port as unknown as MessagePort;
    this.replyPort = task.replyPort as unknown as MessagePort;
  }

  async run(): Promise<SessionEnd> {
    const ended = new Promise<SessionEnd>((r) => (this.end = r));
    this.port.on("message", (batch: HostBatch) => this.receive(batch));
    try {
      const mod = await importPlugin({ kind: "file", path: this.task.path }, this.task.seq);
      const shape = pluginShape(mod, this.task.path);
      if (shape.name !== undefined) this.send({ t: "named", ownName: shape.name });
      this.inSetup = true;
      await shape.setup(this.context());
      this.inSetup = false;
      this.send({
        t: "ready",
        ownName: shape.name,
        handlers: this.handlers.map((h) => h.glob),
        services: [...this.services].map(([method, s]) => ({ method, guests: s.guests })),
        sortOrder: this.sortOrder,
      });
    } catch (e) {
      this.send({ t: "load-failed", error: errorData(e, ErrorCode.PLUGIN_LOAD) });
      this.flush();
      this.port.close();
      return { removed: true };
    }
    return ended;
  }

  // --- messages from the host ----------------------------------------------------------

  private receive(batch: HostBatch): void {
    this.now = batch.now;
    for (const m of batch.messages) this.handle(m);
  }

  private handle(m: ToWorker): void {
    switch (m.t) {
      case "call": {
        const h = this.handlers[m.handler];
        freezeJobspec(m.args);
        this.settle(m.seq, () => h!.fn(m.args as never, m.info));
        return;
      }
      case "service": {
        const s = this.services.get(m.method);
        this.settle(m.seq, () => s!.fn(m.payload, m.cred as never));
        return;
      }
      case "timer": {
        const fn = this.timers.get(m.timer);
        this.timers.delete(m.timer);
        if (fn !== undefined) this.guarded("timer callback failed", fn);
        return;
      }
      case "aux-gone":
        this.auxGone(m.id);
        return;
      case "answer": {
        const a = this.answers.get(m.seq);
        this.answers.delete(m.seq);
        if (m.result.ok) a?.resolve(m.result.value);
        else a?.reject(JobtapError.from(m.result.error));
        return;
      }
      case "remove":
        this.remove();
        return;
    }
  }

  /** Runs a handler or service and sends its outcome (once its Promise settles). */
  private settle(seq: number, fn: () => unknown): void {
    let r: unknown;
    try {
      r = fn();
    } catch (e) {
      this.send({ t: "result", seq, result: failure(e) });
      return;
    }
    if (isThenable(r)) {
      r.then(
        (value: unknown) => this.sendResult(seq, { ok: true, value }),
        (e: unknown) => this.sendResult(seq, failure(e)),
      );
    } else this.sendResult(seq, { ok: true, value: r });
  }

  private sendResult(seq: number, result: Outcome): void {
    this.send({ t: "result", seq, result });
  }

  private guarded(what: string, fn: () => unknown): void {
    const report = (e: unknown) => this.log("warn", `${what}: ${errorData(e, ErrorCode.PLUGIN_CALL).message}`);
    try {
      const r = fn();
      if (isThenable(r)) r.then(undefined, report);
    } catch (e) {
      report(e);
    }
  }

  private auxGone(id: JobId): void {
    const perJob = this.aux.get(id);
    this.aux.delete(id);
    for (const entry of perJob?.values() ?? []) this.destroy(entry.value, entry.destructor);
  }

  private destroy(value: unknown, destructor: Destructor): void {
    if (destructor !== undefined) this.guarded("aux destructor", () => destructor(value));
  }

  private remove(): void {
    this.removed = true;
    for (const id of [...this.aux.keys()]) this.auxGone(id);
    this.timers.clear();
    for (const fn of this.onRemove) this.guarded("onRemove", fn);
    this.flush();
    this.port.close();
    this.end({ removed: true });
  }

  // --- messages to the host ------------------------------------------------------------

  private send(m: ToHost): void {
    this.outbox.push(m);
    if (this.flushing) return;
    this.flushing = true;
    queueMicrotask(() => this.flush());
  }

  private flush(): void {
    this.flushing = false;
    if (this.outbox.length === 0) return;
    const batch = this.outbox;
    this.outbox = [];
    try {
      this.port.postMessage(batch);
    } catch {
      // Some value in the batch cannot be cloned: send the others, and fail that call.
      for (const m of batch) this.port.postMessage([cloneable(m)]);
    }
  }

  /** A context call that may throw at its call site: blocks until the host answers. */
  private sync(method: ContextMethod, args: unknown[]): unknown {
    const { signal } = this.task;
    Atomics.store(signal, 0, 0);
    this.flush();
    try {
      this.port.postMessage([{ t: "ctx", mode: "sync", seq: ++this.seq, method, args }]);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `plugin ${this.task.name}: ${method}: ${why}`);
    }
    while (Atomics.load(signal, 0) === 0) Atomics.wait(signal, 0, 0);
    const got = receiveMessageOnPort(this.replyPort);
    if (got === undefined) throw new JobtapError(ErrorCode.INTERNAL, `${method}: the host sent no answer`);
    const { now, result } = got.message as { now: number; result: Outcome };
    this.now = now;
    if (!result.ok) throw JobtapError.from(result.error);
    return result.value;
  }

  private async(method: ContextMethod, args: unknown[]): Promise<unknown> {
    const seq = ++this.seq;
    const answer = new Promise((resolve, reject) => this.answers.set(seq, { resolve, reject }));
    this.send({ t: "ctx", mode: "async", seq, method, args });
    return answer;
  }

  private oneway(method: ContextMethod, args: unknown[]): void {
    this.send({ t: "ctx", mode: "oneway", seq: 0, method, args });
  }

  private log(level: "debug" | "info" | "warn" | "error", message: string): void {
    this.oneway(`log.${level}`, [message]);
  }

  // --- the plugin's context --------------------------------------------------------------

  private phase(what: string, why: string): JobtapError {
    return new JobtapError(ErrorCode.PLUGIN_PHASE, `plugin ${this.task.name}: ${what}: ${why}`, { plugin: this.task.name });
  }

  private setupOnly(what: string): void {
    if (this.removed) throw this.phase(what, "the plugin has been removed");
    if (!this.inSetup) throw this.phase(what, "allowed only during setup");
  }

  /**
   * The plugin's `p`: what stays in the worker written here, every crossing member made
   * from its row of the method table (context-methods.ts).
   */
  private context(): PluginContext {
    const ctx = this.localMembers() as unknown as Record<string, unknown>;
    for (const [method, row] of crossingRows()) {
      if (row.session !== true) setMemberAt(ctx, method, this.proxy(method, row));
    }
    return ctx as unknown as PluginContext;
  }

  /** One crossing member: its arguments out, its answer back, as its row says. */
  private proxy(method: ContextMethod, row: MethodRow): (...args: unknown[]) => unknown {
    return (...args) => {
      const out = args.map((a, i) => argOut(row.args[i], a, row.cross));
      if (row.cross === "async") return this.async(method, out);
      if (row.cross === "oneway") return void this.oneway(method, out);
      return valueIn(row.returns, this.sync(method, out));
    };
  }

  /** The members that never leave the worker (the `local` rows). */
  private localMembers(): Omit<PluginContext, ContextMethod | "log" | "state"> {
    const s = this;
    let timerSeq = 0;
    return {
      name: this.task.name,
      conf: this.task.conf,
      owner: this.task.owner,
      hookUsers: this.task.multiUser ? ISOLATED_HOOK_USERS : undefined,
      clock: {
        now: () => s.now,
        setTimeout(fn, ms) {
          const id = ++timerSeq;
          s.timers.set(id, fn);
          s.oneway("timerSet", [id, ms]);
          return id as unknown as TimerHandle;
        },
        clearTimeout(h) {
          s.timers.delete(h as unknown as number);
          s.oneway("timerClear", [h]);
        },
      },
      on(topic, handler) {
        s.setupOnly("on");
        compileTopicGlob(topic);
        s.handlers.push({ glob: topic, fn: handler as AnyHandler });
      },
      setLoadSortOrder(order) {
        s.setupOnly("setLoadSortOrder");
        if (order !== "none" && order !== "state" && order !== "-state") {
          throw s.phase("setLoadSortOrder", `"${String(order)}" is not none, state or -state`);
        }
        s.sortOrder = order;
      },
      serviceRegister(method, handler, opts) {
        s.setupOnly("serviceRegister");
        if (!/^[A-Za-z0-9_-]+$/.test(method) || s.services.has(method)) {
          throw s.phase("serviceRegister", `"${method}" is not a valid, unused method name`);
        }
        s.services.set(method, { fn: handler, guests: opts?.guests === true });
      },
      onRemove: (fn) => void s.onRemove.push(fn),
      registerExecutor() {
        throw s.phase("registerExecutor", "an isolated plugin cannot register an executor (load it without isolate)");
      },
      reject: (message) => ({ reject: message ?? "" }),
      priorityUnavailable: () => ({ priority: PRIORITY_UNAVAILABLE }),
      ...this.auxMembers(),
    };
  }

  /** Aux values live in the worker (their destructors are functions); the host only
   *  checks the job and says when it is gone (`auxTrack`). */
  private auxMembers(): Pick<PluginContext, "auxGet" | "auxSet" | "auxDelete"> {
    const s = this;
    return {
      auxGet: (id, key) => s.aux.get(id)?.get(key)?.value as never,
      auxSet(id, key, value, destructor) {
        s.sync("auxTrack", [id]);
        let perJob = s.aux.get(id);
        if (perJob === undefined) s.aux.set(id, (perJob = new Map()));
        const old = perJob.get(key);
        perJob.set(key, { value, destructor: destructor as Destructor });
        if (old !== undefined && old.value !== value) s.destroy(old.value, old.destructor);
      },
      auxDelete(id, key) {
        const perJob = s.aux.get(id);
        const old = perJob?.get(key);
        if (perJob === undefined || old === undefined) return;
        perJob.delete(key);
        if (perJob.size === 0) s.aux.delete(id);
        s.destroy(old.value, old.destructor);
      },
    };
  }
}

/** An argument as it crosses: a ClassAd as its JSON form; a one-way call's text as text. */
function argOut(shape: Arg | undefined, a: unknown, cross: Crossing): unknown {
  if (shape === "ad" && a !== undefined) return adToJSON(a as ClassAd);
  return cross === "oneway" && shape === "string" ? String(a) : a;
}

/** An answer as the plugin sees it: ClassAds rebuilt, a job's jobspec frozen. */
function valueIn(returns: Returns, v: unknown): unknown {
  switch (returns) {
    case "none":
      return undefined;
    case "ad":
      return adFromJSON(v);
    case "ads":
      return (v as unknown[]).map((a) => adFromJSON(a));
    case "ad?":
      return v === undefined ? undefined : adFromJSON(v);
    case "args":
      return freezeJobspec(v);
    case "value":
      return v;
  }
}

/** A failure as plain data; a thrown non-JobtapError is a PLUGIN_CALL failure. */
function failure(e: unknown): Outcome {
  return { ok: false, error: errorData(e, ErrorCode.PLUGIN_CALL) };
}

/** A message whose value structured clone refuses (a function, a class with private
 *  state): a result becomes a failure of that call, a context call's arguments an error. */
function cloneable(m: ToHost): ToHost {
  try {
    structuredClone(m);
    return m;
  } catch (e) {
    const message = `a value that cannot leave the worker: ${e instanceof Error ? e.message : String(e)}`;
    const error = { code: ErrorCode.PLUGIN_CALL, message };
    if (m.t === "result") return { ...m, result: { ok: false, error } };
    return { t: "ctx", mode: "oneway", seq: 0, method: "log.warn", args: [message] };
  }
}

/** The jobspec a handler sees is read-only, as in process (writes throw a TypeError). */
function freezeJobspec<T>(args: T): T {
  const js = (args as { jobspec?: unknown } | undefined)?.jobspec;
  if (typeof js === "object" && js !== null) deepFreeze(js);
  return args;
}

function deepFreeze(v: unknown): void {
  if (typeof v !== "object" || v === null || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
}

/** The tinypool task: one plugin session. */
export default function session(task: SessionTask): Promise<SessionEnd> {
  return new WorkerSession(task).run();
}

/**
 * The stack call: one topic over the matching plugins in load order (spec flux-jobtap §4).
 *
 * Flux rules kept: only the first matching handler per plugin runs (the caller passes one
 * entry per plugin), the stack stops at the first error, OUT is merged at the top level
 * (last writer wins) and the result counts the plugins that had a handler.
 * Beyond Flux: a handler may return a Promise. The loop then continues asynchronously and
 * the caller (the manager) holds that job's mailbox until the returned Promise settles; a
 * per-plugin deadline turns a hung handler into an ordinary labelled error.
 *
 * Results and errors are plain objects (no closures, no class instances), so the call path
 * can later cross a worker thread.
 */
import { ErrorCode, JobtapError, isJobtapError } from "../errors.js";
import type { JobId } from "../manager/base/ids.js";
import { formatJobId } from "../manager/base/ids.js";
import { PRIORITY_UNAVAILABLE, type StackOut, type StackResult } from "../manager/port/port.js";
import { isThenable, runSteps, type Step } from "../manager/base/steps.js";
import type { Collect, TopicRule } from "../manager/port/topics.js";
import type { PluginRecord } from "./record.js";
import type { AnyHandler, CallInfo } from "./topics.js";
import { ended, startTiming, type HandlerTimes, type Sampled, type TimeCell } from "./timing.js";

export type { CellOf, HandlerTiming, HandlerTimes, TimeCell } from "./timing.js";

/** Starts a deadline timer; returns its cancel function. */
export type DeadlineTimer = (ms: number, onExpire: () => void) => () => void;

/** One plugin's first matching handler for a topic. */
export interface StackEntry {
  plugin: PluginRecord;
  fn: AnyHandler;
  /** True if the handler cannot read its CallInfo (`takesOnlyFirstArg`): it gets none. */
  firstArgOnly?: boolean;
  /**
   * This (plugin, topic)'s time cell, asked of HandlerTimes.cellOf at the entry's first
   * timed call and kept: no lookup per call. Entries are rebuilt when the cell provider
   * changes (Dispatcher.timeCells invalidates the registry's cache).
   */
  cell?: TimeCell | undefined;
}

/**
 * True if `fn` can never read a second argument: an arrow function (it has no `arguments`
 * of its own) whose parameter list is at most one name or one destructuring pattern, with
 * no default and no rest. Decided from the source text and conservatively: a `function`, a
 * method, a bound, native or proxied function, and a parameter list holding a default, a
 * rest, a string, a comment or parentheses all count as reading it.
 */
export function takesOnlyFirstArg(fn: unknown): boolean {
  if (typeof fn !== "function") return false;
  let src: string;
  try {
    src = sourceOf.call(fn);
  } catch {
    return false;
  }
  if (SINGLE_NAME_ARROW.test(src)) return true;
  const m = PARENTHESIZED_ARROW.exec(src);
  if (m === null) return false;
  // One pattern at most: no comma outside its braces and brackets.
  let depth = 0;
  for (const ch of m[1]!) {
    if (ch === "{" || ch === "[") depth++;
    else if (ch === "}" || ch === "]") depth--;
    else if (ch === "," && depth === 0) return false;
  }
  return depth === 0;
}

/** Function.prototype.toString as it was when jobtap loaded (a plugin cannot replace it). */
const sourceOf = Function.prototype.toString;

/** `x => ...`, `async x => ...` */
const SINGLE_NAME_ARROW = /^(?:async\s+)?[A-Za-z_$][\w$]*\s*=>/;
/** `(...) => ...`, `async (...) => ...`, with nothing in the list that could hide a second
 *  parameter or a read of one (defaults, rest, strings, comments, nested parentheses). */
const PARENTHESIZED_ARROW = /^(?:async\s*)?\(([^()'"`/=.]*)\)\s*=>/;

/** What a handler learns besides its args: made once per call, for the handlers that can read it. */
function callInfo(topic: string, id: JobId | undefined): CallInfo {
  return id === undefined ? { topic } : { topic, id };
}

/** A job a callback is running for: context calls on it are "current job" calls. */
export interface Frame {
  id: JobId;
  plugin: PluginRecord;
  topic: string;
  /** Jobspec updates staged by the plugin; posted as one event when its handler returns. */
  staged: Record<string, unknown> | undefined;
  /** True while its handler's Promise is unsettled (the frame is in the pending set). */
  pending: boolean;
}

/** What the stack engine needs from the dispatcher. */
export interface StackHost {
  timer: DeadlineTimer;
  enter(id: JobId | undefined, plugin: PluginRecord, topic: string): Frame | undefined;
  /** The handler returned a Promise: keep its frame current until `leave`. */
  suspend(frame: Frame | undefined): void;
  leave(frame: Frame | undefined): void;
  /** Raises a non-fatal exception on the job (a bad `priority` on a `raise` topic). */
  raise(plugin: PluginRecord, topic: string, id: JobId, note: string): void;
  /** Logs a labelled failure (level warn) or a rejection (level debug). */
  report(level: "debug" | "warn", message: string): void;
  /** True while someone listens to the inspection stream (checked per handler). */
  readonly inspecting: boolean;
  inspected(record: HandlerRecord): void;
  /**
   * Per-handler timing (undefined when nobody times; see timing.ts): every call counted, a
   * sample timed, on the fast path too, with no record allocated.
   */
  readonly timing: HandlerTimes | undefined;
}

/** "plugin NAME: TOPIC: job ID": the prefix of every message about a plugin call. */
export function label(plugin: PluginRecord, topic: string, id: JobId | undefined): string {
  const job = id === undefined ? "" : `: job ${formatJobId(id)}`;
  return `plugin ${plugin.name}: ${topic}${job}`;
}

/** How one handler call ended, as the inspection stream reports it. */
export type HandlerOutcome = "ok" | "rejected" | "error" | "deadline";

/** One record of the inspection stream: a handler call, its outcome and duration. */
export interface HandlerRecord {
  topic: string;
  plugin: string;
  id?: JobId;
  /** Real elapsed milliseconds, including the wait for an async handler. */
  ms: number;
  async: boolean;
  outcome: HandlerOutcome;
  /** The rejection or error message. */
  message?: string;
  /** The handler's return value (a copy, for the trace: JSON-able or dropped). */
  out?: unknown;
}

/** The state of one stack call. */
export interface StackCall {
  host: StackHost;
  topic: string;
  rule: TopicRule;
  args: unknown;
  id: JobId | undefined;
  entries: readonly StackEntry[];
  /**
   * The job's frame while synchronous handlers run one after another: entered once per call
   * and handed from plugin to plugin (a handler that returns a Promise keeps it, staged
   * updates end it); undefined between handlers otherwise, and for calls without a job.
   */
  frame: Frame | undefined;
  /** notify topics keep going after an error (each subscriber is called on its own). */
  stopOnError: boolean;
  /** Made at the first handler that can read it, then shared by the call's handlers. */
  info: CallInfo | undefined;
  out: StackOut;
  handled: number;
  error?: { plugin: string; message: string };
  /** The plugin whose wrong-typed `priority` is the current value of OUT `priority`. */
  badPriority?: { plugin: PluginRecord; value: unknown };
  /** Inspection or timing of the handler in progress (0: neither): its start. */
  t0: number;
  /** This call's handlers are timed (a sampled call; see timing.ts). */
  sampled: boolean;
  /** The handler in progress (its time cell). */
  entry: StackEntry | undefined;
  outcome: HandlerOutcome;
  message: string | undefined;
  /** The inspected handler's return value. */
  result?: unknown;
}

/**
 * Runs one stack call of a topic over the given entries; synchronous unless some handler
 * returned a Promise.
 *
 * The common call (nobody inspecting, every handler returns nothing) runs on locals and ends
 * with a shared frozen result: no call state, OUT or result object is made. From the first
 * handler that returns something or throws, the call continues on its full state
 * (`StackCall`). The CallInfo is made per call (a plugin may keep it), and only once a
 * handler that can read it is reached.
 */
export function runStack(
  host: StackHost,
  to: { readonly topic: string; readonly rule: TopicRule } & Sampled,
  entries: readonly StackEntry[],
  args: unknown,
  id: JobId | undefined,
): StackResult | Promise<StackResult> {
  const { topic } = to;
  // Only handlers that can read it get a CallInfo (the builtins' one-argument arrows do not).
  let info: CallInfo | undefined;
  const n = entries.length;
  // The job's frame, handed from plugin to plugin while handlers are synchronous.
  let frame: Frame | undefined;
  let handled = 0;
  const timing = host.timing;
  // Counted and (a sample) timed here, where the handlers run, with no allocation: one clock
  // read before the chain and one after each handler, whose end is the next one's start
  // (what lies between two handlers is a few field writes, counted in the next).
  let t = timing === undefined ? 0 : startTiming(to);
  for (let i = 0; i < n; i++) {
    if (host.inspecting) return runFrom(stackCall(host, to, entries, args, id, info, frame, handled, t !== 0), i, undefined);
    const entry = entries[i]!;
    if (entry.plugin.removed) continue;
    handled++;
    if (frame === undefined) frame = host.enter(id, entry.plugin, topic);
    else frame.plugin = entry.plugin;
    let result: unknown;
    try {
      result = entry.fn(args as never, entry.firstArgOnly === true ? (undefined as never) : (info ??= callInfo(topic, id)));
    } catch (e) {
      const call = stackCall(host, to, entries, args, id, info, frame, handled, t !== 0);
      call.t0 = t;
      call.entry = entry;
      return runFrom(call, i + 1, threw(call, entry.plugin, frame, e));
    }
    if (result !== undefined) {
      const call = stackCall(host, to, entries, args, id, info, frame, handled, t !== 0);
      call.t0 = t;
      call.entry = entry;
      return runFrom(call, i + 1, outcome(call, entry.plugin, frame, result));
    }
    if (timing !== undefined) t = ended(timing, entry, topic, t, false);
    if (frame?.staged !== undefined) {
      // Updates it staged are posted with its frame left, as Flux posts them when the
      // callback returns (the next handler enters a new frame).
      host.leave(frame);
      frame = undefined;
      // Posting the updates is the manager's work, not the next handler's.
      if (t !== 0) t = performance.now();
    }
  }
  if (frame !== undefined) host.leave(frame);
  return nothingMerged(handled);
}

/** The full state of a stack call from handler `handled`'s end on. */
function stackCall(
  host: StackHost,
  to: { readonly topic: string; readonly rule: TopicRule },
  entries: readonly StackEntry[],
  args: unknown,
  id: JobId | undefined,
  info: CallInfo | undefined,
  frame: Frame | undefined,
  handled: number,
  sampled: boolean,
): StackCall {
  const { topic, rule } = to;
  return {
    host, topic, rule, args, id, entries, frame, stopOnError: rule.stopsAtError, info, out: {}, handled,
    t0: 0, sampled, entry: undefined, outcome: "ok", message: undefined,
  };
}

/**
 * Continues a call on its full state: `first` is how the handler before entry `from` ended
 * (`true` stops the stack, a Promise its pending outcome). From the first handler that
 * returns a Promise, the step loop runs the rest once it settles.
 */
function runFrom(call: StackCall, from: number, first: Step<true>): StackResult | Promise<StackResult> {
  const n = call.entries.length;
  let r = first;
  let i = from;
  while (r === undefined && i < n) r = handlerStep(call, i++);
  if (r !== undefined && r !== true) {
    const rest = i;
    return Promise.resolve(r)
      .then((stop) => (stop ? undefined : runSteps<StackCall, true>(call, n, handlerStep, rest)))
      .then(() => finish(call.host, call));
  }
  return finish(call.host, call);
}

/** Calls entry `i`'s handler; `true` stops the stack (an error, or a rejection). */
function handlerStep(call: StackCall, i: number): Step<true> {
  const { host } = call;
  const entry = call.entries[i]!;
  if (entry.plugin.removed) return undefined;
  call.handled++;
  if (host.inspecting || (call.sampled && host.timing !== undefined)) begin(call, entry);
  else call.entry = entry;
  let frame = call.frame;
  if (frame === undefined) call.frame = frame = host.enter(call.id, entry.plugin, call.topic);
  else frame.plugin = entry.plugin;
  let result: unknown;
  try {
    result = entry.fn(call.args as never, entry.firstArgOnly === true ? (undefined as never) : (call.info ??= callInfo(call.topic, call.id)));
  } catch (e) {
    return threw(call, entry.plugin, frame, e);
  }
  return outcome(call, entry.plugin, frame, result);
}

/** A handler threw: the error is recorded (and stops the stack unless the topic notifies). */
function threw(call: StackCall, plugin: PluginRecord, frame: Frame | undefined, e: unknown): true | undefined {
  between(call.host, call, frame);
  return stops(done(call.host, call, plugin, fail(call.host, call, plugin, e), false));
}

/** What a handler returned: nothing, OUT to merge, a rejection, or a Promise of those. */
function outcome(call: StackCall, plugin: PluginRecord, frame: Frame | undefined, result: unknown): Step<true> {
  const { host } = call;
  // The common case (a handler that only looks, nobody inspecting or timing): nothing to merge.
  if (result === undefined && call.t0 === 0 && host.timing === undefined) {
    between(host, call, frame);
    return undefined;
  }
  if (isThenable(result)) {
    // The pending handler keeps the frame; the next handler enters a new one.
    call.frame = undefined;
    host.suspend(frame);
    return settle(host, call, plugin, frame, result);
  }
  between(host, call, frame);
  if (call.t0 !== 0) call.result = result;
  return stops(done(host, call, plugin, absorb(host, call, plugin, result), false));
}

/** After a synchronous handler: updates it staged are posted with its frame left, as Flux
 *  posts them when the callback returns (the next handler enters a new frame). */
function between(host: StackHost, call: StackCall, frame: Frame | undefined): void {
  if (frame?.staged === undefined) return;
  call.frame = undefined;
  host.leave(frame);
}

function stops(stop: boolean): true | undefined {
  return stop ? true : undefined;
}

/** An async handler: its OUT (or error) once it settles or its deadline passes. */
async function settle(
  host: StackHost,
  call: StackCall,
  plugin: PluginRecord,
  frame: Frame | undefined,
  pending: PromiseLike<unknown>,
): Promise<true | undefined> {
  let stop: boolean;
  try {
    const result = await withDeadline(host, plugin, call, pending);
    host.leave(frame);
    if (call.t0 !== 0) call.result = result;
    stop = absorb(host, call, plugin, result);
  } catch (e) {
    host.leave(frame);
    stop = fail(host, call, plugin, e);
  }
  return stops(done(host, call, plugin, stop, true));
}

function begin(call: StackCall, entry: StackEntry): void {
  call.t0 = performance.now();
  call.entry = entry;
  call.outcome = "ok";
  call.message = undefined;
}

/** Reports the finished handler to the inspection stream; passes `stop` through. */
function done(
  host: StackHost,
  call: StackCall,
  plugin: PluginRecord,
  stop: boolean,
  async: boolean,
): boolean {
  const failed = call.outcome === "error" || call.outcome === "deadline";
  // Counted whether timed or not (a failure on an untimed call included).
  const t1 = host.timing === undefined || call.entry === undefined ? 0 : ended(host.timing, call.entry, call.topic, call.t0, failed);
  call.entry = undefined;
  if (call.t0 === 0) return stop;
  const ms = (t1 === 0 ? performance.now() : t1) - call.t0;
  if (!host.inspecting) {
    call.result = undefined;
    call.t0 = 0;
    return stop;
  }
  const record: HandlerRecord = {
    topic: call.topic,
    plugin: plugin.name,
    ms,
    async,
    outcome: call.outcome,
  };
  if (call.id !== undefined) record.id = call.id;
  if (call.message !== undefined) record.message = call.message;
  if (call.result !== undefined && call.result !== null) record.out = call.result;
  call.result = undefined;
  call.t0 = 0;
  host.inspected(record);
  return stop;
}

function finish(host: StackHost, call: StackCall): StackResult {
  if (call.frame !== undefined) {
    host.leave(call.frame);
    call.frame = undefined;
  }
  if (call.badPriority !== undefined) unpackFailed(host, call, call.badPriority.plugin, call.badPriority.value);
  return call.error === undefined
    ? { handled: call.handled, out: call.out }
    : { handled: call.handled, out: call.out, error: call.error };
}

/**
 * The results of calls in which no handler returned anything, by handler count: frozen and
 * shared, as only the host reads them (`p.call` hands its caller a fresh copy).
 */
const NOTHING_MERGED: StackResult[] = [];

function nothingMerged(handled: number): StackResult {
  if (handled >= 64) return { handled, out: {} };
  return (NOTHING_MERGED[handled] ??= Object.freeze({ handled, out: Object.freeze({}) }));
}

/** Races a handler's Promise against the plugin's deadline (0 or Infinity: none). */
function withDeadline(
  host: StackHost,
  plugin: PluginRecord,
  call: StackCall,
  pending: PromiseLike<unknown>,
): Promise<unknown> {
  const ms = plugin.deadlineMs;
  return settleWithin(host.timer, ms, pending, () =>
    new JobtapError(ErrorCode.PLUGIN_DEADLINE, `handler did not settle within ${ms} ms`, {
      plugin: plugin.name,
      topic: call.topic,
    }),
  );
}

/**
 * `pending`'s outcome, or a rejection with `expired()` once `ms` pass on the timer's clock
 * (0 or Infinity: no deadline). The timer is cancelled as soon as `pending` settles.
 */
export function settleWithin<T>(
  timer: DeadlineTimer,
  ms: number,
  pending: PromiseLike<T>,
  expired: () => unknown,
): Promise<T> {
  if (!(ms > 0 && Number.isFinite(ms))) return Promise.resolve(pending);
  return new Promise<T>((resolve, reject) => {
    const cancel = timer(ms, () => reject(expired()));
    pending.then(
      (v) => {
        cancel();
        resolve(v);
      },
      (e: unknown) => {
        cancel();
        reject(e);
      },
    );
  });
}

/** Records a thrown error; returns true if the stack stops here. */
function fail(host: StackHost, call: StackCall, plugin: PluginRecord, e: unknown): boolean {
  const why = isJobtapError(e) || e instanceof Error ? e.message : String(e);
  const prefix = label(plugin, call.topic, call.id);
  // Context calls already label their errors (host.wrapError); do not say it twice.
  const message = why.startsWith(prefix) ? why : `${prefix}: ${why}`;
  host.report("warn", message);
  call.outcome = isJobtapError(e, ErrorCode.PLUGIN_DEADLINE) ? "deadline" : "error";
  call.message = message;
  const collect = call.rule.collect;
  // A collecting topic (job.explain) keeps the failure as its own labelled element.
  if (collect !== undefined) collected(call, collect.key).push(collect.error(plugin.name, why));
  if (!call.stopOnError) return false;
  call.error = { plugin: plugin.name, message };
  call.out.errmsg = message;
  return true;
}

/** Merges one handler's OUT into the call; returns true if the stack stops here. */
function absorb(host: StackHost, call: StackCall, plugin: PluginRecord, result: unknown): boolean {
  if (result === undefined || result === null) return false;
  if (typeof result !== "object" || Array.isArray(result)) {
    const e = `handler returned ${typeof result}; return an OUT object, a rejection or nothing`;
    return fail(host, call, plugin, new Error(e));
  }
  const out = result as Record<string, unknown>;
  if ("reject" in out) return rejected(host, call, plugin, out.reject);
  for (const key of Object.keys(out)) {
    const bad = mergeKey(host, call, plugin, key, out[key]);
    if (bad !== undefined) return fail(host, call, plugin, new Error(bad));
  }
  return false;
}

function rejected(host: StackHost, call: StackCall, plugin: PluginRecord, why: unknown): boolean {
  const text = typeof why === "string" && why.length > 0 ? why : "";
  const message = text || call.rule.rejection(plugin.name);
  call.outcome = "rejected";
  call.message = message;
  host.report("debug", `${label(plugin, call.topic, call.id)}: rejected: ${message}`);
  if (!call.stopOnError) return false;
  call.error = { plugin: plugin.name, message };
  call.out.errmsg = message;
  return true;
}

/**
 * Merges one OUT key, checked here once for every topic by its rule (spec §4.2): the manager
 * applies what comes out unchecked. Returns an error message if the value must fail the call.
 */
function mergeKey(
  host: StackHost,
  call: StackCall,
  plugin: PluginRecord,
  key: string,
  value: unknown,
): string | undefined {
  if (key === call.rule.collect?.key) return collect(call, plugin, call.rule.collect, value);
  switch (key) {
    case "priority":
      // A later plugin's value replaces an earlier one's whatever its type, as in Flux;
      // whether the final OUT holds a usable priority is decided when the stack ends.
      if (typeof value === "number" && Number.isInteger(value)) {
        call.out.priority = value;
        call.badPriority = undefined;
        // Who made the priority unavailable (`job why` names it); a plugin cannot claim it.
        if (value === PRIORITY_UNAVAILABLE) call.out.unavailableBy = plugin.name;
        else if (call.out.unavailableBy !== undefined) delete call.out.unavailableBy;
      } else {
        delete call.out.priority;
        call.badPriority = { plugin, value };
      }
      return undefined;
    case "annotations":
      return mergeAnnotations(host, call, plugin, value);
    case "R":
      if (call.rule.job && call.rule.phase !== "SCHED") return "R may only be set in SCHED state";
      if (typeof value !== "object" || value === null || Array.isArray(value)) return "R must be an object";
      call.out.R = value;
      return undefined;
    case "unavailableBy":
      return undefined;
    default:
      call.out[key] = value;
      return undefined;
  }
}

/** The OUT array a collecting topic gathers into. */
function collected(call: StackCall, key: string): unknown[] {
  const list = call.out[key];
  if (Array.isArray(list)) return list;
  const fresh: unknown[] = [];
  call.out[key] = fresh;
  return fresh;
}

/** Appends one plugin's elements (each checked and stamped by the topic's `item`). */
function collect(call: StackCall, plugin: PluginRecord, how: Collect, value: unknown): string | undefined {
  if (!Array.isArray(value)) return `${how.key} must be an array`;
  const list = collected(call, how.key);
  for (const raw of value) list.push(how.item(plugin.name, raw));
  return undefined;
}

/**
 * The final OUT holds a `priority` of the wrong type. As when Flux fails to unpack OUT,
 * none of it is applied (no priority, annotations or R: a job entering PRIORITY stays
 * there; `job.priority.get` keeps the current priority); it is logged, and on the topics
 * whose rule says `raise` a non-fatal exception typed by the topic makes it visible.
 */
function unpackFailed(host: StackHost, call: StackCall, plugin: PluginRecord, value: unknown): void {
  delete call.out.annotations;
  delete call.out.R;
  const what = `priority must be an integer, got ${JSON.stringify(value) ?? typeof value}`;
  host.report("warn", `${label(plugin, call.topic, call.id)}: ${what}`);
  if (call.id === undefined || call.rule.badPriority !== "raise") return;
  const stuck = (call.args as { state?: unknown } | undefined)?.state === "PRIORITY" ? " (job may be stuck in PRIORITY state)" : "";
  host.raise(plugin, call.topic, call.id, `${plugin.name}: ${what}${stuck}`);
}

/**
 * Annotations from several plugins in one call: the later plugin's object (or null)
 * replaces the earlier one's, as Flux's OUT merge does; the manager then merges the result
 * into the job's annotations (null values delete keys).
 */
function mergeAnnotations(
  host: StackHost,
  call: StackCall,
  plugin: PluginRecord,
  value: unknown,
): undefined {
  if (value === null || (typeof value === "object" && !Array.isArray(value))) {
    call.out.annotations = value as Record<string, unknown> | null;
  } else {
    host.report("warn", `${label(plugin, call.topic, call.id)}: annotations must be an object; ignored`);
  }
  return undefined;
}

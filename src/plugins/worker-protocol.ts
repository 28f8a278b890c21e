/**
 * The typed messages between the host and an isolated plugin's worker thread (isolate.ts on
 * the host side, isolate-worker.ts in the worker). Everything here is plain data: errors
 * cross as `JobtapErrorData`, ClassAds as their JSON form.
 *
 * Channels, all opened by the host for one worker session:
 * - `port` (both ways): the host sends batches of `ToWorker`, the worker sends batches of
 *   `ToHost`. One port, so the worker's context calls and handler results reach the host in
 *   the order the plugin made them: a call made inside a handler is applied while that
 *   handler's job is still current for the plugin, as in process.
 * - `replyPort` (host to worker): answers to synchronous context calls only. The worker
 *   blocks on `signal` (Atomics.wait) until the host stores 1 there, then reads the answer
 *   with receiveMessageOnPort; so `p.postEvent(...)` throws at the call site, as in process.
 */
import { isJobtapError, type ErrorCode, type JobtapErrorData } from "../errors.js";
import type { JobId } from "../manager/base/ids.js";
import type { CallInfo } from "../manager/port/topics.js";
import type { ContextMethod } from "./context-methods.js";
import type { LoadSortOrder, ServiceCred } from "./record.js";

/** The session task handed to the tinypool worker (the only `pool.run` argument). */
export interface SessionTask {
  /** Where the plugin module is: an absolute file path. */
  path: string;
  /** The list name (`fairshare.ts`): messages and `p.name`. */
  name: string;
  conf: Record<string, unknown>;
  owner: number;
  /** A multi-user instance: `p.hookUsers` refuses (the launcher is the host's, not the worker's). */
  multiUser?: boolean;
  /** The host clock's time when the session started (ms since the epoch). */
  now: number;
  /** A fresh import for every session (module cache key), as each in-process load is. */
  seq: number;
  port: MessagePortLike;
  replyPort: MessagePortLike;
  /** Int32Array(1) over a SharedArrayBuffer: 1 once a synchronous answer is on replyPort. */
  signal: Int32Array;
}

/** What a session task resolves to when the plugin is removed. */
export interface SessionEnd {
  removed: true;
}

/** Enough of a MessagePort for the protocol's types (node:worker_threads' at runtime). */
export interface MessagePortLike {
  postMessage(value: unknown, transfer?: readonly unknown[]): void;
}

// --- host to worker ---------------------------------------------------------------------

/** Run the plugin's handler number `handler` (its registration order). */
export interface CallMessage {
  t: "call";
  seq: number;
  handler: number;
  args: unknown;
  info: CallInfo;
}

/** Run a registered service. */
export interface ServiceMessage {
  t: "service";
  seq: number;
  method: string;
  payload: unknown;
  cred: ServiceCred;
}

/** A `p.clock.setTimeout` timer of the plugin fired on the host clock. */
export interface TimerMessage {
  t: "timer";
  timer: number;
}

/** The job went inactive (or the plugin is being removed): run its aux destructors. */
export interface AuxGoneMessage {
  t: "aux-gone";
  id: JobId;
}

/** The answer to an asynchronous context call (`p.call`). */
export interface AnswerMessage {
  t: "answer";
  seq: number;
  result: Outcome;
}

/** The plugin is being removed: run its onRemove functions; the session ends. */
export interface RemoveMessage {
  t: "remove";
}

export type ToWorker = CallMessage | ServiceMessage | TimerMessage | AuxGoneMessage | AnswerMessage | RemoveMessage;

/** A batch host to worker, stamped with the host clock (what `p.clock.now()` returns). */
export interface HostBatch {
  now: number;
  messages: ToWorker[];
}

// --- worker to host ---------------------------------------------------------------------

/** Setup finished: what the plugin registered, for the host's proxy record. */
export interface ReadyMessage {
  t: "ready";
  ownName: string | undefined;
  handlers: string[];
  services: Array<{ method: string; guests: boolean }>;
  sortOrder: LoadSortOrder;
}

/**
 * The module exports a name: sent before setup runs, so that what setup keeps (persistent
 * state) is kept under the name the plugin is listed by, as for an in-process plugin.
 */
export interface NamedMessage {
  t: "named";
  ownName: string;
}

/** The module did not import, has the wrong shape, or its setup failed. */
export interface LoadFailedMessage {
  t: "load-failed";
  error: JobtapErrorData;
}

/** A handler's or service's outcome. */
export interface ResultMessage {
  t: "result";
  seq: number;
  result: Outcome;
}

/**
 * A context call, `mode` being its row's crossing (context-methods.ts): `sync` blocks the
 * worker until the answer is on replyPort; `async` is answered by an AnswerMessage;
 * `oneway` expects no answer (logging, timers: calls that cannot fail).
 */
export interface ContextMessage {
  t: "ctx";
  mode: "sync" | "async" | "oneway";
  seq: number;
  method: ContextMethod;
  args: unknown[];
}

export type ToHost = NamedMessage | ReadyMessage | LoadFailedMessage | ResultMessage | ContextMessage;

/** Success with a value, or a failure as plain data. */
export type Outcome = { ok: true; value: unknown } | { ok: false; error: JobtapErrorData };

/** The context calls that cross the thread: the crossing rows of context-methods.ts. */
export type { ContextMethod };

/** An error as plain data (a JobtapError keeps its code; anything else gets `fallback`). */
export function errorData(e: unknown, fallback: ErrorCode): JobtapErrorData {
  if (isJobtapError(e)) {
    const { code, message, details } = e;
    return details === undefined ? { code, message: String(message) } : { code, message: String(message), details };
  }
  const message = e instanceof Error ? e.message : String(e);
  return { code: fallback, message };
}

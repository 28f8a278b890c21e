/**
 * The plugin trace (`jobtap plugin trace`): a live stream of plugin handler calls (plugin,
 * topic, job, duration, OUT or error) and job state transitions, for debugging a policy in
 * production. Built on the dispatcher's inspection stream and the manager's journal, both
 * of which cost nothing while nobody listens: a trace subscribes when it starts and
 * unsubscribes when its client leaves.
 */
import { minimatch } from "minimatch";
import { ErrorCode, JobtapError } from "../errors.js";
import { formatJobId, type JobId } from "../manager/base/ids.js";
import type { State } from "../manager/base/states.js";
import type { HandlerOutcome, HandlerRecord } from "./stack.js";

/** What a trace keeps; every field optional (all of it when none is given). */
export interface TraceFilter {
  /** A plugin's list name (or a glob over names). Only handler calls then. */
  plugin?: string;
  /** A topic glob (`job.state.*`). Only handler calls then. */
  topic?: string;
  /** One job: its handler calls and its transitions. */
  job?: JobId;
}

/** One handler call. `ms` includes an async (or isolated) handler's wait. */
export interface TraceCall {
  kind: "call";
  plugin: string;
  topic: string;
  /** The job, in f58. */
  job?: string;
  ms: number;
  async: boolean;
  outcome: HandlerOutcome;
  /** The handler's OUT value (when it returned one). */
  out?: unknown;
  /** The rejection or error message. */
  message?: string;
}

/** One job state transition and the event that caused it. */
export interface TraceTransition {
  kind: "state";
  job: string;
  prev: State;
  state: State;
  event: string;
}

export type TraceRecord = TraceCall | TraceTransition;

/** What a trace subscribes to. */
export interface TraceSources {
  inspect(listener: (r: HandlerRecord) => void): () => void;
  onTransition(listener: (t: { id: JobId; prev: State; state: State; event: string }) => void): () => void;
}

/** Checks a filter's globs once; throws INVALID_ARGUMENT naming the bad one. */
function compile(glob: string | undefined, what: string): ((s: string) => boolean) | undefined {
  if (glob === undefined) return undefined;
  if (glob.length === 0) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `plugin trace: ${what} must not be empty`);
  const re = minimatch.makeRe(glob, { nobrace: true, noext: true, nonegate: true, dot: true });
  if (re === false) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `plugin trace: invalid ${what} glob "${glob}"`);
  return (s) => re.test(s);
}

/**
 * Starts a trace: `emit` gets every record the filter keeps, until the returned function
 * is called.
 */
export function startTrace(sources: TraceSources, filter: TraceFilter, emit: (r: TraceRecord) => void): () => void {
  const plugin = compile(filter.plugin, "--plugin");
  const topic = compile(filter.topic, "--topic");
  const { job } = filter;
  const stopCalls = sources.inspect((r) => {
    if (plugin !== undefined && !plugin(r.plugin)) return;
    if (topic !== undefined && !topic(r.topic)) return;
    if (job !== undefined && r.id !== job) return;
    emit(callRecord(r));
  });
  // Transitions belong to no plugin and no topic: a trace narrowed to either leaves them out.
  const stopStates =
    plugin !== undefined || topic !== undefined
      ? () => undefined
      : sources.onTransition((t) => {
          if (job !== undefined && t.id !== job) return;
          emit({ kind: "state", job: formatJobId(t.id), prev: t.prev, state: t.state, event: t.event });
        });
  return () => {
    stopCalls();
    stopStates();
  };
}

function callRecord(r: HandlerRecord): TraceCall {
  const out: TraceCall = { kind: "call", plugin: r.plugin, topic: r.topic, ms: r.ms, async: r.async, outcome: r.outcome };
  if (r.id !== undefined) out.job = formatJobId(r.id);
  if (r.out !== undefined) out.out = r.out;
  if (r.message !== undefined) out.message = r.message;
  return out;
}

/** One record as `jobtap plugin trace` prints it (without --json). */
export function formatTrace(r: TraceRecord): string {
  if (r.kind === "state") return `${r.job} ${r.prev} -> ${r.state} (${r.event})`;
  const job = r.job === undefined ? "" : ` ${r.job}`;
  const what = r.outcome === "ok" ? (r.out === undefined ? "ok" : `ok ${JSON.stringify(r.out)}`) : `${r.outcome}: ${r.message ?? ""}`;
  return `${r.ms.toFixed(3)} ms ${r.plugin} ${r.topic}${job} ${what}`;
}

/**
 * The pure state machine: `transition(job, entry)` folds one eventlog entry into a job's
 * recorded state. No I/O, no plugin calls, no clock: the manager runs the consequences
 * (callbacks, state actions), and restart replay reuses this same function.
 */
import type { JobId } from "./ids.js";
import type { EventEntry, Jobspec } from "./port.js";
import { checkContext, eventBit, SETTABLE_FLAGS, SUBMIT_FLAG } from "./events.js";
import { PRIORITY_UNSET, STRICT_EVENTS, TRANSITIONS, type JobResult, type State } from "./states.js";
import { applyJobspecUpdates, mergeNullDeletes } from "./jobspec.js";

/** What an eventlog determines about a job. Immutable: transitions return a new object. */
export interface JobCore {
  readonly id: JobId;
  readonly state: State;
  readonly userid: number;
  readonly urgency: number;
  /** -1 until the first `priority` event. */
  readonly priority: number;
  /** Submit flag bits (debug=2, waitable=4, novalidate=8). */
  readonly submitFlags: number;
  /** Flags set by `set-flags` (alloc-bypass, debug, immutable). */
  readonly flags: readonly string[];
  /** Seconds since the epoch, from the `submit` timestamp. */
  readonly t_submit: number;
  readonly t_clean?: number;
  readonly jobspec: Jobspec;
  readonly R?: Record<string, unknown>;
  readonly endEvent?: EventEntry;
  readonly annotations: Record<string, unknown> | null;
  /** Outstanding dependencies, insertion order. */
  readonly dependencies: readonly string[];
  /** Every dependency description ever added (RFC 26's grudge set). */
  readonly grudge: readonly string[];
  readonly hasResources: boolean;
  readonly started: boolean;
  readonly freePosted: boolean;
  /** Active prologs/epilogs (Flux's perilog_active, 0..255). */
  readonly perilog: number;
  /** Eventlog is read-only (invalidated or INACTIVE). */
  readonly readonly: boolean;
  /** Bitmap of known event names ever posted (see eventBit). */
  readonly posted: number;
  /** Plugin-defined event names ever posted. */
  readonly postedOther: readonly string[];
}

export type TransitionResult =
  | { ok: true; job: JobCore; prev: State }
  | { ok: false; error: string };

/** A fresh job in NEW, before its `submit` event. */
export function newJobCore(id: JobId, jobspec: Jobspec): JobCore {
  return {
    id,
    state: "NEW",
    userid: 0,
    urgency: 16,
    priority: PRIORITY_UNSET,
    submitFlags: 0,
    flags: [],
    t_submit: 0,
    t_clean: undefined,
    jobspec,
    R: undefined,
    endEvent: undefined,
    annotations: null,
    dependencies: [],
    grudge: [],
    hasResources: false,
    started: false,
    freePosted: false,
    perilog: 0,
    readonly: false,
    posted: 0,
    postedOther: [],
  };
}

/** The state `entry` moves a job in `state` to, per TRANSITIONS (undefined: no change). */
export function nextState(state: State, entry: EventEntry): State | undefined {
  if (entry.name === "exception" && (entry.context?.severity as number) !== 0) return undefined;
  return (TRANSITIONS[state] as Readonly<Record<string, State>>)[entry.name];
}

/**
 * Folds `entry` into `job`. Returns the next job (never mutating the input) or an error
 * message when the event may not be applied (bad context, wrong state, unknown dependency,
 * fatal exception in NEW, read-only eventlog).
 */
export function transition(job: JobCore, entry: EventEntry): TransitionResult {
  const bad = checkContext(entry);
  if (bad) return { ok: false, error: bad };
  if (job.readonly) return { ok: false, error: `event "${entry.name}": eventlog is read-only` };
  const strict = STRICT_EVENTS[entry.name];
  if (strict && !strict.includes(job.state)) {
    return { ok: false, error: `event "${entry.name}" is not valid in state ${job.state}` };
  }
  const changes = applyEffects(job, entry);
  if (typeof changes === "string") return { ok: false, error: changes };
  const to = nextState(job.state, entry) ?? job.state;
  const bit = eventBit(entry.name);
  // Copy with a fixed literal shape (fast property access), then apply the changes.
  const next = cloneCore(job);
  Object.assign(next, changes);
  enterState(next, job.state, to, entry);
  next.posted = job.posted | bit;
  if (bit === 0 && !job.postedOther.includes(entry.name)) next.postedOther = [...job.postedOther, entry.name];
  return { ok: true, job: next, prev: job.state };
}

/** A copy of `job` with some recorded fields replaced (outside the eventlog: plugin OUT). */
export function updateCore(job: JobCore, changes: Partial<Omit<JobCore, "id">>): JobCore {
  return Object.assign(cloneCore(job), changes);
}

type MutableCore = { -readonly [K in keyof JobCore]: JobCore[K] };

function cloneCore(j: JobCore): MutableCore {
  return {
    id: j.id,
    state: j.state,
    userid: j.userid,
    urgency: j.urgency,
    priority: j.priority,
    submitFlags: j.submitFlags,
    flags: j.flags,
    t_submit: j.t_submit,
    t_clean: j.t_clean,
    jobspec: j.jobspec,
    R: j.R,
    endEvent: j.endEvent,
    annotations: j.annotations,
    dependencies: j.dependencies,
    grudge: j.grudge,
    hasResources: j.hasResources,
    started: j.started,
    freePosted: j.freePosted,
    perilog: j.perilog,
    readonly: j.readonly,
    posted: j.posted,
    postedOther: j.postedOther,
  };
}

/** Bookkeeping tied to entering a state: end_event on CLEANUP, read-only on INACTIVE. */
function enterState(next: MutableCore, from: State, to: State, entry: EventEntry): void {
  next.state = to;
  if (to === from) return;
  if (to === "CLEANUP") next.endEvent = next.endEvent ?? entry;
  else if (to === "INACTIVE") {
    next.readonly = true;
    next.t_clean = entry.timestamp;
  }
}

type Changes = Partial<Omit<JobCore, "id" | "state">>;

/** The per-event effect on recorded fields (spec §2.2); a string is a refusal. */
function applyEffects(job: JobCore, e: EventEntry): Changes | string {
  const c = e.context ?? {};
  switch (e.name) {
    case "submit":
      return {
        t_submit: e.timestamp,
        urgency: c.urgency as number,
        userid: c.userid as number,
        submitFlags: (c.flags as number) ?? 0,
      };
    case "invalidate":
      return { readonly: true };
    case "dependency-add":
      return dependencyAdd(job, c.description as string);
    case "dependency-remove":
      return dependencyRemove(job, c.description as string);
    case "priority":
      return job.state === "PRIORITY" || job.state === "SCHED" ? { priority: c.priority as number } : {};
    case "urgency":
      return { urgency: c.urgency as number };
    case "flux-restart":
      return job.state === "SCHED" ? { priority: PRIORITY_UNSET } : {};
    case "alloc":
      return { hasResources: true, R: (c.R as Record<string, unknown> | undefined) ?? job.R ?? {} };
    case "prolog-start":
    case "epilog-start":
      return perilogCount(job, e.name, +1);
    case "prolog-finish":
    case "epilog-finish":
      return perilogCount(job, e.name, -1);
    case "start":
      return { started: true };
    case "free":
      return { hasResources: false, freePosted: true };
    case "exception":
      return exceptionEffects(job, c);
    case "memo":
      return { annotations: memo(job.annotations, c) };
    case "annotations":
      return { annotations: (c.annotations as Record<string, unknown> | null) ?? null };
    case "jobspec-update":
      return { jobspec: applyJobspecUpdates(job.jobspec, c) };
    case "resource-update":
      return { R: withExpiration(job.R, c.expiration as number) };
    case "set-flags":
      return setFlags(job, c.flags as string[]);
    default:
      return {};
  }
}

function dependencyAdd(job: JobCore, d: string): Changes | string {
  if (job.state !== "NEW" && job.state !== "DEPEND") return {};
  // Outstanding duplicate: no-op. Previously removed: tolerated, does not re-block (Flux).
  if (job.grudge.includes(d)) return {};
  return { dependencies: [...job.dependencies, d], grudge: [...job.grudge, d] };
}

function dependencyRemove(job: JobCore, d: string): Changes | string {
  if (job.state !== "NEW" && job.state !== "DEPEND") return {};
  if (!job.dependencies.includes(d)) return `dependency-remove: "${d}" is not an outstanding dependency`;
  return { dependencies: job.dependencies.filter((x) => x !== d) };
}

function perilogCount(job: JobCore, name: string, delta: number): Changes | string {
  const isEpilog = name.startsWith("epilog");
  if (isEpilog && job.state !== "CLEANUP") return {};
  if (!isEpilog && job.started) return {};
  const n = job.perilog + delta;
  if (n > 255) return `${name}: too many active prologs/epilogs (255)`;
  return { perilog: Math.max(0, n) };
}

function exceptionEffects(job: JobCore, c: Record<string, unknown>): Changes | string {
  if (c.severity !== 0) return {};
  if (job.state === "NEW") return "fatal job exception was posted in NEW state";
  if (c.type === "scheduler-restart") return { hasResources: false };
  return {};
}

function memo(annotations: Record<string, unknown> | null, ctx: Record<string, unknown>) {
  const user = mergeNullDeletes((annotations?.user as Record<string, unknown>) ?? {}, ctx);
  const next = { ...(annotations ?? {}), user };
  if (Object.keys(user).length === 0) delete (next as Record<string, unknown>).user;
  return Object.keys(next).length === 0 ? null : next;
}

function withExpiration(R: Record<string, unknown> | undefined, expiration: number) {
  const base = R ?? {};
  const execution = { ...((base.execution as Record<string, unknown>) ?? {}), expiration };
  return { ...base, execution };
}

function setFlags(job: JobCore, flags: string[]): Changes | string {
  const unknown = flags.find((f) => !(SETTABLE_FLAGS as readonly string[]).includes(f));
  if (unknown !== undefined) return `set-flags: unknown flag "${unknown}"`;
  return { flags: [...new Set([...job.flags, ...flags])] };
}

/** True for a job with the debug flag (submit flag bit or `set-flags`): it gets `debug.*` events. */
export function isDebugJob(job: JobCore): boolean {
  return (job.submitFlags & SUBMIT_FLAG.debug) !== 0 || job.flags.includes("debug");
}

/** True if event `name` was ever posted (or replayed) for the job. */
export function eventPosted(job: JobCore, name: string): boolean {
  const bit = eventBit(name);
  return bit !== 0 ? (job.posted & bit) !== 0 : job.postedOther.includes(name);
}

/**
 * The job result (spec §2.6), or undefined when the job has no end event yet. COMPLETED
 * if it ended with `finish` status 0; CANCELED/TIMEOUT for those exception types; else FAILED.
 */
export function resultOf(job: JobCore): JobResult | undefined {
  const end = job.endEvent;
  if (!end) return undefined;
  if (end.name === "finish") return end.context?.status === 0 ? "COMPLETED" : "FAILED";
  if (end.name === "exception") {
    if (end.context?.type === "cancel") return "CANCELED";
    if (end.context?.type === "timeout") return "TIMEOUT";
  }
  return "FAILED";
}

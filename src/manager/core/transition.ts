/**
 * The pure state machine: `transition(job, entry)` folds one eventlog entry into a job's
 * recorded state. No I/O, no plugin calls, no clock: the manager runs the consequences
 * (callbacks, state actions), and restart replay reuses this same function.
 */
import type { JobId } from "../base/ids.js";
import type { EventEntry, Jobspec } from "../port/records.js";
import { checkContext, eventBit, SETTABLE_FLAGS, SUBMIT_FLAG } from "./events.js";
import { PRIORITY_UNSET, STRICT_EVENTS, TRANSITIONS, type JobResult, type State } from "../base/states.js";
import { applyJobspecUpdates, mergeNullDeletes } from "./jobspec.js";
import { smallInt } from "../base/numbers.js";

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
    flags: EMPTY_LIST,
    t_submit: 0,
    t_clean: undefined,
    jobspec,
    R: undefined,
    endEvent: undefined,
    annotations: null,
    dependencies: EMPTY_LIST,
    grudge: EMPTY_LIST,
    hasResources: false,
    started: false,
    freePosted: false,
    perilog: 0,
    readonly: false,
    posted: 0,
    postedOther: EMPTY_LIST,
  };
}

/** The state `entry` moves a job in `state` to, per TRANSITIONS (undefined: no change). */
function nextState(state: State, entry: EventEntry, rule: Rule): State | undefined {
  if (entry.name === "exception" && (entry.context?.severity as number) !== 0) return undefined;
  return rule.to[state];
}

/**
 * Folds `entry` into `job`. Returns the next job (never mutating the input) or an error
 * message when the event may not be applied (bad context, wrong state, unknown dependency,
 * fatal exception in NEW, read-only eventlog).
 */
export function transition(job: JobCore, entry: EventEntry): TransitionResult {
  const bad = refusal(job, entry);
  if (bad !== undefined) return { ok: false, error: bad };
  const next = cloneCore(job);
  const error = applyEffects(next, entry);
  if (error !== undefined) return { ok: false, error };
  finish(next, job.state, entry);
  return { ok: true, job: next, prev: job.state };
}

/**
 * The engine's hot path: the same rules as `transition()`, applied to `job` itself instead
 * of a copy (no record allocated per event). Returns undefined once applied, or the error
 * message, in which case `job` is untouched. Only the owner of `job` may call this (the
 * engine, on its active jobs); whoever must keep a snapshot uses `transition()`.
 */
export function applyEvent(job: JobCore, entry: EventEntry): string | undefined {
  const rule = ruleOf(entry.name);
  const bad = refusal(job, entry, rule);
  if (bad !== undefined) return bad;
  const from = job.state;
  const error = applyEffects(job as MutableCore, entry);
  if (error !== undefined) return error;
  finish(job as MutableCore, from, entry, rule);
  return undefined;
}

/** What the tables say of one event name (one lookup per event instead of three). */
interface Rule {
  /** Its bit in `posted` (0: a plugin-defined name). */
  bit: number;
  strict: readonly State[] | undefined;
  /** The state it moves a job to from each state (absent: none). */
  to: Readonly<Partial<Record<State, State>>>;
}
const RULES = new Map<string, Rule>();
const OTHER_RULE: Rule = Object.freeze({ bit: 0, strict: undefined, to: Object.freeze({}) });

function ruleOf(name: string): Rule {
  const known = RULES.get(name);
  if (known !== undefined) return known;
  const bit = eventBit(name);
  const to: Partial<Record<State, State>> = {};
  for (const [from, moves] of Object.entries(TRANSITIONS) as Array<[State, Readonly<Record<string, State>>]>) {
    if (hasOwn.call(moves, name)) to[from] = moves[name];
  }
  const strict = hasOwn.call(STRICT_EVENTS, name) ? STRICT_EVENTS[name] : undefined;
  if (bit === 0 && strict === undefined && Object.keys(to).length === 0) return OTHER_RULE; // plugin names: not kept
  const rule = Object.freeze({ bit, strict, to: Object.freeze(to) });
  RULES.set(name, rule);
  return rule;
}
const hasOwn = Object.prototype.hasOwnProperty;

/** Why `entry` may not be applied to `job` at all (context, read-only, strict state). */
function refusal(job: JobCore, entry: EventEntry, rule: Rule = ruleOf(entry.name)): string | undefined {
  const bad = checkContext(entry);
  if (bad) return bad;
  if (job.readonly) return `event "${entry.name}": eventlog is read-only`;
  const strict = rule.strict;
  if (strict && !strict.includes(job.state)) return `event "${entry.name}" is not valid in state ${job.state}`;
  return undefined;
}

/** After the effects: the state entered and the event recorded as posted. */
function finish(next: MutableCore, from: State, entry: EventEntry, rule: Rule = ruleOf(entry.name)): void {
  const to = nextState(from, entry, rule) ?? from;
  enterState(next, from, to, entry);
  const bit = rule.bit;
  next.posted |= bit;
  if (bit === 0 && !next.postedOther.includes(entry.name)) next.postedOther = [...next.postedOther, entry.name];
}

type MutableCore = { -readonly [K in keyof JobCore]: JobCore[K] };

/** A copy with a fixed literal shape (fast property access). */
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

/**
 * The per-event effect on recorded fields (spec §2.2), written into `j`; a string is a
 * refusal, returned before anything is written. Fields are replaced, never mutated: arrays
 * and objects of a core may be shared with snapshots and plugin args.
 */
function applyEffects(j: MutableCore, e: EventEntry): string | undefined {
  const c = e.context ?? NO_CONTEXT;
  switch (e.name) {
    case "submit":
      j.t_submit = e.timestamp;
      j.urgency = c.urgency as number;
      j.userid = c.userid as number;
      j.submitFlags = (c.flags as number) ?? 0;
      return undefined;
    case "invalidate":
      j.readonly = true;
      return undefined;
    case "dependency-add":
      return dependencyAdd(j, c.description as string);
    case "dependency-remove":
      return dependencyRemove(j, c.description as string);
    case "priority":
      if (j.state === "PRIORITY" || j.state === "SCHED") j.priority = smallInt(c.priority as number);
      return undefined;
    case "urgency":
      j.urgency = c.urgency as number;
      return undefined;
    case "flux-restart":
      if (j.state === "SCHED") j.priority = PRIORITY_UNSET;
      return undefined;
    case "alloc":
      j.hasResources = true;
      j.R = (c.R as Record<string, unknown> | undefined) ?? j.R ?? {};
      return undefined;
    case "prolog-start":
    case "epilog-start":
      return perilogCount(j, e.name, +1);
    case "prolog-finish":
    case "epilog-finish":
      return perilogCount(j, e.name, -1);
    case "start":
      j.started = true;
      return undefined;
    case "free":
      j.hasResources = false;
      j.freePosted = true;
      return undefined;
    case "exception":
      return exceptionEffects(j, c);
    case "memo":
      j.annotations = memo(j.annotations, c);
      return undefined;
    case "annotations":
      j.annotations = (c.annotations as Record<string, unknown> | null) ?? null;
      return undefined;
    case "jobspec-update":
      j.jobspec = applyJobspecUpdates(j.jobspec, c);
      return undefined;
    case "resource-update":
      j.R = withExpiration(j.R, c.expiration as number);
      return undefined;
    case "set-flags":
      return setFlags(j, c.flags as string[]);
    default:
      return undefined;
  }
}

const NO_CONTEXT: Record<string, unknown> = Object.freeze({});

/** Outstanding dependencies and flags are frozen arrays, replaced on change: plugins get
 *  the job's own arrays in their args, not a copy per call. (Also the empty flag list.) */
const EMPTY_LIST: readonly string[] = Object.freeze([]);

function dependencyAdd(j: MutableCore, d: string): string | undefined {
  if (j.state !== "NEW" && j.state !== "DEPEND") return undefined;
  // Outstanding duplicate: no-op. Previously removed: tolerated, does not re-block (Flux).
  if (j.grudge.includes(d)) return undefined;
  j.dependencies = Object.freeze([...j.dependencies, d]);
  j.grudge = [...j.grudge, d];
  return undefined;
}

function dependencyRemove(j: MutableCore, d: string): string | undefined {
  if (j.state !== "NEW" && j.state !== "DEPEND") return undefined;
  if (!j.dependencies.includes(d)) return `dependency-remove: "${d}" is not an outstanding dependency`;
  j.dependencies = Object.freeze(j.dependencies.filter((x) => x !== d));
  return undefined;
}

function perilogCount(j: MutableCore, name: string, delta: number): string | undefined {
  const isEpilog = name.startsWith("epilog");
  if (isEpilog && j.state !== "CLEANUP") return undefined;
  if (!isEpilog && j.started) return undefined;
  const n = j.perilog + delta;
  if (n > 255) return `${name}: too many active prologs/epilogs (255)`;
  j.perilog = Math.max(0, n);
  return undefined;
}

function exceptionEffects(j: MutableCore, c: Record<string, unknown>): string | undefined {
  if (c.severity !== 0) return undefined;
  if (j.state === "NEW") return "fatal job exception was posted in NEW state";
  if (c.type === "scheduler-restart") j.hasResources = false;
  return undefined;
}

/**
 * The annotations a replay of the job's stored eventlog ends with: `memo`s only, since
 * `annotations` events are never stored (NO_COMMIT); a live core also holds plugin
 * annotations. `eventlog` is the job's committed eventlog.
 */
export function storedAnnotations(job: JobCore, eventlog: readonly EventEntry[]): Record<string, unknown> | null {
  if (!eventPosted(job, "memo")) return null;
  let a: Record<string, unknown> | null = null;
  for (const e of eventlog) if (e.name === "memo") a = memo(a, e.context ?? {});
  return a;
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

function setFlags(j: MutableCore, flags: string[]): string | undefined {
  const unknown = flags.find((f) => !(SETTABLE_FLAGS as readonly string[]).includes(f));
  if (unknown !== undefined) return `set-flags: unknown flag "${unknown}"`;
  j.flags = Object.freeze([...new Set([...j.flags, ...flags])]);
  return undefined;
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

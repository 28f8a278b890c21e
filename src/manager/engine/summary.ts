/**
 * Inactive-job summaries: what a replay of an inactive job's eventlog yields that restart
 * needs (its inactive record and the scalar job.inactive-add args), stored beside the
 * eventlog when the job becomes inactive. Restart reads one summary row per inactive job
 * instead of parsing and folding its whole eventlog; the jobspec and R are read from the
 * store only if a plugin asks for them. The eventlog stays the source of truth: a job
 * without a summary (a store written before summaries, a summary that does not parse) is
 * replayed in full, and its summary is written then.
 */
import { jobName, type ActiveJob } from "./job.js";
import type { JobId } from "../base/ids.js";
import type { InactiveRecord } from "./inactive.js";
import type { EventEntry, JobArgs, Jobspec } from "../port/records.js";
import { RESULTS } from "../base/states.js";
import type { PartSink } from "../store/batch-text.js";
import { entryParts } from "./eventlog-text.js";
import { eventPosted, resultOf, storedAnnotations } from "../core/transition.js";

/** A summary as stored (JSON). Every field is what the replayed core holds. */
export interface InactiveSummary {
  userid: number;
  urgency: number;
  priority: number;
  t_submit: number;
  t_clean: number;
  /** Index into RESULTS. */
  result: number;
  name: string;
  waitStatus: number;
  /** The replay's annotations: `memo`s only (plugin annotations are never stored). */
  annotations: Record<string, unknown> | null;
  flags: readonly string[];
  dependencies: readonly string[];
  end_event?: EventEntry;
  /** The replayed core has an R (read lazily from the store). */
  hasR: boolean;
  /** Bytes of the stored jobspec ([limits] jobspec-bytes-per-user counts them at restart). */
  jobspecBytes: number;
}

/**
 * The inactive-cache record of a job that has just become inactive: its annotations are
 * the live ones (plugin annotations included), the other fields are its summary's.
 */
export function inactiveRecordOf(job: ActiveJob): InactiveRecord {
  const c = job.core;
  return {
    id: c.id,
    userid: c.userid,
    urgency: c.urgency,
    priority: c.priority,
    t_submit: c.t_submit,
    t_clean: c.t_clean ?? 0,
    result: RESULTS.indexOf(resultOf(c) ?? "FAILED"),
    name: jobName(c.jobspec),
    waitStatus: waitStatusOf(job),
    annotations: c.annotations,
    jobspecBytes: job.jobspecBytes,
  };
}

/** The status of the job's `finish` event, -1 if it has none. */
function waitStatusOf(job: ActiveJob): number {
  const c = job.core;
  const finish = c.endEvent?.name === "finish" ? c.endEvent : job.eventlog.find((e) => e.name === "finish");
  return typeof finish?.context?.status === "number" ? finish.context.status : -1;
}

/**
 * A replay has an R once alloc or resource-update was posted (a live core may also hold
 * one from a plugin's OUT in SCHED that no event recorded).
 */
function replayHasR(job: ActiveJob): boolean {
  return eventPosted(job.core, "alloc") || eventPosted(job.core, "resource-update");
}

/**
 * The summary of a job that has just become inactive (or was just replayed), as a replay
 * of its stored eventlog would give it: annotations are folded from its `memo`s, not taken
 * from the live core (which holds plugin annotations no eventlog records).
 */
export function summaryOf(job: ActiveJob): InactiveSummary {
  const c = job.core;
  const r = inactiveRecordOf(job);
  const s: InactiveSummary = {
    userid: r.userid,
    urgency: r.urgency,
    priority: r.priority,
    t_submit: r.t_submit,
    t_clean: r.t_clean,
    result: r.result,
    name: r.name,
    waitStatus: r.waitStatus,
    annotations: storedAnnotations(c, job.eventlog),
    flags: c.flags,
    dependencies: c.dependencies,
    hasR: replayHasR(job),
    jobspecBytes: r.jobspecBytes,
  };
  if (c.endEvent !== undefined) s.end_event = c.endEvent;
  return s;
}

/**
 * `JSON.stringify(summaryOf(job))`, written from `r` (the job's inactiveRecordOf) without
 * building the summary: the text every retiring job stores. Same keys in the same order,
 * numbers as JSON writes them (test/manager/summary-text.test.ts compares the two).
 */
export function summaryText(job: ActiveJob, r: InactiveRecord): string {
  const parts: string[] = [];
  summaryParts(job, r, parts);
  return parts.join("");
}

/**
 * summaryText as parts pushed to `out` (their concatenation is the text); returns its
 * length. The store batch takes them as they are and joins them with the rest of its text,
 * so the summary is never a string of its own (a tree of a few dozen small strings).
 */
export function summaryParts(job: ActiveJob, r: InactiveRecord, out: PartSink): number {
  const c = job.core;
  const annotations = storedAnnotations(c, job.eventlog);
  const head = headText(r);
  const t_submit = num(r.t_submit);
  const t_clean = num(r.t_clean);
  const end = c.endEvent;
  const rest = restText(r, annotations === null ? "null" : JSON.stringify(annotations), list(c.flags), list(c.dependencies), replayHasR(job), r.jobspecBytes, end !== undefined);
  out.push(head);
  out.push(t_submit);
  out.push(',"t_clean":');
  out.push(t_clean);
  out.push(rest);
  let n = head.length + t_submit.length + 11 + t_clean.length + rest.length;
  if (end === undefined) {
    out.push("}");
    return n + 1;
  }
  // The entry's closing brace and the summary's are one part (entryParts' tail).
  return n + entryParts(end, out, "}}");
}

/**
 * The text of a summary before its `t_submit` value and after its `t_clean` value: the same
 * for every job of one user, urgency and priority, and for every job ending the same way
 * (result, name, wait status, no annotations, flags or dependencies): made once for a run
 * of such jobs, a summary is a few strings instead of two dozen.
 */
let lastHead = { userid: NaN, urgency: NaN, priority: NaN, text: "" };
let lastRest = { result: NaN, name: "", waitStatus: NaN, annotations: "", flags: "", dependencies: "", hasR: false, bytes: NaN, end: false, text: "" };

function headText(r: InactiveRecord): string {
  const h = lastHead;
  if (h.userid === r.userid && h.urgency === r.urgency && h.priority === r.priority) return h.text;
  const text = `{"userid":${num(r.userid)},"urgency":${num(r.urgency)},"priority":${num(r.priority)},"t_submit":`;
  lastHead = { userid: r.userid, urgency: r.urgency, priority: r.priority, text };
  return text;
}

/** From `"result"` to `jobspecBytes`' value, and the `end_event` key if the summary has one. */
function restText(r: InactiveRecord, annotations: string, flags: string, dependencies: string, hasR: boolean, bytes: number, end: boolean): string {
  const l = lastRest;
  if (
    l.result === r.result &&
    l.name === r.name &&
    l.waitStatus === r.waitStatus &&
    l.annotations === annotations &&
    l.flags === flags &&
    l.dependencies === dependencies &&
    l.hasR === hasR &&
    l.bytes === bytes &&
    l.end === end
  ) {
    return l.text;
  }
  const text =
    `,"result":${num(r.result)},"name":${JSON.stringify(r.name)},"waitStatus":${num(r.waitStatus)},"annotations":${annotations}` +
    `,"flags":${flags},"dependencies":${dependencies},"hasR":${hasR ? "true" : "false"},"jobspecBytes":${num(bytes)}${end ? ',"end_event":' : ""}`;
  lastRest = { result: r.result, name: r.name, waitStatus: r.waitStatus, annotations, flags, dependencies, hasR, bytes, end, text };
  return text;
}

/** A number as JSON writes it (non-finite ones as null). */
function num(n: number): string {
  return Number.isFinite(n) ? String(n) : "null";
}

/** A list of strings as JSON (the empty list, the usual case, without a call). */
function list(l: readonly string[]): string {
  return l.length === 0 ? "[]" : JSON.stringify(l);
}

/**
 * On job args whose `jobspec` is read from the store on demand, a method taking a function
 * every jobspec read then goes through: the plugin host's read-only copy (src/plugins/
 * shield.ts) keeps the read on demand. Absent on other args.
 */
export const STORED_JOBSPEC: unique symbol = Symbol("jobtap.storedJobspec");

/** A stored summary, or undefined if it is not one (the job is then replayed in full). */
export function parseSummary(text: string): InactiveSummary | undefined {
  let s: Partial<InactiveSummary>;
  try {
    s = JSON.parse(text) as Partial<InactiveSummary>;
  } catch {
    return undefined;
  }
  // A summary written before jobspecBytes was kept has none: that job is replayed once.
  const numbers = [s?.userid, s?.urgency, s?.priority, s?.t_submit, s?.t_clean, s?.result, s?.waitStatus, s?.jobspecBytes];
  if (numbers.some((n) => typeof n !== "number") || typeof s.name !== "string" || typeof s.hasR !== "boolean") return undefined;
  if (!Array.isArray(s.flags) || !Array.isArray(s.dependencies)) return undefined;
  return s as InactiveSummary;
}

/** The inactive-cache record of a summarized job (`annotations`: the live ones if known). */
export function recordOf(id: JobId, s: InactiveSummary, annotations = s.annotations): InactiveRecord {
  return {
    id,
    userid: s.userid,
    urgency: s.urgency,
    priority: s.priority,
    t_submit: s.t_submit,
    t_clean: s.t_clean,
    result: s.result,
    name: s.name,
    waitStatus: s.waitStatus,
    annotations,
    jobspecBytes: s.jobspecBytes,
  };
}

type StoredView = () => { jobspec: Jobspec; R?: Record<string, unknown> } | undefined;

/**
 * The IN args of a stored inactive job (restart's job.inactive-add and job.destroy): the
 * scalar args from its summary as own properties; `jobspec` (and `R`, if the replayed job
 * has one) are getters on the prototype that read and replay the job from the store the
 * first time a plugin reads them. A class, because per-object accessors cost V8 about ten
 * times more to create, and this runs once per inactive job at every start.
 */
class StoredJobArgs {
  readonly id: JobId;
  readonly userid: number;
  readonly urgency: number;
  readonly priority: number;
  readonly state = "INACTIVE" as const;
  readonly t_submit: number;
  readonly dependencies: string[];
  readonly annotations: Record<string, unknown> | null;
  readonly flags: readonly string[];
  declare end_event?: EventEntry;
  // Private: own properties a plugin could see (keys, spread, clone) are only the args'.
  readonly #stored: StoredView;
  #wrap: ((js: Jobspec) => Jobspec) | undefined;

  constructor(id: JobId, s: InactiveSummary, stored: StoredView) {
    this.id = id;
    this.userid = s.userid;
    this.urgency = s.urgency;
    this.priority = s.priority;
    this.t_submit = s.t_submit;
    this.dependencies = [...s.dependencies];
    this.annotations = s.annotations;
    this.flags = s.flags;
    if (s.end_event !== undefined) this.end_event = s.end_event;
    this.#stored = stored;
  }

  get jobspec(): Jobspec {
    const js = this.#stored()?.jobspec;
    return (js && this.#wrap ? this.#wrap(js) : js)!;
  }

  protected storedR(): Record<string, unknown> | undefined {
    return this.#stored()?.R;
  }

  [STORED_JOBSPEC](wrap: (js: Jobspec) => Jobspec): void {
    this.#wrap = wrap;
  }
}

/** The args of a stored inactive job that had resources: `R` read on demand too. */
class StoredJobArgsR extends StoredJobArgs {
  get R(): Record<string, unknown> | undefined {
    return this.storedR();
  }
}

/**
 * The IN args of a stored inactive job, equal in value to those the replayed job would get
 * (`jobspec` and `R` read from the store only when a plugin reads them: see StoredJobArgs).
 */
export function summaryArgs(id: JobId, s: InactiveSummary, view: StoredView): JobArgs {
  let loaded: ReturnType<StoredView>;
  const stored = () => (loaded ??= view());
  return (s.hasR ? new StoredJobArgsR(id, s, stored) : new StoredJobArgs(id, s, stored)) as unknown as JobArgs;
}

/**
 * `job why`, the state machine's part (issue 36): what the job's own record says holds it —
 * held (urgency 0: by whom, when, from the eventlog), each outstanding dependency (with the
 * antecedent's state when the description names a job), begin-time, a stopped queue, a
 * bypassed alloc, and the states past SCHED. Pure reads: nothing here runs unless asked.
 */
import { formatJobId, parseJobId, type JobId } from "./base/ids.js";
import type { ActiveJob } from "./engine/job.js";
import type { EventEntry } from "./port/records.js";
import type { Figure, Reason } from "./port/reasons.js";

/** What the state producers read besides the job. */
export interface StateLookups {
  /** The state of a job the manager knows (active or inactive), undefined if unknown. */
  stateOf(id: JobId): string | undefined;
  /** The job's queue when that queue is stopped, else undefined. */
  stoppedQueue(job: ActiveJob): string | undefined;
  userName(uid: number): string;
}

/** A reason from the manager itself. */
export function managerReason(code: string, text: string, figures: Record<string, Figure> = {}, key?: string): Reason {
  const r: Reason = { layer: "state", source: "manager", code, text, figures };
  if (key !== undefined) r.key = key;
  return r;
}

/** Seconds since the epoch as local time with its offset: `2026-11-28 14:05:00 +0100`. */
export function localTime(seconds: number): string {
  const d = new Date(seconds * 1000);
  const pad = (n: number) => String(n).padStart(2, "0");
  const off = -d.getTimezoneOffset();
  const sign = off < 0 ? "-" : "+";
  const zone = `${sign}${pad(Math.floor(Math.abs(off) / 60))}${pad(Math.abs(off) % 60)}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())} ${zone}`;
}

/** The state machine's reasons for an active job, in the order they hold it. */
export function stateReasons(job: ActiveJob, at: StateLookups): Reason[] {
  const c = job.core;
  switch (c.state) {
    case "NEW":
      return [managerReason("admission", "being admitted (its submission is not yet durable)")];
    case "DEPEND":
      return c.dependencies.map((d) => dependencyReason(d, at));
    case "SCHED":
      return schedStateReasons(job, at);
    case "RUN":
      return [managerReason("running", "running", { since: eventTime(job.eventlog, "start") })];
    case "CLEANUP":
      return [managerReason("cleanup", `finishing: ${c.perilog} epilog(s) or cleanup step(s) active`, { perilog: c.perilog })];
    default:
      return [];
  }
}

/** A held job, an alloc-bypass job, or a stopped queue's; none: the scheduler's turn. */
function schedStateReasons(job: ActiveJob, at: StateLookups): Reason[] {
  const c = job.core;
  if (c.urgency === 0) return [heldReason(job, at)];
  const out: Reason[] = [];
  if (c.priority === 0) out.push(managerReason("priority-zero", "priority 0: a priority plugin holds it", { priority: 0 }));
  if (c.flags.includes("alloc-bypass")) {
    out.push(managerReason("alloc-bypass", "alloc-bypass: waits for a plugin to supply its resources", { flag: "alloc-bypass" }));
  }
  const queue = at.stoppedQueue(job);
  if (queue !== undefined) {
    const name = queue === "" ? "the anonymous queue" : `queue ${queue}`;
    out.push(managerReason("queue-stopped", `${name} is stopped`, { queue }, `queue-stopped:${queue}`));
  }
  return out;
}

/** Held: urgency 0, by whom and when (the last `urgency` event, else the submit). */
function heldReason(job: ActiveJob, at: StateLookups): Reason {
  const e = lastEvent(job.eventlog, "urgency") ?? lastEvent(job.eventlog, "submit");
  const by = typeof e?.context?.userid === "number" ? e.context.userid : job.core.userid;
  const when = e?.timestamp ?? job.core.t_submit;
  return managerReason("held", `held (urgency 0) by ${at.userName(by)} (uid ${by}) since ${localTime(when)}`, {
    urgency: 0,
    userid: by,
    user: at.userName(by),
    since: when,
  });
}

/**
 * One outstanding dependency. The description is the plugin's (`after-ok=ƒ2`,
 * `begin-time=1700000000.000`); a value that names a known job adds its state, and a
 * begin-time its local time. The plugin that added it may explain it better (same key).
 */
function dependencyReason(description: string, at: StateLookups): Reason {
  const key = `dependency:${description}`;
  const eq = description.indexOf("=");
  const scheme = eq < 0 ? description : description.slice(0, eq);
  const value = eq < 0 ? "" : description.slice(eq + 1);
  if (scheme === "begin-time" && Number.isFinite(Number(value))) {
    const t = Number(value);
    return managerReason("begin-time", `begin time not reached: ${localTime(t)}`, { dependency: description, begin: t }, key);
  }
  const ante = antecedentOf(value);
  const state = ante === undefined ? undefined : at.stateOf(ante);
  if (ante === undefined || state === undefined) {
    return managerReason("dependency", `dependency ${description} outstanding`, { dependency: description, scheme }, key);
  }
  const id = formatJobId(ante);
  return managerReason("dependency", `dependency ${description} outstanding: job ${id} is ${state}`, {
    dependency: description,
    scheme,
    antecedent: id,
    antecedent_state: state,
  }, key);
}

function antecedentOf(value: string): JobId | undefined {
  if (value === "") return undefined;
  try {
    return parseJobId(value);
  } catch {
    return undefined;
  }
}

/** The last entry named `name`, scanning from the end (eventlogs are short). */
export function lastEvent(eventlog: readonly EventEntry[], name: string): EventEntry | undefined {
  for (let i = eventlog.length - 1; i >= 0; i--) if (eventlog[i]!.name === name) return eventlog[i];
  return undefined;
}

function eventTime(eventlog: readonly EventEntry[], name: string): number | null {
  return lastEvent(eventlog, name)?.timestamp ?? null;
}

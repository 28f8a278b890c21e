/**
 * Eventlog entries (RFC 18 lines, RFC 21 names and contexts) as a discriminated union on
 * `name`, plus the checks the manager applies to contexts before an event is processed.
 */
import type { EventEntry } from "../port/records.js";

export type { EventEntry };

/** The RFC 21 events the job manager itself understands, with their contexts. */
export interface EventContexts {
  submit: { urgency: number; userid: number; flags: number; version: number };
  validate: Record<string, never>;
  invalidate: Record<string, never>;
  "dependency-add": { description: string };
  "dependency-remove": { description: string };
  depend: Record<string, never>;
  priority: { priority: number };
  urgency: { urgency: number; userid: number };
  "flux-restart": Record<string, never>;
  alloc: { R?: Record<string, unknown>; annotations?: Record<string, unknown>; bypass?: boolean };
  "prolog-start": { description: string };
  "prolog-finish": { description: string; status: number };
  start: Record<string, never>;
  finish: { status: number };
  release: { ranks: string; final: boolean };
  "epilog-start": { description: string };
  "epilog-finish": { description: string; status: number };
  free: Record<string, never>;
  clean: Record<string, never>;
  exception: { type: string; severity: number; note: string; userid?: number; wait_status?: number };
  memo: Record<string, unknown>;
  "jobspec-update": Record<string, unknown>;
  "resource-update": { expiration: number };
  "set-flags": { flags: string[] };
  annotations: { annotations: Record<string, unknown> | null };
}

export type EventName = keyof EventContexts;

/** Every known event name; the index is the bit in a job's "posted" bitmap. */
export const EVENT_NAMES = [
  "submit",
  "validate",
  "invalidate",
  "dependency-add",
  "dependency-remove",
  "depend",
  "priority",
  "urgency",
  "flux-restart",
  "alloc",
  "prolog-start",
  "prolog-finish",
  "start",
  "finish",
  "release",
  "epilog-start",
  "epilog-finish",
  "free",
  "clean",
  "exception",
  "memo",
  "jobspec-update",
  "resource-update",
  "set-flags",
  "annotations",
] as const satisfies readonly EventName[];

const EVENT_BIT = new Map<string, number>(EVENT_NAMES.map((n, i) => [n, 1 << i]));

/** The posted-bitmap bit of a known event name, or 0 for other (plugin-defined) names. */
export function eventBit(name: string): number {
  return EVENT_BIT.get(name) ?? 0;
}

/** A typed entry, narrowed by name. */
export type TypedEntry<N extends EventName> = {
  timestamp: number;
  name: N;
  context: EventContexts[N];
};

/** Narrowing helper: true if `e` is the named event (its context then has that type). */
export function isEvent<N extends EventName>(e: EventEntry, name: N): e is TypedEntry<N> {
  return e.name === name;
}

/**
 * Events journaled but never written to the stored eventlog (Flux's NO_COMMIT):
 * `invalidate` (the job is discarded) and `annotations` (scheduler churn, kept cheap).
 */
export const NO_COMMIT: ReadonlySet<string> = new Set(["invalidate", "annotations"]);

/** The flags `set-flags` and `setFlag` accept (Flux accepts exactly these). */
export const SETTABLE_FLAGS = ["alloc-bypass", "debug", "immutable"] as const;

/** Submit flag bits (Flux libjob values). */
export const SUBMIT_FLAG = { debug: 2, waitable: 4, novalidate: 8 } as const;

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);
const isStr = (v: unknown): v is string => typeof v === "string";

/** Required-context checks per event; returns an error message or undefined. */
const CHECKS: Partial<Record<EventName, (c: Record<string, unknown>) => string | undefined>> = {
  submit: (c) => (isInt(c.urgency) && isInt(c.userid) ? undefined : "needs integer urgency and userid"),
  "dependency-add": (c) => (isStr(c.description) ? undefined : "needs a string description"),
  "dependency-remove": (c) => (isStr(c.description) ? undefined : "needs a string description"),
  priority: (c) =>
    isInt(c.priority) && c.priority >= 0 && c.priority <= 4294967295
      ? undefined
      : "needs an integer priority 0..4294967295",
  urgency: (c) => (isInt(c.urgency) && c.urgency >= 0 && c.urgency <= 31 ? undefined : "needs urgency 0..31"),
  "prolog-start": (c) => (isStr(c.description) ? undefined : "needs a string description"),
  "prolog-finish": (c) => (isStr(c.description) ? undefined : "needs a string description"),
  "epilog-start": (c) => (isStr(c.description) ? undefined : "needs a string description"),
  "epilog-finish": (c) => (isStr(c.description) ? undefined : "needs a string description"),
  finish: (c) => (isInt(c.status) ? undefined : "needs an integer status"),
  exception: (c) =>
    isStr(c.type) && c.type.length > 0 && isInt(c.severity) && c.severity >= 0 && c.severity <= 7
      ? undefined
      : "needs a non-empty type and severity 0..7",
  "resource-update": (c) =>
    Object.keys(c).length === 1 && typeof c.expiration === "number" && c.expiration >= 0
      ? undefined
      : "needs exactly {expiration: number >= 0}",
  "set-flags": (c) => (Array.isArray(c.flags) && c.flags.every(isStr) ? undefined : "needs a flags array"),
  "jobspec-update": (c) => (Object.keys(c).length > 0 ? undefined : "needs at least one update"),
};

/** Checks an entry's context against RFC 21; returns a message naming the problem or undefined. */
export function checkContext(e: EventEntry): string | undefined {
  const check = CHECKS[e.name as EventName];
  if (!check) return undefined;
  const msg = check(e.context ?? {});
  return msg === undefined ? undefined : `event "${e.name}" ${msg}`;
}

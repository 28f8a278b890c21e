/**
 * Job states as data (RFC 21). The bit values are Flux's; they are what `flux jobs` filters
 * on and what the `state` IN arg carries in Flux, so they are kept for compatibility.
 */
export const STATES = ["NEW", "DEPEND", "PRIORITY", "SCHED", "RUN", "CLEANUP", "INACTIVE"] as const;

export type State = (typeof STATES)[number];

export const STATE_BIT = {
  NEW: 1,
  DEPEND: 2,
  PRIORITY: 4,
  SCHED: 8,
  RUN: 16,
  CLEANUP: 32,
  INACTIVE: 64,
} as const satisfies Record<State, number>;

/** Virtual states, as sets. */
export const PENDING: ReadonlySet<State> = new Set<State>(["DEPEND", "PRIORITY", "SCHED"]);
export const RUNNING: ReadonlySet<State> = new Set<State>(["RUN", "CLEANUP"]);
export const ACTIVE: ReadonlySet<State> = new Set<State>([
  "DEPEND",
  "PRIORITY",
  "SCHED",
  "RUN",
  "CLEANUP",
]);

/** `job.state.<state>` topic names, derived from the state list. */
export type StateTopic = `job.state.${Lowercase<State>}`;

export function stateTopic(s: State): StateTopic {
  return `job.state.${s.toLowerCase() as Lowercase<State>}`;
}

/** Job results (Flux numeric values kept for compatibility). */
export const RESULTS = ["COMPLETED", "FAILED", "CANCELED", "TIMEOUT"] as const;
export type JobResult = (typeof RESULTS)[number];
export const RESULT_BIT = {
  COMPLETED: 1,
  FAILED: 2,
  CANCELED: 4,
  TIMEOUT: 8,
} as const satisfies Record<JobResult, number>;

/** Urgency bounds and the hold/expedite overrides. */
export const URGENCY_MIN = 0;
export const URGENCY_HOLD = 0;
export const URGENCY_DEFAULT = 16;
export const URGENCY_MAX = 31;
export const URGENCY_EXPEDITE = 31;

/** Priority bounds; -1 means "not yet assigned". */
export const PRIORITY_MIN = 0;
export const PRIORITY_MAX = 4294967295;
export const PRIORITY_UNSET = -1;

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

/** The `job.state.<state>` topic of a state. */
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

/**
 * The state-changing events per state (RFC 21). `exception` here means a severity-0
 * exception; other severities never change state. Every (state, event) pair not listed
 * either leaves the state alone or is refused — see `STRICT_EVENTS`.
 */
export const TRANSITIONS = {
  NEW: { validate: "DEPEND" },
  DEPEND: { depend: "PRIORITY", exception: "CLEANUP" },
  PRIORITY: { priority: "SCHED", exception: "CLEANUP" },
  SCHED: {
    alloc: "RUN",
    urgency: "PRIORITY",
    "jobspec-update": "PRIORITY",
    "flux-restart": "PRIORITY",
    exception: "CLEANUP",
  },
  RUN: { finish: "CLEANUP", exception: "CLEANUP" },
  CLEANUP: { clean: "INACTIVE" },
  INACTIVE: {},
} as const satisfies Record<State, Readonly<Record<string, State>>>;

/**
 * Events that are only meaningful in the states where they cause a transition (plus
 * `submit`, only in NEW as the first event). Posting them elsewhere is refused with an error
 * rather than silently ignored, because it means the poster's idea of the job is wrong.
 */
export const STRICT_EVENTS: Readonly<Record<string, readonly State[]>> = {
  submit: ["NEW"],
  validate: ["NEW"],
  depend: ["DEPEND"],
  alloc: ["SCHED"],
  clean: ["CLEANUP"],
};

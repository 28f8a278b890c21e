/**
 * The lifecycle of one routed job (an original and its copy) as data: the phases, the moves
 * between them, and the record the router keeps per original (docs/condor-router.md).
 *
 * Phases:
 * - `claimed`: the original is claimed (Managed = "External"), no copy is known and nothing
 *   is submitting one — after a restart, the orphan scan decides its fate.
 * - `routing`: routeJob is between the claim and the copy's submission.
 * - `submitted`: the copy exists and is active (pending or running).
 * - `ended`: the copy is inactive; the original's fate is not decided yet.
 * - `cleanup`: JOB_CLEANUP and settling the original are under way (a failed JOB_CLEANUP
 *   is retried at the next poll).
 * - `done`: settled and forgotten.
 *
 * What happened on the way (the copy started, was removed, the original was interrupted)
 * are facts kept beside the phase: they decide the outcome, not the next phase.
 */
import type { ExecReport, ExecUsage, JobId } from "jobtap/plugin";

export const PHASES = ["claimed", "routing", "submitted", "ended", "cleanup", "done"] as const;
export type Phase = (typeof PHASES)[number];

/** Where each phase may go next. A test walks this table completely. */
export const TRANSITIONS = {
  // routeJob claims; a restart or the orphan scan attaches a known copy or yields; a failed
  // claim forgets the record at once.
  claimed: ["routing", "submitted", "ended", "cleanup", "done"],
  // The copy is submitted (and may already be inactive), or routing failed before that.
  routing: ["submitted", "ended", "cleanup"],
  submitted: ["ended"],
  ended: ["cleanup"],
  cleanup: ["done"],
  done: [],
} as const satisfies Record<Phase, readonly Phase[]>;

/** Whether the table allows `from` → `to`. */
export function canMove(from: Phase, to: Phase): boolean {
  return (TRANSITIONS[from] as readonly Phase[]).includes(to);
}

export type Outcome = "success" | "failure" | "interrupted";

/** One managed original and its copy. */
export interface Managed {
  orig: JobId;
  key: string;
  route: string;
  phase: Phase;
  copy?: JobId;
  /** The copy has started (the original mirrors it: allocated on the mirror executor). */
  copyStarted: boolean;
  copyFinish?: { status: number; usage?: ExecUsage };
  /** The copy ended with a fatal exception (removed), not with its own finish. */
  copyRemoved: boolean;
  /** Original removed or held by its user: neither success nor failure. */
  interrupted: boolean;
  /** The original's mirror executor handle, once it runs. */
  report?: ExecReport;
  /** Clock ms when the record was made (mirror lag). */
  since: number;
  /** The outcome cleanup is working on (a failed JOB_CLEANUP retries only cleanup). */
  pending?: Outcome;
  /** The original is held because its copy is (HoldCopiedFromTargetJob), and its urgency before. */
  holdMirrored?: { urgency: number };
  /** Why the original must end with an exception (copy removed after it started, finalize failure). */
  endNote?: string;
}

/** The copy exists and is still active. */
export function copyLive(m: Managed): boolean {
  return m.phase === "submitted";
}

/** The copy existed and is inactive now. */
export function copyDone(m: Managed): boolean {
  return m.copy !== undefined && m.phase !== "submitted";
}

/**
 * What the slurm executor keeps per job (executor.ts): where it is on its way into Slurm
 * (phase), its Slurm id, what the last poll saw, its time limit.
 */
import type { Clock, ExecJob, ExecReport, JobId } from "jobtap/plugin";
import type { SbatchRequest } from "./submit.js";

/** queued: waits for an sbatch slot; submitting: sbatch runs; lookup: found by comment; tracked: has a Slurm id. */
export type Phase = "queued" | "submitting" | "lookup" | "tracked";

/** One job the executor has not released. */
export interface SlurmRun {
  readonly id: JobId;
  readonly report: ExecReport;
  readonly duration: number;
  /** R's starttime (s): a resource-update's expiration counts from it, not from start. */
  readonly allocStart?: number;
  phase: Phase;
  /** Lookups by comment that found nothing (resubmitted at LOOKUP_MISSES). */
  misses: number;
  slurmId?: string;
  request?: SbatchRequest;
  /** Request building failed: the message, reported when the job is submitted. */
  requestError?: string;
  started: boolean;
  /** Clock ms of `start` (for the time limit). */
  startedAt?: number;
  killed: boolean;
  ended: boolean;
  limitTimer?: ReturnType<Clock["setTimeout"]>;
  /** What the last poll saw (state, Reason, clock ms): `job why` quotes it. */
  seen?: SeenStatus;
}

/** A poll's view of one Slurm job. */
export interface SeenStatus {
  state: string;
  reason: string;
  /** Clock ms of the poll. */
  at: number;
}

/** A job's record as `job why` reads it. */
export interface RunView {
  phase: Phase;
  slurmId?: string | undefined;
  seen?: SeenStatus | undefined;
  /** queued: jobs before it in the submit queue. */
  ahead: number;
  /** lookup: lookups by comment that found nothing so far. */
  misses: number;
  submitConcurrency: number;
}

/** States in which the job's work certainly ran, even if no poll saw it RUNNING. */
export const RAN = new Set(["COMPLETED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED"]);

/** Successful lookups by comment, a poll apart, that must find nothing before a resubmit. */
export const LOOKUP_MISSES = 2;

/** A new record for `job`, in `phase`. */
export function newRun(job: ExecJob, report: ExecReport, phase: Phase): SlurmRun {
  const starttime = (job.R?.execution as { starttime?: unknown } | undefined)?.starttime;
  const run: SlurmRun = { id: job.id, report, duration: job.duration, phase, misses: 0, started: false, killed: false, ended: false };
  if (typeof starttime === "number") Object.assign(run, { allocStart: starttime });
  return run;
}

/** The job's time limit at clock ms `atMs`: a `timeout` exception unless it ended or was killed. */
export function armLimitAt(clock: Clock, run: SlurmRun, atMs: number): void {
  run.limitTimer = clock.setTimeout(() => {
    run.limitTimer = undefined;
    if (!run.ended && !run.killed) run.report.exception(run.id, "timeout", "resource allocation expired");
  }, Math.max(0, atMs - clock.now()));
}

/** Stops the job's time limit timer, if any. */
export function clearLimit(clock: Clock, run: SlurmRun): void {
  if (run.limitTimer) clock.clearTimeout(run.limitTimer);
  run.limitTimer = undefined;
}

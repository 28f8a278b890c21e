/**
 * The executor contract: what turns an allocated job into `start`, `finish` and `release`
 * events. Public (exported from `jobtap/plugin`): a plugin registers an executor with
 * `p.registerExecutor(name, executor)`; the builtin `local` and `test` executors are
 * registered the same way by the manager. See docs/plugins.md "Executors".
 *
 * An executor never touches job state: it reports through the `ExecReport` it is handed,
 * and the manager posts the events through the job's mailbox.
 *
 * Lifecycle of one job on an executor (every step is an eventlog entry):
 *   start(job, report)  → report.save(id, data)* → report.start(id) → ... →
 *                          report.finish(id, status) → report.release(id)
 *   a fatal exception    → kill(id) → (the work stops) → finish (if it started) → release
 *   cannot run           → report.exception(id, "exec", note) → report.release(id)
 *   manager restarted    → reattach(job, report) with `job.saved` = what was saved
 * Resources are freed only after `release`; a job never released stays in CLEANUP.
 */
import type { JobId } from "../base/ids.js";
import type { Jobspec } from "./records.js";

/** Resource usage an executor reports with `finish` (every field optional). */
export interface ExecUsage {
  /** Seconds of user CPU time, all tasks together. */
  user_cpu_s?: number;
  /** Seconds of system CPU time, all tasks together. */
  sys_cpu_s?: number;
  /** Largest resident set size of a task, in KiB. */
  max_rss_kib?: number;
  /** Wall-clock seconds from start to the end of the last task. */
  wall_s?: number;
}

/** What an executor reports on its jobs. Calls for a job not running on it are logged and ignored. */
export interface ExecReport {
  /** The job's work is running: posts `start` (at most once). */
  start(id: JobId): void;
  /** The work ended with a POSIX wait status (`waitStatus`): posts `finish {status, usage?}`. */
  finish(id: JobId, status: number, usage?: ExecUsage): void;
  /** The executor is done with the job (after `finish`, or alone after an exception):
   *  posts the final `release`; the manager then frees the job's resources. */
  release(id: JobId): void;
  /** Raises an exception on the job (severity 0, the default, ends it: `kill` follows). */
  exception(id: JobId, type: string, note: string, severity?: number): void;
  /**
   * Persists executor data for a reattach after a restart (a pid, a remote job id): appends
   * an `exec-state` entry whose context is `data` to the job's exec eventlog (not an event:
   * `job.event.*` never sees it); the merged contexts of all of them come back as
   * `ExecJob.saved`. Durable with the job's store batch (one batch window).
   */
  save(id: JobId, data: Record<string, unknown>): void;
  /**
   * Calls `fn` once every event of the jobs so far is in the store (never if the store
   * failed): an executor whose work outlives the manager starts it only then, so that a
   * restart never finds the job still waiting for resources while its work runs.
   */
  durable?(fn: () => void): void;
  log(level: "info" | "error", message: string): void;
}

/** What an executor is handed to run (or reattach) a job. */
export interface ExecJob {
  readonly id: JobId;
  readonly userid: number;
  /** The full jobspec, environment included (the executor needs it). */
  readonly jobspec: Jobspec;
  /** The job's allocation (from the scheduler, or supplied by a plugin as alloc-bypass does). */
  readonly R: Record<string, unknown> | undefined;
  /** Seconds; 0 = unlimited (from attributes.system.duration). */
  readonly duration: number;
  /** Seconds since the epoch when `start` was posted (reattach after it was). */
  readonly startedAt?: number;
  /** The merged `exec-state` contexts saved for this job (if none, an empty object that is
   *  shared and frozen: read-only, like the whole ExecJob). */
  readonly saved: Readonly<Record<string, unknown>>;
}

/**
 * An executor. Methods may throw (or `start`/`reattach` may return a rejected Promise):
 * the manager turns that into an `exec` exception on the job and releases it, so a bad
 * executor never takes the manager down. Every method is called on the manager's thread.
 */
export interface Executor {
  /** Runs an allocated job: later report `start`, then `finish` and `release`. */
  start(job: ExecJob, report: ExecReport): void | Promise<void>;
  /**
   * A fatal exception arrived (cancel, timeout, ...): stop the job's work. `finish` (if it
   * started) and `release` must follow. Called at most once per job.
   */
  kill(id: JobId): void;
  /**
   * Optional: delivers signal `signum` to the running job's processes (`jobtap job kill`).
   * Returns false if the job has no process left to signal here.
   */
  signal?(id: JobId, signum: number): boolean;
  /**
   * After a manager restart, for a job started (or asked to start) and not released: find
   * the work again from `job.saved` and report on it as if `start` had run — or raise an
   * exception and release if it is gone. `start` must not be reported twice (`startedAt`
   * tells whether it was).
   */
  reattach(job: ExecJob, report: ExecReport): void | Promise<void>;
  /**
   * A `resource-update` moved a running job's expiration (seconds since the epoch, 0:
   * unlimited): its time limit follows it. Optional.
   */
  updateExpiration?(id: JobId, expiration: number): void;
  /** The manager is closing: stop timers (and, for local processes, the processes). Optional. */
  close?(): void;
}

/** POSIX wait status helpers (what `finish` carries). */
export const waitStatus = {
  exited: (code: number): number => (code & 0xff) << 8,
  signaled: (signal: number): number => signal & 0x7f,
  exitCode: (status: number): number | undefined => ((status & 0x7f) === 0 ? (status >> 8) & 0xff : undefined),
  signal: (status: number): number | undefined => ((status & 0x7f) !== 0 ? status & 0x7f : undefined),
  /** Flux's `returncode`: the exit code, or minus the signal that killed the job. */
  returnCode: (status: number): number => ((status & 0x7f) !== 0 ? -(status & 0x7f) : (status >> 8) & 0xff),
};

/**
 * Executors: what turns an allocated job into `start`, `finish` and `release` events.
 * An executor never touches job state directly; it reports through ExecHooks and the
 * manager posts the events through the job's mailbox.
 */
import type { JobId } from "../ids.js";
import type { Jobspec } from "../port.js";

export interface ExecHooks {
  /** Posts an event (start, finish, release) to the job. */
  post(id: JobId, name: string, context?: Record<string, unknown>): void;
  /** Raises an exception on the job (exec, timeout). */
  raise(id: JobId, type: string, severity: number, note: string): void;
  log(level: "info" | "error", msg: string): void;
}

/** What an executor needs to run a job. */
export interface ExecJob {
  id: JobId;
  userid: number;
  /** The full jobspec (environment included: the executor needs it). */
  jobspec: Jobspec;
  R: Record<string, unknown> | undefined;
  /** Seconds; 0 = unlimited (from attributes.system.duration). */
  duration: number;
  /** Seconds since the epoch when `start` was posted, when reattaching. */
  startedAt?: number;
}

export interface Executor {
  /** Starts the job; later posts `start`, then `finish` and a final `release`. */
  start(job: ExecJob): void;
  /** A fatal exception arrived: stop the job; `finish`/`release` follow. No-op if not running. */
  kill(id: JobId): void;
  /**
   * A `resource-update` moved the job's expiration (seconds since the epoch, 0: unlimited):
   * the time limit of a running job follows it. No-op if the job is not running here.
   */
  updateExpiration(id: JobId, expiration: number): void;
  /** After a restart, for a job that was started and not released. */
  reattach(job: ExecJob): void;
  /** True if the executor still has the job (not yet released). */
  has(id: JobId): boolean;
  /** Stops timers and processes. */
  close(): void;
}

/** POSIX wait status helpers (what `finish` carries). */
export const waitStatus = {
  exited: (code: number): number => (code & 0xff) << 8,
  signaled: (signal: number): number => signal & 0x7f,
  exitCode: (status: number): number | undefined => ((status & 0x7f) === 0 ? (status >> 8) & 0xff : undefined),
  signal: (status: number): number | undefined => ((status & 0x7f) !== 0 ? status & 0x7f : undefined),
};

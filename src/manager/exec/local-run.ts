/**
 * The local executor's record of a job's tasks (local-exec.ts), and what reattaching them
 * after a restart (local-reattach.ts) needs of the executor: kept here so that neither of
 * the two imports the other's types back.
 */
import type { ChildProcess } from "node:child_process";
import type { Clock, TimerHandle } from "../base/clock.js";
import type { JobId } from "../base/ids.js";
import type { ExecReport } from "../port/executor.js";

/** One task process: a child we spawned, or (after a restart) a pid we watch in /proc. */
export interface LocalTask {
  rank: number;
  pid: number | undefined;
  starttime: number | undefined;
  child?: ChildProcess;
  done: boolean;
}

/** A job's tasks on this machine, from start until release. */
export interface LocalRun {
  id: JobId;
  report: ExecReport;
  tasks: LocalTask[];
  running: number;
  status: number;
  /** Some task's exit status was not observed (it ended while we were not its parent). */
  statusUnknown: boolean;
  /** A task could not be started: the job gets no `finish`, only `release`. */
  failed: boolean;
  killed: boolean;
  /** The signal a kill sends first (the job's `kill_signal`; default SIGTERM). */
  killSignal?: number;
  limitTimer?: TimerHandle;
  killTimer?: TimerHandle;
  pollTimer?: TimerHandle;
}

/** What reattaching needs of the local executor (LocalExecutor implements it). */
export interface LocalRunner {
  readonly clock: Clock;
  readonly opts: { readonly pollMs?: number };
  armLimit(run: LocalRun, ms: number): void;
  taskExited(run: LocalRun, task: LocalTask, status: number | undefined): void;
}

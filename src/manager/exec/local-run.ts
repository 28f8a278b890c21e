/**
 * The local executor's record of a job's tasks (local-exec.ts), and what reattaching them
 * after a restart (local-reattach.ts) needs of the executor: kept here so that neither of
 * the two imports the other's types back.
 */
import type { Clock, TimerHandle } from "../base/clock.js";
import type { JobId } from "../base/ids.js";
import type { ExecReport } from "../port/executor.js";
import type { TaskHandle } from "./run-as.js";

/** One task process: a child we spawned, or (after a restart) a pid we watch in /proc. */
export interface LocalTask {
  rank: number;
  pid: number | undefined;
  starttime: number | undefined;
  /** Our child (here or the launcher's) while it reports its own exit; unset when watched in /proc. */
  child?: TaskHandle;
  done: boolean;
  /** A deferred launcher has told its pid (or that it failed). */
  spawned?: boolean;
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
  /** Tasks whose pid a deferred launcher has not told yet; `started` runs when none is left. */
  unspawned?: number;
  started?: (() => void) | undefined;
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
  /** Tasks found again after a restart become the launcher's to signal (multi-user instance). */
  adopt(run: LocalRun, uid: number): void;
  taskExited(run: LocalRun, task: LocalTask, status: number | undefined): void;
}

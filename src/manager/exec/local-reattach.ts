/**
 * Reattaching the local executor after a manager restart (or a SIGKILL of the daemon).
 *
 * The tasks were started in their own sessions, so they outlive the manager. A saved task
 * (`exec-state {tasks: [{rank, pid, starttime}]}`) is still running if /proc/<pid>/stat
 * exists with the same start time; such tasks are watched by polling /proc (they are not
 * our children any more, so no exit event comes), killed on a fatal exception, and held to
 * the job's time limit. The job's resources stay allocated until every task is gone.
 *
 * Exit status: a process that is no longer our child is reaped by someone else, so its
 * status is seen only if the poll finds it still a zombie (field 52 of its stat). When any
 * task's status was not seen, the job gets an `exec` exception saying so and no `finish`
 * (see docs/manager.md "Restart and running jobs").
 */
import { formatJobId } from "../base/ids.js";
import type { LocalRun, LocalRunner, LocalTask } from "./local-run.js";
import { procStat } from "./proc.js";
import type { ExecJob } from "../port/executor.js";

/** What `exec-state` keeps per task. */
export interface SavedTask {
  rank: number;
  pid: number;
  starttime: number;
}

/** Finds the job's tasks again; watches those alive, ends the job if none is. */
export function reattachLocal(exec: LocalRunner, run: LocalRun, job: ExecJob): void {
  const saved = savedTasks(job.saved.tasks);
  if (saved.length === 0) {
    run.statusUnknown = true;
    run.report.exception(
      job.id,
      "exec",
      "job processes cannot be found after a restart (no process ids were saved for it: the job manager stopped before they were recorded, or an older version started it)",
    );
    const unknown: LocalTask = { rank: 0, pid: undefined, starttime: undefined, done: false };
    run.tasks.push(unknown);
    run.running = 1;
    exec.taskExited(run, unknown, undefined);
    return;
  }
  for (const s of saved) run.tasks.push({ rank: s.rank, pid: s.pid, starttime: s.starttime, done: false });
  run.running = run.tasks.length;
  exec.adopt(run, job.userid);
  if (job.startedAt === undefined) run.report.start(job.id);
  run.report.log("info", `job ${formatJobId(job.id)}: reattaching to pid ${saved.map((s) => s.pid).join(",")}`);
  if (job.duration > 0) {
    const startMs = (job.startedAt ?? exec.clock.now() / 1000) * 1000;
    exec.armLimit(run, startMs + job.duration * 1000 - exec.clock.now());
  }
  poll(exec, run);
}

/**
 * Tasks whose launcher died while they ran: they run on, no longer anyone's child here, so
 * they are watched in /proc as after a restart (their exit status is seen only as a zombie).
 */
export function watchLostTasks(exec: LocalRunner, run: LocalRun): void {
  if (run.pollTimer === undefined && run.running > 0) poll(exec, run);
}

/** One look at every task still running; again after `pollMs` while any is. */
function poll(exec: LocalRunner, run: LocalRun): void {
  run.pollTimer = undefined;
  for (const t of run.tasks) {
    if (t.done || t.child) continue;
    const gone = exitOf(t);
    if (gone === "running") continue;
    if (gone === undefined && !run.killed && !run.statusUnknown) {
      run.report.exception(
        run.id,
        "exec",
        `job process ${t.pid} (task ${t.rank}) ended while the job manager was not its parent: exit status unknown`,
      );
    }
    exec.taskExited(run, t, gone);
    if (run.running === 0) return;
  }
  run.pollTimer = exec.clock.setTimeout(() => poll(exec, run), exec.opts.pollMs ?? 500);
}

/** "running", the wait status of a zombie we can still read, or undefined (gone, status unknown). */
function exitOf(t: LocalTask): "running" | number | undefined {
  const st = procStat(t.pid!);
  if (!st || st.starttime !== t.starttime) return undefined;
  if (st.state !== "Z" && st.state !== "X") return "running";
  return st.exitCode;
}

function savedTasks(v: unknown): SavedTask[] {
  if (!Array.isArray(v)) return [];
  return v.filter(
    (t): t is SavedTask =>
      typeof t === "object" && t !== null && Number.isInteger(t.pid) && t.pid > 0 && Number.isInteger(t.rank) && typeof t.starttime === "number",
  );
}

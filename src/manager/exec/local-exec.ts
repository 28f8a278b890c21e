/**
 * The local executor (registered as `local`): runs a job's tasks as real processes here.
 *
 * - argv from `tasks[0].command` (no shell), one process per task (`count.per_slot` ×
 *   slots, or `count.total`), cwd from `attributes.system.cwd`, environment exactly
 *   `attributes.system.environment` (none: only PATH=DEFAULT_PATH; never the manager's
 *   own), plus JOBTAP_JOB_ID and FLUX_TASK_RANK / FLUX_JOB_SIZE for compatibility with
 *   scripts written for Flux.
 * - Tasks run as the job's user (the instance owner's as this process's user), through
 *   run-as.ts: output files are opened with that user's rights, ordinary files only.
 * - Each task leads its own process group (and session), so a kill reaches its children
 *   and the tasks outlive a manager that dies.
 * - stdout/stderr go to `attributes.system.shell.options.output.{stdout,stderr}.path`
 *   (`{{id}}` is replaced by the f58 id), else to `<outputDir>/<f58>/stdout|stderr` for a
 *   job run as this process's user and `<cwd>/jobtap-<f58>.out|.err` for a guest's (the
 *   statedir stays private). The paths are saved with the tasks (`exec-state {output}`):
 *   the `output` method reads only those.
 * - stdin is `attributes.system.shell.options.input.stdin.path` (Flux's `--input`; relative
 *   to the cwd), opened with the user's rights, else empty.
 * - Before `start`, each task's pid and start time (/proc/<pid>/stat) are saved
 *   (`exec-state {tasks}`); after a restart the tasks still alive are found again by both
 *   and watched until they exit (local-reattach.ts).
 * - `finish` carries the largest wait status of the tasks; a fatal exception sends SIGTERM
 *   (or `attributes.system.kill_signal`, a signal number: HTCondor's KillSig) to every
 *   task's group, then SIGKILL after `killTimeoutMs`; the duration is enforced
 *   with a `timeout` exception. A task that cannot be executed (ENOENT, E2BIG, ...) is an
 *   `exec` exception on the job, never a manager crash.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { makeDirs } from "../base/fsutil.js";
import { constants as osConstants } from "node:os";
import { dirname, resolve } from "node:path";
import { outputPaths } from "../ads/jobad.js";
import type { Clock } from "../base/clock.js";
import { formatJobId, type JobId } from "../base/ids.js";
import { isPlainObject, resourceRequest } from "../core/jobspec.js";
import { procStartTime } from "./proc.js";
import { processLauncher, type UserLauncher } from "./run-as.js";
import { ErrorCode, isJobtapError } from "../../errors.js";
import { reattachLocal, watchLostTasks, type SavedTask } from "./local-reattach.js";
import type { LocalRun, LocalRunner, LocalTask } from "./local-run.js";
import { waitStatus, type ExecJob, type ExecReport, type Executor } from "../port/executor.js";

export interface LocalExecOptions {
  /** Where per-job output files go when the jobspec names none. */
  outputDir: string;
  /** Grace period between SIGTERM and SIGKILL (default 5000 ms). */
  killTimeoutMs?: number;
  /** How often reattached tasks (no longer our children) are looked for in /proc (default 500 ms). */
  pollMs?: number;
  /** The instance owner's uid (default: this process's): its jobs run as this process's user. */
  owner?: number;
  /** Starts tasks as their user (default: processLauncher(), switching users when root). */
  launcher?: UserLauncher;
}

/** PATH of a job whose jobspec carries no environment (`submit --jobspec` files). */
export const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/** Linux's limit on one argument or environment string (MAX_ARG_STRLEN). */
const ARG_STRLEN_MAX = 131072;

/** Runs a job's command as real processes; kills on cancel; enforces the duration. */
export class LocalExecutor implements Executor, LocalRunner {
  private readonly runs = new Map<JobId, LocalRun>();
  readonly launcher: UserLauncher;
  /** This process's uid, read when the executor is made: a daemon may drop root before that. */
  private readonly self = process.getuid?.() ?? 0;

  constructor(
    readonly clock: Clock,
    readonly opts: LocalExecOptions,
  ) {
    this.launcher = opts.launcher ?? processLauncher();
  }

  start(job: ExecJob, report: ExecReport): void {
    const run = this.newRun(job, report);
    this.launcher.authorise?.(formatJobId(job.id), this.runAs(job.userid));
    // Processes start only once the job's `alloc` is in the store: a manager killed before
    // that comes back with the job still waiting for resources and would run it again,
    // while the first copy still runs (found by the crash campaign, bench/crash.ts).
    if (report.durable) report.durable(() => this.launch(job, run));
    else this.launch(job, run);
  }

  /** Spawns the tasks of a started job, unless it was killed or the executor closed meanwhile. */
  private launch(job: ExecJob, run: LocalRun): void {
    if (this.runs.get(job.id) !== run) return;
    if (run.killed) {
      this.release(run);
      return;
    }
    let argv: string[];
    let ntasks: number;
    let out: { stdout: string; stderr: string };
    try {
      argv = (job.jobspec.tasks[0] as { command: string[] }).command;
      ntasks = taskCount(job);
      out = this.outputPaths(job);
    } catch (e) {
      this.failStart(run, `cannot start job: ${(e as Error).message}`);
      return;
    }
    for (let rank = 0; rank < ntasks && !run.failed; rank++) {
      try {
        this.spawnTask(job, run, argv, rank, ntasks, out);
      } catch (err) {
        const why = isJobtapError(err, ErrorCode.PERMISSION_DENIED)
          ? err.message
          : `cannot execute "${argv[0]}": ${spawnError(err as NodeJS.ErrnoException, job, argv)}`;
        this.failStart(run, `task ${rank}: ${why}`);
      }
    }
    if (run.failed || run.running === 0) return;
    // A launcher in another process knows the pids only later: start once each is known.
    run.unspawned = this.launcher.deferred ? run.tasks.filter((t) => t.pid === undefined).length : 0;
    run.started = () => this.started(job, run, out);
    if (run.unspawned === 0) run.started();
  }

  /** Every task has its pid: they are saved (for a restart), then the job's `start`. */
  private started(job: ExecJob, run: LocalRun, out: { stdout: string; stderr: string }): void {
    run.started = undefined;
    if (run.failed || this.runs.get(job.id) !== run) return;
    const report = run.report;
    const saved: SavedTask[] = run.tasks.flatMap((t) =>
      t.pid === undefined || t.starttime === undefined ? [] : [{ rank: t.rank, pid: t.pid, starttime: t.starttime }],
    );
    report.save(job.id, { tasks: saved, output: { ...out, uid: this.runAs(job.userid) } });
    report.start(job.id);
    if (job.duration > 0) this.armLimit(run, job.duration * 1000);
  }

  /** After a restart: watch the tasks still alive (pid and start time match), or end the job. */
  reattach(job: ExecJob, report: ExecReport): void {
    reattachLocal(this, this.newRun(job, report), job);
  }

  private newRun(job: ExecJob, report: ExecReport): LocalRun {
    const run: LocalRun = { id: job.id, report, tasks: [], running: 0, status: 0, statusUnknown: false, failed: false, killed: false };
    const sig = job.jobspec.attributes.system?.kill_signal;
    if (typeof sig === "number" && Number.isInteger(sig) && sig > 0 && sig < 65) run.killSignal = sig;
    this.runs.set(job.id, run);
    return run;
  }

  private spawnTask(
    job: ExecJob,
    run: LocalRun,
    argv: string[],
    rank: number,
    size: number,
    out: { stdout: string; stderr: string },
  ): void {
    const sys = job.jobspec.attributes.system ?? {};
    // Never the manager's own environment: it may hold the owner's secrets.
    const baseEnv = isPlainObject(sys.environment) ? (sys.environment as Record<string, string>) : { PATH: DEFAULT_PATH };
    const env = { ...baseEnv, JOBTAP_JOB_ID: formatJobId(job.id), FLUX_TASK_RANK: String(rank), FLUX_JOB_SIZE: String(size) };
    const cwd = typeof sys.cwd === "string" ? sys.cwd : process.cwd();
    const umask = typeof sys.umask === "number" ? { umask: sys.umask } : {};
    const stdin = inputPath(job, cwd);
    const launch = { argv, cwd, env, ...out, ...umask, ...(stdin === undefined ? {} : { stdin }), job: formatJobId(job.id) };
    const child = this.launcher.spawn(this.runAs(job.userid), launch, (why) => {
      run.report.log("error", `job ${formatJobId(job.id)} task ${rank}: ${why}`);
      run.report.exception(job.id, "exec", `task ${rank}: ${why}`);
    });
    const task: LocalTask = { rank, pid: child.pid, starttime: child.pid === undefined ? undefined : procStartTime(child.pid), child, done: false };
    run.tasks.push(task);
    run.running++;
    child.on("spawn", () => this.taskSpawned(run, task));
    child.on("lost", () => {
      task.child = undefined;
      watchLostTasks(this, run);
    });
    child.on("error", (err) => {
      run.report.log("error", `job ${formatJobId(job.id)} task ${rank}: ${err.message}`);
      if (child.pid === undefined) {
        const code = (err as NodeJS.ErrnoException).code;
        const why = code === "ENOENT" && !existsSync(cwd) ? `working directory "${cwd}" does not exist` : err.message;
        const note = code === ErrorCode.PERMISSION_DENIED ? why : `cannot execute "${argv[0]}": ${why}`;
        run.report.exception(job.id, "exec", `task ${rank}: ${note}`);
        if (this.launcher.deferred) run.failed = true;
        this.taskExited(run, task, waitStatus.exited(127));
        this.taskSpawned(run, task);
      }
    });
    // `close`, not `exit`: a setup failure read from the task's status pipe comes first.
    child.on("close", (code, signal) => {
      const st = signal ? waitStatus.signaled(signalNumber(signal)) : waitStatus.exited(code ?? 0);
      this.taskExited(run, task, st);
    });
  }

  /** A deferred task's pid is known (or it failed): the job starts once every task's is. */
  private taskSpawned(run: LocalRun, task: LocalTask): void {
    if (!this.launcher.deferred || task.spawned) return;
    task.spawned = true;
    task.pid = task.child?.pid;
    const st = (task.child as { starttime?: number } | undefined)?.starttime;
    task.starttime = st ?? (task.pid === undefined ? undefined : procStartTime(task.pid));
    if (run.killed && task.pid !== undefined) this.launcher.signal(task.pid, task.starttime, "SIGKILL");
    run.unspawned = (run.unspawned ?? 1) - 1;
    if (run.unspawned === 0) run.started?.();
  }

  /** A task could not start: exception; tasks already running are killed, then release. */
  private failStart(run: LocalRun, note: string): void {
    run.failed = true;
    run.report.exception(run.id, "exec", note);
    if (run.running === 0) this.release(run);
    else this.kill(run.id);
  }

  /** Arms the time limit: a `timeout` exception `ms` from now. */
  armLimit(run: LocalRun, ms: number): void {
    run.limitTimer = this.clock.setTimeout(() => {
      run.limitTimer = undefined;
      run.report.exception(run.id, "timeout", "resource allocation expired");
    }, Math.max(0, ms));
  }

  updateExpiration(id: JobId, expiration: number): void {
    const run = this.runs.get(id);
    if (!run || run.killed || run.running === 0) return;
    if (run.limitTimer) this.clock.clearTimeout(run.limitTimer);
    run.limitTimer = undefined;
    if (expiration > 0) this.armLimit(run, expiration * 1000 - this.clock.now());
  }

  /** A task ended with `status` (undefined: not observed). The last one ends the job. */
  taskExited(run: LocalRun, task: LocalTask, status: number | undefined): void {
    if (task.done) return;
    task.done = true;
    if (status === undefined) run.statusUnknown = true;
    else run.status = Math.max(run.status, status);
    run.running--;
    if (run.running > 0) return;
    this.stopTimers(run);
    if (run.failed || run.statusUnknown) {
      // Unknown status: the reattach code raised the exception saying so (unless killed).
      this.release(run);
      return;
    }
    // `finish` while the run is still registered, so CLEANUP waits for `release`.
    run.report.finish(run.id, run.status);
    this.release(run);
  }

  private release(run: LocalRun): void {
    this.stopTimers(run);
    this.runs.delete(run.id);
    this.launcher.forget?.(formatJobId(run.id));
    run.report.release(run.id);
  }

  kill(id: JobId): void {
    const run = this.runs.get(id);
    if (!run || run.killed) return;
    run.killed = true;
    this.signalAll(run, run.killSignal ?? "SIGTERM");
    run.killTimer = this.clock.setTimeout(() => this.signalAll(run, "SIGKILL"), this.opts.killTimeoutMs ?? 5000);
  }

  /** Signals every live task's process group (a reattached task only if it is still ours). */
  signalAll(run: LocalRun, signal: NodeJS.Signals | number): void {
    for (const t of run.tasks) {
      if (t.done || t.pid === undefined) continue;
      if (!t.child && procStartTime(t.pid) !== t.starttime) continue;
      this.launcher.signal(t.pid, t.starttime, signal);
    }
  }

  /** `jobtap job kill`: the signal to every live task's process group; false if none is left. */
  signal(id: JobId, signum: number): boolean {
    const run = this.runs.get(id);
    if (!run || !run.tasks.some((t) => !t.done && t.pid !== undefined)) return false;
    this.signalAll(run, signum);
    return true;
  }

  private stopTimers(run: LocalRun): void {
    for (const k of ["limitTimer", "killTimer", "pollTimer"] as const) {
      const h = run[k];
      if (h) this.clock.clearTimeout(h);
      run[k] = undefined;
    }
  }

  close(): void {
    for (const run of this.runs.values()) {
      this.stopTimers(run);
      this.signalAll(run, "SIGKILL");
    }
    this.runs.clear();
  }

  /** After a restart: the tasks found again are the launcher's to signal (and may be its job's). */
  adopt(run: LocalRun, userid: number): void {
    const tasks = run.tasks.flatMap((t) => (t.pid === undefined || t.starttime === undefined ? [] : [{ pid: t.pid, starttime: t.starttime }]));
    this.launcher.authorise?.(formatJobId(run.id), this.runAs(userid));
    this.launcher.adopt?.(formatJobId(run.id), this.runAs(userid), tasks);
  }

  /** The uid a job of `userid` runs as: the owner's jobs run as this process's user. */
  private runAs(userid: number): number {
    return userid === (this.opts.owner ?? this.self) ? this.self : userid;
  }

  private outputPaths(job: ExecJob): { stdout: string; stderr: string } {
    const cwd = (job.jobspec.attributes.system?.cwd as string | undefined) ?? process.cwd();
    // Another user's job: its default files go to its cwd, and no directory is made for it
    // with this process's rights.
    const own = this.runAs(job.userid) === this.self;
    const paths = outputPaths(job.jobspec, formatJobId(job.id), own ? this.opts.outputDir : undefined, cwd);
    if (own) {
      makeDirs(dirname(paths.stdout));
      makeDirs(dirname(paths.stderr));
    }
    return paths;
  }
}

/** The task's stdin file (absolute), from Flux's `shell.options.input.stdin`; undefined: none. */
function inputPath(job: ExecJob, cwd: string): string | undefined {
  const shell = job.jobspec.attributes.system?.shell as { options?: { input?: { stdin?: { path?: unknown } } } } | undefined;
  const path = shell?.options?.input?.stdin?.path;
  return typeof path === "string" && path !== "" ? resolve(cwd, path) : undefined;
}

/** Tasks to start: `count.total`, or `count.per_slot` × slots (default 1 per slot). */
function taskCount(job: ExecJob): number {
  const count = (job.jobspec.tasks[0] as { count?: { per_slot?: number; total?: number } }).count;
  if (typeof count?.total === "number") return count.total;
  return (count?.per_slot ?? 1) * resourceRequest(job.jobspec).slots;
}

/**
 * Why spawn failed, in the user's terms. E2BIG names the argument or environment variable
 * that is too long, never its value (the environment may hold secrets).
 */
function spawnError(err: NodeJS.ErrnoException, job: ExecJob, argv: string[]): string {
  if (err.code !== "E2BIG") return err.message;
  const env = job.jobspec.attributes.system?.environment;
  const strings: Array<{ what: string; bytes: number }> = [
    ...argv.map((a, i) => ({ what: `argument ${i}`, bytes: Buffer.byteLength(a) })),
    ...(isPlainObject(env) ? Object.entries(env) : []).map(([k, v]) => ({
      what: `environment variable ${k}`,
      bytes: Buffer.byteLength(`${k}=${String(v)}`),
    })),
  ];
  const longest = strings.reduce((a, s) => (s.bytes > a.bytes ? s : a), { what: "", bytes: 0 });
  const total = strings.reduce((n, s) => n + s.bytes + 1, 0);
  const what =
    longest.bytes > ARG_STRLEN_MAX
      ? `${longest.what} is ${kib(longest.bytes)} (at most 128 KiB per string)`
      : `they total ${kib(total)}`;
  return `${err.message}: the arguments and environment are too large to execute: ${what}`;
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

function signalNumber(name: string): number {
  return (osConstants.signals as Record<string, number>)[name] ?? 1;
}

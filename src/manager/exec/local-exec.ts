/**
 * The local executor: runs a job's tasks as real processes on this machine.
 *
 * - argv from `tasks[0].command` (no shell), one process per task (`count.per_slot` ×
 *   slots, or `count.total`), cwd from `attributes.system.cwd`, environment from
 *   `attributes.system.environment` (else the manager's own), plus JOBTAP_JOB_ID and
 *   FLUX_TASK_RANK / FLUX_JOB_SIZE for compatibility with scripts written for Flux.
 * - stdout/stderr go to `attributes.system.shell.options.output.{stdout,stderr}.path`
 *   (`{{id}}` is replaced by the f58 id), else to `<outputDir>/<f58>/stdout|stderr`.
 * - `finish` carries the largest wait status of the tasks; a fatal exception sends
 *   SIGTERM, then SIGKILL after `killTimeoutMs`; the duration is enforced with a `timeout`
 *   exception.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { makeDirs } from "../fsutil.js";
import { constants as osConstants } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import type { Clock, TimerHandle } from "../clock.js";
import { formatJobId, type JobId } from "../ids.js";
import { isPlainObject, resourceRequest } from "../jobspec.js";
import { waitStatus, type ExecHooks, type ExecJob, type Executor } from "./types.js";

export interface LocalExecOptions {
  /** Where per-job output files go when the jobspec names none. */
  outputDir: string;
  /** Grace period between SIGTERM and SIGKILL (default 5000 ms). */
  killTimeoutMs?: number;
}

interface LocalRun {
  procs: ChildProcess[];
  running: number;
  status: number;
  limitTimer?: TimerHandle;
  killTimer?: TimerHandle;
  killed: boolean;
}

const SIGKILL_STATUS = waitStatus.signaled(9);

/** Runs a job's command as a real process; kills on cancel; enforces the duration. */
export class LocalExecutor implements Executor {
  private readonly runs = new Map<JobId, LocalRun>();

  constructor(
    private readonly clock: Clock,
    private readonly hooks: ExecHooks,
    private readonly opts: LocalExecOptions,
  ) {}

  start(job: ExecJob): void {
    const run: LocalRun = { procs: [], running: 0, status: 0, killed: false };
    this.runs.set(job.id, run);
    let argv: string[];
    let ntasks: number;
    let out: { stdout: string; stderr: string };
    try {
      argv = (job.jobspec.tasks[0] as { command: string[] }).command;
      ntasks = taskCount(job);
      out = this.outputPaths(job);
    } catch (e) {
      this.failStart(job.id, run, `cannot start job: ${(e as Error).message}`);
      return;
    }
    for (let rank = 0; rank < ntasks; rank++) this.spawnTask(job, run, argv, rank, ntasks, out);
    if (run.running > 0) this.hooks.post(job.id, "start");
    if (job.duration > 0 && run.running > 0) this.armLimit(job.id, run, job.duration * 1000);
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
    const baseEnv = isPlainObject(sys.environment) ? (sys.environment as Record<string, string>) : process.env;
    const env = { ...baseEnv, JOBTAP_JOB_ID: formatJobId(job.id), FLUX_TASK_RANK: String(rank), FLUX_JOB_SIZE: String(size) };
    const fds = [openSync(out.stdout, "a"), openSync(out.stderr, "a")] as const;
    let child: ChildProcess;
    try {
      child = spawn(argv[0]!, argv.slice(1), {
        cwd: typeof sys.cwd === "string" ? sys.cwd : process.cwd(),
        env,
        stdio: ["ignore", fds[0], fds[1]],
      });
    } finally {
      closeSync(fds[0]);
      closeSync(fds[1]);
    }
    run.procs.push(child);
    run.running++;
    child.on("error", (err) => {
      this.hooks.log("error", `job ${formatJobId(job.id)} task ${rank}: ${err.message}`);
      if (child.pid === undefined) {
        this.hooks.raise(job.id, "exec", 0, `task ${rank}: cannot execute "${argv[0]}": ${err.message}`);
        this.taskExited(job.id, run, waitStatus.exited(127));
      }
    });
    child.on("exit", (code, signal) => {
      const st = signal ? waitStatus.signaled(signalNumber(signal)) : waitStatus.exited(code ?? 0);
      this.taskExited(job.id, run, st);
    });
  }

  private failStart(id: JobId, run: LocalRun, note: string): void {
    this.hooks.raise(id, "exec", 0, note);
    this.runs.delete(id);
    void run;
    this.hooks.post(id, "release", { ranks: "all", final: true });
  }

  private armLimit(id: JobId, run: LocalRun, ms: number): void {
    run.limitTimer = this.clock.setTimeout(() => {
      run.limitTimer = undefined;
      this.hooks.raise(id, "timeout", 0, "resource allocation expired");
    }, ms);
  }

  updateExpiration(id: JobId, expiration: number): void {
    const run = this.runs.get(id);
    if (!run || run.killed || run.running === 0) return;
    if (run.limitTimer) this.clock.clearTimeout(run.limitTimer);
    run.limitTimer = undefined;
    if (expiration > 0) this.armLimit(id, run, Math.max(0, expiration * 1000 - this.clock.now()));
  }

  private taskExited(id: JobId, run: LocalRun, status: number): void {
    run.status = Math.max(run.status, status);
    run.running--;
    if (run.running > 0) return;
    if (run.limitTimer) this.clock.clearTimeout(run.limitTimer);
    if (run.killTimer) this.clock.clearTimeout(run.killTimer);
    // `finish` while the run is still registered, so CLEANUP waits for `release`.
    this.hooks.post(id, "finish", { status: run.status });
    this.runs.delete(id);
    this.hooks.post(id, "release", { ranks: "all", final: true });
  }

  kill(id: JobId): void {
    const run = this.runs.get(id);
    if (!run || run.killed) return;
    run.killed = true;
    for (const p of run.procs) if (p.exitCode === null && p.signalCode === null) p.kill("SIGTERM");
    run.killTimer = this.clock.setTimeout(() => {
      for (const p of run.procs) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
    }, this.opts.killTimeoutMs ?? 5000);
  }

  /** Processes do not survive a manager restart: the job is failed and released. */
  reattach(job: ExecJob): void {
    this.runs.set(job.id, { procs: [], running: 0, status: SIGKILL_STATUS, killed: true });
    this.hooks.raise(job.id, "exec", 0, "job processes lost on job manager restart (cannot reattach)");
    this.hooks.post(job.id, "finish", { status: SIGKILL_STATUS });
    this.runs.delete(job.id);
    this.hooks.post(job.id, "release", { ranks: "all", final: true });
  }

  has(id: JobId): boolean {
    return this.runs.has(id);
  }

  close(): void {
    for (const run of this.runs.values()) {
      if (run.limitTimer) this.clock.clearTimeout(run.limitTimer);
      if (run.killTimer) this.clock.clearTimeout(run.killTimer);
      for (const p of run.procs) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
    }
    this.runs.clear();
  }

  private outputPaths(job: ExecJob): { stdout: string; stderr: string } {
    const f58 = formatJobId(job.id);
    const output = ((job.jobspec.attributes.system?.shell as Record<string, unknown> | undefined)?.options as
      | Record<string, unknown>
      | undefined)?.output as Record<string, { path?: unknown }> | undefined;
    const cwd = (job.jobspec.attributes.system?.cwd as string | undefined) ?? process.cwd();
    const pick = (stream: "stdout" | "stderr"): string => {
      const p = output?.[stream]?.path;
      if (typeof p !== "string") return join(this.opts.outputDir, f58, stream);
      const expanded = p.replaceAll("{{id}}", f58);
      return isAbsolute(expanded) ? expanded : join(cwd, expanded);
    };
    const paths = { stdout: pick("stdout"), stderr: pick("stderr") };
    makeDirs(dirname(paths.stdout));
    makeDirs(dirname(paths.stderr));
    return paths;
  }
}

/** Tasks to start: `count.total`, or `count.per_slot` × slots (default 1 per slot). */
function taskCount(job: ExecJob): number {
  const count = (job.jobspec.tasks[0] as { count?: { per_slot?: number; total?: number } }).count;
  if (typeof count?.total === "number") return count.total;
  return (count?.per_slot ?? 1) * resourceRequest(job.jobspec).slots;
}

function signalNumber(name: string): number {
  return (osConstants.signals as Record<string, number>)[name] ?? 1;
}

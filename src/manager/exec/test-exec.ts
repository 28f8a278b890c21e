/**
 * The test executor (Flux's job-exec "testexec"): no processes, only timers on the
 * manager's clock. Selected by `attributes.system.exec.test` in the jobspec:
 *   run_duration   FSD, how long the job "runs" (overrides the job's duration; default 0)
 *   wait_status    the status reported in `finish` (default 0)
 *   mock_exception "init" (exception before start) or "run" (exception after start)
 */
import type { Clock, TimerHandle } from "../clock.js";
import { parseFSD } from "../fsd.js";
import type { JobId } from "../ids.js";
import { formatJobId } from "../ids.js";
import { waitStatus, type ExecHooks, type ExecJob, type Executor } from "./types.js";

const SIGTERM = 15;

interface TestRun {
  timer?: TimerHandle;
  finished: boolean;
}

/** The test executor's settings from the jobspec, or undefined if the job does not ask for it. */
export function testExecOptions(
  job: ExecJob,
): { runDuration: number; waitStatus: number; mockException?: string } | undefined {
  const t = (job.jobspec.attributes.system?.exec as { test?: Record<string, unknown> } | undefined)?.test;
  if (t === undefined || t === null || typeof t !== "object") return undefined;
  const rd = t.run_duration === undefined ? job.duration : runDuration(job, t.run_duration);
  return {
    runDuration: rd,
    waitStatus: typeof t.wait_status === "number" ? t.wait_status : 0,
    ...(typeof t.mock_exception === "string" ? { mockException: t.mock_exception } : {}),
  };
}

/** run_duration in seconds; numbers and "0s" skip the parser (the benchmark's hot path). */
function runDuration(job: ExecJob, v: unknown): number {
  if (typeof v === "number" && v >= 0) return v;
  if (v === "0" || v === "0s") return 0;
  return parseFSD(v as string, `job ${formatJobId(job.id)}: attributes.system.exec.test.run_duration`);
}

export class TestExecutor implements Executor {
  private readonly runs = new Map<JobId, TestRun>();

  constructor(
    private readonly clock: Clock,
    private readonly hooks: ExecHooks,
  ) {}

  start(job: ExecJob): void {
    const opts = testExecOptions(job) ?? { runDuration: job.duration, waitStatus: 0 };
    const run: TestRun = { finished: false };
    this.runs.set(job.id, run);
    if (opts.mockException === "init") {
      this.hooks.raise(job.id, "exec", 0, "mock initialization exception generated");
      this.release(job.id);
      return;
    }
    this.hooks.post(job.id, "start");
    if (opts.mockException === "run") {
      this.hooks.raise(job.id, "exec", 0, "mock run exception generated");
      return;
    }
    this.arm(job, run, opts.runDuration, opts.waitStatus);
  }

  private arm(job: ExecJob, run: TestRun, seconds: number, status: number): void {
    // A duration shorter than the run means the job would be killed at its time limit.
    const limited = job.duration > 0 && job.duration < seconds;
    const ms = (limited ? job.duration : seconds) * 1000;
    if (!Number.isFinite(ms)) return;
    run.timer = this.clock.setTimeout(() => {
      run.timer = undefined;
      if (limited) {
        this.hooks.raise(job.id, "timeout", 0, "resource allocation expired");
        return;
      }
      this.finish(job.id, status);
    }, ms);
  }

  kill(id: JobId): void {
    const run = this.runs.get(id);
    if (!run || run.finished) return;
    if (run.timer) this.clock.clearTimeout(run.timer);
    run.timer = undefined;
    // Killing is asynchronous in a real executor; keep that shape so ordering matches.
    this.clock.setTimeout(() => this.finish(id, waitStatus.signaled(SIGTERM)), 0);
  }

  reattach(job: ExecJob): void {
    const opts = testExecOptions(job) ?? { runDuration: job.duration, waitStatus: 0 };
    const run: TestRun = { finished: false };
    this.runs.set(job.id, run);
    if (job.startedAt === undefined) this.hooks.post(job.id, "start");
    const elapsed = job.startedAt === undefined ? 0 : this.clock.now() / 1000 - job.startedAt;
    this.arm(job, run, Math.max(0, opts.runDuration - elapsed), opts.waitStatus);
  }

  has(id: JobId): boolean {
    return this.runs.has(id);
  }

  private finish(id: JobId, status: number): void {
    const run = this.runs.get(id);
    if (!run || run.finished) return;
    run.finished = true;
    this.hooks.post(id, "finish", { status });
    this.release(id);
  }

  private release(id: JobId): void {
    this.runs.delete(id);
    this.hooks.post(id, "release", { ranks: "all", final: true });
  }

  close(): void {
    for (const run of this.runs.values()) if (run.timer) this.clock.clearTimeout(run.timer);
    this.runs.clear();
  }
}

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
  /** Clock ms when the run ends by itself (Infinity: never). */
  endAt: number;
  /** Clock ms of the time limit (Infinity: unlimited); moved by a resource-update. */
  limitAt: number;
  status: number;
  /** Timed by arm() (not a mock exception, not being killed): a new limit applies. */
  armed: boolean;
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

/** A run started at `startMs`: it ends after `runSeconds`, is limited by `duration` (0: none). */
function newRun(startMs: number, runSeconds: number, duration: number, status: number): TestRun {
  return {
    finished: false,
    armed: false,
    endAt: startMs + runSeconds * 1000,
    limitAt: duration > 0 ? startMs + duration * 1000 : Infinity,
    status,
  };
}

/** The `attributes.system.exec.test` executor: simulated run time, status and exceptions. */
export class TestExecutor implements Executor {
  private readonly runs = new Map<JobId, TestRun>();

  constructor(
    private readonly clock: Clock,
    private readonly hooks: ExecHooks,
  ) {}

  start(job: ExecJob): void {
    const opts = testExecOptions(job) ?? { runDuration: job.duration, waitStatus: 0 };
    const now = this.clock.now();
    const run = newRun(now, opts.runDuration, job.duration, opts.waitStatus);
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
    this.arm(job.id, run);
  }

  /** One timer for whichever comes first: the end of the run or the time limit. */
  private arm(id: JobId, run: TestRun): void {
    run.armed = true;
    if (run.timer) this.clock.clearTimeout(run.timer);
    run.timer = undefined;
    // A limit before the end means the job would be killed at its time limit.
    const limited = run.limitAt < run.endAt;
    const at = limited ? run.limitAt : run.endAt;
    if (!Number.isFinite(at)) return;
    run.timer = this.clock.setTimeout(() => {
      run.timer = undefined;
      if (limited) {
        this.hooks.raise(id, "timeout", 0, "resource allocation expired");
        return;
      }
      this.finish(id, run.status);
    }, Math.max(0, at - this.clock.now()));
  }

  updateExpiration(id: JobId, expiration: number): void {
    const run = this.runs.get(id);
    if (!run || run.finished || !run.armed) return;
    run.limitAt = expiration > 0 ? expiration * 1000 : Infinity;
    this.arm(id, run);
  }

  kill(id: JobId): void {
    const run = this.runs.get(id);
    if (!run || run.finished) return;
    if (run.timer) this.clock.clearTimeout(run.timer);
    run.timer = undefined;
    run.armed = false;
    // Killing is asynchronous in a real executor; keep that shape so ordering matches.
    this.clock.setTimeout(() => this.finish(id, waitStatus.signaled(SIGTERM)), 0);
  }

  reattach(job: ExecJob): void {
    const opts = testExecOptions(job) ?? { runDuration: job.duration, waitStatus: 0 };
    if (job.startedAt === undefined) this.hooks.post(job.id, "start");
    const startMs = job.startedAt === undefined ? this.clock.now() : job.startedAt * 1000;
    const run = newRun(startMs, opts.runDuration, job.duration, opts.waitStatus);
    this.runs.set(job.id, run);
    this.arm(job.id, run);
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

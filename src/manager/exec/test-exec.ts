/**
 * The test executor (Flux's job-exec "testexec"): no processes, only timers on the
 * manager's clock. Registered as `test`; chosen by `attributes.system.exec.test`:
 *   run_duration    FSD, how long the job "runs" (overrides the job's duration; default it)
 *   wait_status     the status reported in `finish` (default 0)
 *   mock_exception  "init" (exception before start) or "run" (exception after start)
 *   override        nonzero: `start` waits for an exec-override `start` request; then, if
 *                   the run is unlimited (run_duration 0), `finish` waits for an
 *                   exec-override `finish` request (or an exception)
 *   reattach_finish nonzero: after a restart the job finishes at once with wait_status
 */
import { ErrorCode, JobtapError } from "../../errors.js";
import type { Clock, TimerHandle } from "../base/clock.js";
import { parseFSD } from "../base/fsd.js";
import type { JobId } from "../base/ids.js";
import { formatJobId } from "../base/ids.js";
import { waitStatus, type ExecJob, type ExecReport, type Executor } from "../port/executor.js";

const SIGTERM = 15;

/** The job's `attributes.system.exec.test` settings, read once at start (or reattach). */
interface TestOptions {
  runDuration: number;
  waitStatus: number;
  mockException: string | undefined;
  override: boolean;
  reattachFinish: boolean;
}

/** One job on the executor: its settings (flat, no object of their own) and its run. */
interface TestRun extends TestOptions {
  readonly id: JobId;
  report: ExecReport;
  userid: number;
  duration: number;
  timer: TimerHandle | undefined;
  started: boolean;
  finished: boolean;
  /** Released (and out of `runs`): nothing more is reported. */
  released: boolean;
  /** Clock ms when the run ends by itself (Infinity: never). */
  endAt: number;
  /** Clock ms of the time limit (Infinity: unlimited); moved by a resource-update. */
  limitAt: number;
  /** Timed by arm() (not a mock exception, not being killed): a new limit applies. */
  armed: boolean;
  /** The armed timer ends at the time limit (an exception), not at the run's end. */
  limited: boolean;
}

/** A new run of `job`, its settings read from the jobspec (defaults if it names none). */
function newTestRun(job: ExecJob, report: ExecReport): TestRun {
  const t = (job.jobspec.attributes.system?.exec as { test?: Record<string, unknown> } | undefined)?.test;
  const given = t !== undefined && t !== null && typeof t === "object";
  return {
    id: job.id,
    runDuration: given && t.run_duration !== undefined ? runDuration(job, t.run_duration) : job.duration,
    waitStatus: given && typeof t.wait_status === "number" ? t.wait_status : 0,
    mockException: given && typeof t.mock_exception === "string" ? t.mock_exception : undefined,
    override: given && truthy(t.override),
    reattachFinish: given && truthy(t.reattach_finish),
    report,
    userid: job.userid,
    duration: job.duration,
    timer: undefined,
    started: false,
    finished: false,
    released: false,
    endAt: Infinity,
    limitAt: Infinity,
    armed: false,
    limited: false,
  };
}

/** Flux reads these as integers; true/false are accepted too. */
function truthy(v: unknown): boolean {
  return v === true || (typeof v === "number" && v !== 0);
}

/** run_duration in seconds; numbers and "0s" skip the parser (the benchmark's hot path). */
function runDuration(job: ExecJob, v: unknown): number {
  if (typeof v === "number" && v >= 0) return v;
  if (v === "0" || v === "0s") return 0;
  return parseFSD(v as string, `job ${formatJobId(job.id)}: attributes.system.exec.test.run_duration`);
}

/** The `test` executor: simulated run time, status and exceptions. */
export class TestExecutor implements Executor {
  private readonly runs = new Map<JobId, TestRun>();

  constructor(private readonly clock: Clock) {}

  start(job: ExecJob, report: ExecReport): void {
    const run = this.newRun(job, report);
    if (run.mockException === "init") {
      report.exception(job.id, "exec", "mock initialization exception generated");
      this.release(job.id);
      return;
    }
    if (!run.override) this.begin(job.id, run, this.clock.now(), true);
    if (run.mockException === "run") {
      this.disarm(run);
      report.exception(job.id, "exec", "mock run exception generated");
    }
  }

  reattach(job: ExecJob, report: ExecReport): void {
    const run = this.newRun(job, report);
    if (run.reattachFinish) {
      // Flux: "assume the job has finished" — it ends at once with its wait status.
      if (job.startedAt === undefined) report.start(job.id);
      run.started = true;
      this.after(job.id, 0, () => this.finish(job.id, run.waitStatus));
      return;
    }
    // Not started yet and driven by exec-override: keep waiting for the `start` request.
    if (job.startedAt === undefined && run.override) return;
    if (job.startedAt === undefined) this.begin(job.id, run, this.clock.now(), true);
    else this.begin(job.id, run, job.startedAt * 1000, false);
  }

  /**
   * Flux's `job-exec.override` request: `start` starts an override job, `finish` ends a
   * running one with `status`. Only the job's owner may drive it (as in Flux).
   */
  override(id: JobId, event: string, userid: number, status = 0): void {
    const run = this.runs.get(id);
    const fail = (code: ErrorCode, why: string) => new JobtapError(code, `job ${formatJobId(id)}: exec-override ${event}: ${why}`);
    if (!run) throw fail(ErrorCode.UNKNOWN_JOB, "job not found in the test executor");
    if (userid !== run.userid) throw fail(ErrorCode.PERMISSION_DENIED, "permission denied (not the job's owner)");
    if (!run.override) throw fail(ErrorCode.INVALID_ARGUMENT, "job not in exec override mode (attributes.system.exec.test.override)");
    if (event === "start") {
      if (run.started) throw fail(ErrorCode.BAD_STATE, "job already running");
      this.begin(id, run, this.clock.now(), true);
    } else if (event === "finish") {
      if (!run.started || run.finished) throw fail(ErrorCode.BAD_STATE, "job not running");
      if (!Number.isInteger(status)) throw fail(ErrorCode.INVALID_ARGUMENT, "status must be an integer");
      this.disarm(run);
      this.finish(id, status);
    } else throw fail(ErrorCode.INVALID_ARGUMENT, `invalid event "${event}" (start or finish)`);
  }

  updateExpiration(id: JobId, expiration: number): void {
    const run = this.runs.get(id);
    if (!run || run.finished || !run.armed) return;
    run.limitAt = expiration > 0 ? expiration * 1000 : Infinity;
    this.arm(run, this.clock.now());
  }

  kill(id: JobId): void {
    const run = this.runs.get(id);
    if (!run || run.finished) return;
    this.disarm(run);
    // Killing is asynchronous in a real executor; keep that shape so ordering matches.
    if (run.started) this.after(id, 0, () => this.finish(id, waitStatus.signaled(SIGTERM)));
    else this.after(id, 0, () => this.release(id));
  }

  close(): void {
    for (const run of this.runs.values()) {
      if (run.timer) this.clock.clearTimeout(run.timer);
      run.released = true;
    }
    this.runs.clear();
  }

  private newRun(job: ExecJob, report: ExecReport): TestRun {
    const run = newTestRun(job, report);
    this.runs.set(job.id, run);
    return run;
  }

  /** The run starts (or started, on reattach) at `startMs`: post `start`, time its end. */
  private begin(id: JobId, run: TestRun, startMs: number, postStart: boolean): void {
    run.started = true;
    if (postStart) run.report.start(id);
    // An override job with an unlimited run waits for the finish request (Flux).
    const unlimited = run.override && run.runDuration === 0;
    run.endAt = unlimited ? Infinity : startMs + run.runDuration * 1000;
    run.limitAt = run.duration > 0 ? startMs + run.duration * 1000 : Infinity;
    this.arm(run, postStart ? startMs : this.clock.now());
  }

  /** One timer for whichever comes first: the end of the run or the time limit (`now`:
   *  the clock's time, read once by the caller). */
  private arm(run: TestRun, now: number): void {
    run.armed = true;
    if (run.timer) this.clock.clearTimeout(run.timer);
    run.timer = undefined;
    // A limit before the end means the job would be killed at its time limit.
    const limited = (run.limited = run.limitAt < run.endAt);
    const at = limited ? run.limitAt : run.endAt;
    if (!Number.isFinite(at)) return;
    run.timer = this.clock.setTimeout(() => this.fire(run), Math.max(0, at - now));
  }

  /** The armed timer is due: the run ends, or its time limit passed. */
  private fire(run: TestRun): void {
    run.timer = undefined;
    if (run.limited) run.report.exception(run.id, "timeout", "resource allocation expired");
    else this.finishRun(run.id, run, run.waitStatus);
  }

  private disarm(run: TestRun): void {
    if (run.timer) this.clock.clearTimeout(run.timer);
    run.timer = undefined;
    run.armed = false;
  }

  private after(id: JobId, ms: number, fn: () => void): void {
    const run = this.runs.get(id);
    if (!run) return;
    run.timer = this.clock.setTimeout(() => {
      run.timer = undefined;
      fn();
    }, ms);
  }

  private finish(id: JobId, status: number): void {
    const run = this.runs.get(id);
    if (run) this.finishRun(id, run, status);
  }

  /** The run ends with `status`: `finish`, then the release (once). */
  private finishRun(id: JobId, run: TestRun, status: number): void {
    if (run.finished) return;
    run.finished = true;
    run.report.finish(id, status);
    this.releaseRun(id, run);
  }

  private release(id: JobId): void {
    const run = this.runs.get(id);
    if (run) this.releaseRun(id, run);
  }

  /** The run's final release (once), from the run itself: no lookup by id. */
  private releaseRun(id: JobId, run: TestRun): void {
    if (run.released) return;
    run.released = true;
    this.runs.delete(id);
    run.report.release(id);
  }
}

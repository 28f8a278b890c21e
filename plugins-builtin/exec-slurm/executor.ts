/**
 * The `slurm` executor: a job runs as a Slurm batch job.
 *
 * - start: `sbatch --parsable` (at most `submitConcurrency` at once); the Slurm id is saved
 *   in the exec eventlog (`exec-state {slurm_jobid}`) before anything else is reported, so a
 *   restarted jobtap reattaches by it.
 * - state: ONE `squeue --jobs=<all tracked ids>` per poll, never one call per job; ids squeue
 *   no longer knows get one `sacct` call; an id neither knows is a vanished job (exception).
 *   RUNNING → `start`; a terminal state → `finish` with Slurm's wait status, then `release`;
 *   TIMEOUT, NODE_FAIL, PREEMPTED, an outside scancel ... → the matching exception first.
 * - kill (cancel, time limit): `scancel`, batched like the polls; the poll then sees the job
 *   end. The time limit is jobtap's own timer from `start` (exact to the second; Slurm's
 *   `--time` is whole minutes and only a backstop).
 * - slurmctld down or slow: a failed poll or a refused connection leaves every job as it
 *   is; polls back off (doubling, up to `maxPollPeriodMs`) and go on, `maxPollFailures`
 *   times in a row at most: then every job waiting on an answer (tracked, or looked up by
 *   comment) gets an `exec` exception naming the last Slurm error and is released, so
 *   `submit --wait` and `cancel` end instead of waiting forever on a Slurm that cannot be
 *   asked (a wrong SLURM_CONF, no configuration source). An sbatch whose
 *   outcome is unknown is never simply retried: the job is first looked up by its
 *   `--comment=jobtap:<id>` and resubmitted only if two lookups, a poll period apart, both
 *   find no such job (a stalled slurmctld may still act on the request of an sbatch that
 *   was killed, just after it answers the first lookup).
 * - reattach: by the saved Slurm id; a job without one is looked up by its comment the same
 *   way, so a restart between sbatch and the save submits nothing twice.
 * - close: timers stop; Slurm jobs keep running (a restarted jobtap reattaches them).
 */
import { formatJobId, type Clock, type ExecJob, type ExecReport, type Executor, type HookUsers, type JobId } from "jobtap/plugin";
import { controllerUnreachable, type CommandResult, type SlurmSite } from "./commands.js";
import { pullPollIn, regularPollMs } from "./pace.js";
import { armLimitAt, clearLimit, LOOKUP_MISSES, newRun, RAN, type Phase, type RunView, type SlurmRun } from "./run.js";
import { oneLine, SlurmCommands } from "./runner.js";
import { commentLookupArgs, outcomeOf, parseComments, parseSacct, parseSqueue, sacctArgs, squeueArgs, type SlurmJobStatus } from "./status.js";
import { jobtapComment, sbatchRequest, type SlurmChoices } from "./submit.js";

/** Everything the executor is configured with ([exec.slurm], see config.ts). */
export interface SlurmExecConfig {
  site: SlurmSite;
  choices: SlurmChoices;
  pollPeriodMs: number;
  maxPollPeriodMs: number;
  /** Failed polls in a row after which the jobs waiting on Slurm's answers are given up. */
  maxPollFailures: number;
  submitConcurrency: number;
}

/** The eventlog key of the saved Slurm id (`exec-state` context). */
export const SAVED_ID_KEY = "slurm_jobid";
/** The `exec-state` keys of Slurm's final state and reason, saved when a poll sees the job end. */
export const FINAL_STATE_KEY = "slurm_state";
export const FINAL_REASON_KEY = "slurm_reason";

/** Runs jobs on a Slurm cluster; see the file comment for the guarantees. */
export class SlurmExecutor implements Executor {
  private readonly runs = new Map<JobId, SlurmRun>();
  private readonly submitQueue: SlurmRun[] = [];
  private submitting = 0;
  private readonly toCancel = new Set<string>();
  private pollTimer?: ReturnType<Clock["setTimeout"]>;
  /** Clock ms at which pollTimer fires. */
  private pollDueAt = 0;
  private polling = false;
  private failures = 0;
  /** The last failed command and its message, named in the give-up exception. */
  private lastError = "";
  private closed = false;
  /** sbatch, squeue, scancel and sacct, each in a helper process (runner.ts). */
  private readonly cmds: SlurmCommands;

  constructor(
    private readonly clock: Clock,
    private config: SlurmExecConfig,
    private readonly log: (level: "info" | "error", msg: string) => void,
    /** `p.hookUsers` (multi-user instance): sbatch and scancel run as the job's owner. */
    users?: HookUsers,
  ) {
    this.cmds = new SlurmCommands(() => this.config.site, config.submitConcurrency, users);
  }

  /** New settings ([exec.slurm] reloaded): used from the next command on. */
  reconfigure(config: SlurmExecConfig): void {
    this.config = config;
    this.cmds.resize(config.submitConcurrency);
  }

  start(job: ExecJob, report: ExecReport): void {
    const run = this.addRun(job, report, "queued");
    this.prepare(run, job);
    this.submitQueue.push(run);
    this.pump();
  }

  reattach(job: ExecJob, report: ExecReport): void {
    const saved = job.saved[SAVED_ID_KEY];
    const run = this.addRun(job, report, typeof saved === "string" ? "tracked" : "lookup");
    if (job.startedAt !== undefined) {
      run.started = true;
      run.startedAt = job.startedAt * 1000;
      this.armLimit(run);
    }
    if (typeof saved === "string") run.slurmId = saved;
    else this.prepare(run, job);
    this.schedulePoll(0);
  }

  kill(id: JobId): void {
    const run = this.runs.get(id);
    if (!run || run.ended || run.killed) return;
    run.killed = true;
    clearLimit(this.clock, run);
    if (run.phase === "queued") {
      this.submitQueue.splice(this.submitQueue.indexOf(run), 1);
      this.end(run, undefined);
    } else if (run.phase === "tracked") {
      this.cancel(run.slurmId!);
    }
    // submitting: cancelled when sbatch answers; lookup: cancelled if found, else ended.
  }

  updateExpiration(id: JobId, expiration: number): void {
    const run = this.runs.get(id);
    if (!run || !run.started || run.ended || run.killed) return;
    clearLimit(this.clock, run);
    if (expiration <= 0) return;
    // The job waited in Slurm's queue after alloc: its new duration counts from its start.
    const at = run.allocStart !== undefined ? run.startedAt! + (expiration - run.allocStart) * 1000 : expiration * 1000;
    armLimitAt(this.clock, run, at);
  }

  close(): void {
    this.closed = true;
    this.cmds.close();
    if (this.pollTimer) this.clock.clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    for (const run of this.runs.values()) clearLimit(this.clock, run);
    this.runs.clear();
    this.submitQueue.length = 0;
  }

  private addRun(job: ExecJob, report: ExecReport, phase: Phase): SlurmRun {
    const run = newRun(job, report, phase);
    this.runs.set(job.id, run);
    return run;
  }

  /** Jobs this executor has not released yet (for tests and `plugin query`). */
  jobs(): { id: JobId; phase: Phase; slurmId?: string; started: boolean }[] {
    return [...this.runs.values()].map((r) => ({ id: r.id, phase: r.phase, slurmId: r.slurmId, started: r.started }));
  }

  /** Tracked jobs per Slurm state of their last poll (`plugin query`, the /metrics gauge). */
  stateCounts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.runs.values()) if (r.seen !== undefined && !r.ended) out[r.seen.state] = (out[r.seen.state] ?? 0) + 1;
    return out;
  }

  /** Where a job is on its way through Slurm, for `job why` (explain.ts); undefined if not here. */
  whereIs(id: JobId): RunView | undefined {
    const run = this.runs.get(id);
    if (run === undefined) return undefined;
    const ahead = run.phase === "queued" ? this.submitQueue.indexOf(run) : 0;
    return { phase: run.phase, slurmId: run.slurmId, seen: run.seen, ahead, misses: run.misses, submitConcurrency: this.config.submitConcurrency };
  }

  private prepare(run: SlurmRun, job: ExecJob): void {
    try {
      run.request = sbatchRequest(job.jobspec, formatJobId(job.id), formatJobId(job.id, "dec"), job.duration, this.config.choices, process.env);
    } catch (e) {
      run.requestError = `cannot submit to Slurm: ${(e as Error).message}`;
    }
  }

  // --- submission ---

  private pump(): void {
    while (this.submitting < this.config.submitConcurrency && this.submitQueue.length > 0) {
      const run = this.submitQueue.shift()!;
      if (run.requestError !== undefined) {
        this.end(run, { type: "exec", note: run.requestError });
        continue;
      }
      run.phase = "submitting";
      this.submitting++;
      void this.submit(run).finally(() => {
        this.submitting--;
        if (!this.closed) this.pump();
        if (!this.closed && !this.busySubmitting()) this.burstOver();
      });
    }
  }

  private async submit(run: SlurmRun): Promise<void> {
    const req = run.request!;
    const r = await this.cmds.sbatch(run.id, req.args, req.env, req.script);
    if (this.closed || this.runs.get(run.id) !== run) return;
    const slurmId = r.status === 0 ? /^(\d+)(;\S*)?$/.exec(r.stdout.trim().split("\n").pop() ?? "")?.[1] : undefined;
    if (slurmId !== undefined) {
      this.track(run, slurmId);
    } else if (r.status === null || controllerUnreachable(r.stderr)) {
      // Perhaps submitted, perhaps not: find out by the comment before any retry.
      this.log("error", `job ${formatJobId(run.id)}: sbatch did not complete (${oneLine(r)}); looking it up before retrying`);
      run.phase = "lookup";
      run.misses = 0;
      this.failures++;
      this.schedulePoll(this.backoffMs());
    } else {
      const why = r.status === 0 ? `unexpected sbatch output ${JSON.stringify(r.stdout.trim())}` : `sbatch refused the job: ${oneLine(r)}`;
      this.end(run, { type: "exec", note: why });
    }
  }

  /** The job has a Slurm id: saved first, then polled (or cancelled if killed meanwhile). */
  private track(run: SlurmRun, slurmId: string): void {
    run.slurmId = slurmId;
    run.phase = "tracked";
    run.request = undefined;
    run.report.save(run.id, { [SAVED_ID_KEY]: slurmId });
    if (run.killed) this.cancel(slurmId);
    this.schedulePoll(this.regularPollMs());
  }

  /** Slurm id → jobtap job of every tracked job (scancel runs as the job's owner). */
  private owners(): Map<string, JobId> {
    return new Map([...this.runs.values()].filter((r) => r.slurmId !== undefined).map((r) => [r.slurmId!, r.id]));
  }

  /** Runs squeue, scancel or sacct as the daemon. */
  private command(cmd: string, args: string[]): Promise<CommandResult> {
    return this.cmds.run(cmd, args);
  }

  // --- polling ---

  private schedulePoll(ms: number): void {
    if (this.closed || this.pollTimer !== undefined || this.polling) return;
    this.pollDueAt = this.clock.now() + ms;
    this.pollTimer = this.clock.setTimeout(() => {
      this.pollTimer = undefined;
      void this.poll();
    }, ms);
  }

  /** sbatch calls in flight or queued: polls are spaced out meanwhile (pace.ts). */
  private busySubmitting(): boolean {
    return this.submitting > 0 || this.submitQueue.length > 0;
  }

  private regularPollMs(): number {
    return regularPollMs(this.config, this.busySubmitting());
  }

  /** The last sbatch answered: a poll stretched by the burst comes back to the poll period. */
  private burstOver(): void {
    if (this.pollTimer === undefined || !pullPollIn(this.config, this.pollDueAt, this.clock.now(), this.failures > 0)) return;
    this.clock.clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    this.schedulePoll(this.config.pollPeriodMs);
  }

  private backoffMs(): number {
    const { pollPeriodMs, maxPollPeriodMs } = this.config;
    return Math.min(maxPollPeriodMs, pollPeriodMs * 2 ** Math.min(this.failures, 20));
  }

  private async poll(): Promise<void> {
    this.polling = true;
    let ok = false;
    try {
      ok = (await this.flushCancels()) && (await this.lookups()) && (await this.pollTracked());
    } catch (e) {
      this.lastError = `slurm poll: ${(e as Error).message}`;
      this.log("error", `slurm poll failed: ${(e as Error).message}`);
    } finally {
      this.polling = false;
    }
    if (this.closed) return;
    if (ok) this.failures = 0;
    else if (++this.failures >= this.config.maxPollFailures) this.giveUp();
    if (this.runs.size > 0) this.schedulePoll(ok ? this.regularPollMs() : this.backoffMs());
  }

  /** One squeue for every tracked job; false if Slurm could not be asked. */
  private async pollTracked(): Promise<boolean> {
    const tracked = [...this.runs.values()].filter((r) => r.phase === "tracked" && !r.ended);
    if (tracked.length === 0) return true;
    const ids = [...new Set(tracked.map((r) => r.slurmId!))];
    const r = await this.command("squeue", squeueArgs(ids));
    if (this.closed) return true;
    let statuses: Map<string, SlurmJobStatus>;
    if (r.status === 0) statuses = parseSqueue(r.stdout);
    else if (/invalid job id/i.test(r.stderr) && !controllerUnreachable(r.stderr)) statuses = new Map();
    else return this.pollFailed("squeue", r);
    const missing = ids.filter((id) => !statuses.has(id));
    if (missing.length > 0) for (const [id, s] of await this.accounting(missing)) statuses.set(id, s);
    if (this.closed) return true;
    for (const run of tracked) this.apply(run, statuses.get(run.slurmId!));
    return true;
  }

  /** sacct for jobs slurmctld forgot; an empty map when accounting is off or fails. */
  private async accounting(ids: string[]): Promise<Map<string, SlurmJobStatus>> {
    const r = await this.command("sacct", sacctArgs(ids));
    return r.status === 0 ? parseSacct(r.stdout) : new Map();
  }

  /**
   * Slurm could not be asked `failures` times in a row: the jobs waiting on its answers end
   * with an exception naming the error (their Slurm jobs, if any, may still be there: a
   * pending scancel is kept and tried again while other jobs are polled).
   */
  private giveUp(): void {
    const n = this.failures;
    this.failures = 0;
    this.log("error", `${n} Slurm polls failed in a row; giving up the jobs waiting on them: ${this.lastError}`);
    for (const run of [...this.runs.values()]) {
      if (run.ended || (run.phase !== "tracked" && run.phase !== "lookup")) continue;
      const what = run.phase === "tracked" ? `Slurm job ${run.slurmId}` : "the Slurm submission";
      this.end(run, { type: "exec", note: `${what}: Slurm could not be asked ${n} times in a row (${this.lastError})` });
    }
  }

  private pollFailed(what: string, r: CommandResult): false {
    this.lastError = `${what}: ${oneLine(r)}`;
    // One line per streak of failures, not one per poll.
    if (this.failures === 0) this.log("error", `${what} failed, jobs keep their state and polls back off: ${oneLine(r)}`);
    return false;
  }

  /** Jobs whose submission is uncertain: found by comment (tracked) or submitted now. */
  private async lookups(): Promise<boolean> {
    const waiting = [...this.runs.values()].filter((r) => r.phase === "lookup");
    if (waiting.length === 0) return true;
    const r = await this.command("squeue", commentLookupArgs());
    if (this.closed) return true;
    if (r.status !== 0) return this.pollFailed("squeue (looking up jobs by comment)", r);
    const byComment = parseComments(r.stdout);
    for (const run of waiting) {
      const found = byComment.get(jobtapComment(formatJobId(run.id, "dec")));
      if (found !== undefined) this.track(run, found);
      else if (run.killed) this.end(run, undefined);
      else if (++run.misses >= LOOKUP_MISSES) {
        run.phase = "queued";
        this.submitQueue.push(run);
      }
    }
    this.pump();
    return true;
  }

  /** What one status means for its job (undefined: Slurm knows no such job). */
  private apply(run: SlurmRun, s: SlurmJobStatus | undefined): void {
    if (run.ended) return;
    if (s === undefined) {
      this.end(run, { type: "exec", note: `Slurm job ${run.slurmId} vanished: neither squeue nor sacct knows it` });
      return;
    }
    run.seen = { state: s.state, reason: s.reason, at: this.clock.now() };
    const outcome = outcomeOf(s, run.slurmId!, run.killed);
    if (outcome.kind === "waiting") return;
    if (!run.started && (outcome.kind === "running" || RAN.has(s.state))) this.markStarted(run);
    if (outcome.kind !== "ended") return;
    // Slurm's final word, kept with the job: `job why` of the ended job quotes it.
    run.report.save(run.id, { [FINAL_STATE_KEY]: s.state, [FINAL_REASON_KEY]: s.reason });
    this.end(run, outcome.exception, s.waitStatus);
  }

  private markStarted(run: SlurmRun): void {
    run.started = true;
    run.startedAt = this.clock.now();
    run.report.start(run.id);
    if (!run.killed) this.armLimit(run);
  }

  /** The job is done here: exception (if any), `finish` (if it started), `release`. */
  private end(run: SlurmRun, exception: { type: string; note: string } | undefined, status = 0): void {
    run.ended = true;
    clearLimit(this.clock, run);
    this.runs.delete(run.id);
    if (exception) run.report.exception(run.id, exception.type, exception.note);
    if (run.started) run.report.finish(run.id, status);
    run.report.release(run.id);
  }

  // --- cancel and time limit ---

  private cancel(slurmId: string): void {
    this.toCancel.add(slurmId);
    // Batched: every kill of this turn goes out in one scancel.
    if (this.toCancel.size === 1) queueMicrotask(() => void this.flushCancels());
  }

  /** One scancel for every pending cancel; kept for the next poll if it fails. */
  private async flushCancels(): Promise<boolean> {
    if (this.toCancel.size === 0) return true;
    const ids = [...this.toCancel];
    this.toCancel.clear();
    const r = await this.cmds.scancel(ids, () => this.owners());
    if (r.status === 0 || (!controllerUnreachable(r.stderr) && r.status !== null)) {
      // A job that already ended makes scancel complain; the poll reports what happened.
      this.schedulePoll(0);
      return true;
    }
    for (const id of ids) this.toCancel.add(id);
    return this.pollFailed("scancel", r);
  }

  private armLimit(run: SlurmRun): void {
    if (run.duration > 0 && run.startedAt !== undefined) armLimitAt(this.clock, run, run.startedAt + run.duration * 1000);
  }
}

/**
 * The executor registry and the manager's one door to executors.
 *
 * A job's executor is named by `attributes.system.exec.name`; without it, `test` when
 * `attributes.system.exec.test` is present (Flux's testexec convention), else `local`. The
 * name is resolved when the job starts (RUN) or is reattached after a restart, and the job
 * stays bound to that executor until `release`, even if its plugin is removed meanwhile.
 *
 * Every call into an executor is guarded: a throw or a rejected Promise becomes an `exec`
 * exception on that job and a release, never a manager crash. A name nobody registered is
 * an `exec` exception naming it (the job ends; it never waits forever).
 */
import { ErrorCode, JobtapError } from "../../errors.js";
import type { Engine } from "../engine/engine.js";
import { formatJobId, type JobId } from "../base/ids.js";
import { durationOf, queued, type ActiveJob, type ExecRegistration } from "../engine/job.js";
import { isPlainObject } from "../core/jobspec.js";
import type { EventEntry, Jobspec } from "../port/records.js";
import { eventPosted } from "../core/transition.js";
import type { ExecJob, ExecReport, ExecUsage, Executor } from "../port/executor.js";

/** Exec eventlog entry carrying executor data for reattach (ExecReport.save). Stores written
 *  before the exec eventlog existed hold it in the main eventlog: both are read (savedState). */
export const EXEC_STATE_EVENT = "exec-state";

const NAME_RE = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** The final release's context, the same for every job: one frozen object, shared. */
const RELEASE_ALL: Readonly<Record<string, unknown>> = Object.freeze({ ranks: "all", final: true });

/** The context of a `finish` with status 0 and no usage (most jobs): one frozen object,
 *  shared, so its eventlog text is also made once (eventlog-text.ts remembers frozen ones). */
const FINISHED_OK: Readonly<Record<string, unknown>> = Object.freeze({ status: 0 });

/** `ExecJob.saved` of a job with nothing saved: one frozen empty object, shared. */
const NOTHING_SAVED: Readonly<Record<string, unknown>> = Object.freeze({});

/** The executor a jobspec asks for, or `{ error }` naming the bad attribute. */
export function executorName(jobspec: Jobspec): string | { error: string } {
  const exec = jobspec.attributes.system?.exec;
  if (exec === undefined) return "local";
  if (!isPlainObject(exec)) return { error: "attributes.system.exec must be an object" };
  if (exec.name !== undefined) {
    if (typeof exec.name !== "string" || !NAME_RE.test(exec.name)) {
      return { error: `attributes.system.exec.name: ${JSON.stringify(exec.name)} is not an executor name` };
    }
    return exec.name;
  }
  return exec.test !== undefined ? "test" : "local";
}

/** Registered executors and guarded calls into them. One per manager. */
export class Executors {
  private readonly byName = new Map<string, ExecRegistration>();
  /** The job being handed to its executor's `start`: a `start` report made from inside
   *  that call (the test executor's) needs no lookup by id. */
  private starting: ActiveJob | undefined;

  constructor(private readonly engine: Engine) {}

  /**
   * Registers `executor` under `name`; throws INVALID_ARGUMENT for a bad or taken name.
   * Returns a function that unregisters it (jobs already bound keep it until released).
   */
  register(name: string, executor: Executor, plugin?: string): () => void {
    if (typeof name !== "string" || !NAME_RE.test(name)) {
      throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `executor name ${JSON.stringify(name)} is not valid ([A-Za-z0-9_.-])`);
    }
    const taken = this.byName.get(name);
    if (taken) {
      const by = taken.plugin === undefined ? "the job manager" : `plugin ${taken.plugin}`;
      throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `executor "${name}" is already registered by ${by}`);
    }
    for (const m of ["start", "kill", "reattach"] as const) {
      if (typeof executor?.[m] !== "function") {
        throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `executor "${name}": ${m} must be a function`);
      }
    }
    const reg: ExecRegistration = { name, executor, plugin, report: this.reportFor(name, () => reg) };
    this.byName.set(name, reg);
    // A plugin loaded again (or re-applied by a config reload) takes over the jobs its
    // earlier instance was running: after its setup, as after a restart.
    if (this.orphans(name).length > 0) this.engine.clock.setTimeout(() => this.adopt(reg), 0);
    return () => {
      if (this.byName.get(name) === reg) this.byName.delete(name);
    };
  }

  /** Running jobs bound to an earlier registration of `name` that is gone. */
  private orphans(name: string): ActiveJob[] {
    const current = this.byName.get(name);
    return [...this.engine.active.values()].filter(
      (j) => j.exec !== undefined && !j.exec.released && j.exec.reg.name === name && j.exec.reg !== current,
    );
  }

  /** Rebinds the orphans of `reg.name` to `reg` and reattaches them; closes the old executors. */
  private adopt(reg: ExecRegistration): void {
    if (this.byName.get(reg.name) !== reg) return;
    const old = new Set<ExecRegistration>();
    for (const job of this.orphans(reg.name)) {
      old.add(job.exec!.reg);
      this.engine.log("info", `job ${formatJobId(job.core.id)}: executor ${reg.name} registered again: reattaching`);
      job.exec = { reg, released: false, killed: false };
      this.guard(job, "reattach", () => reg.executor.reattach(this.execJob(job), reg.report));
      // A kill that was under way is asked of the new executor (as restart's CLEANUP action does).
      if (job.core.state === "CLEANUP" && job.core.endEvent?.name === "exception") this.kill(job);
    }
    for (const r of old) {
      try {
        r.executor.close?.();
      } catch (err) {
        this.engine.log("error", `executor ${r.name}: close failed: ${errText(err)}`);
      }
    }
  }

  /** The registered executor names, in registration order. */
  names(): string[] {
    return [...this.byName.keys()];
  }

  /** The executor registered under `name`, if any. */
  get(name: string): Executor | undefined {
    return this.byName.get(name)?.executor;
  }

  /** RUN: hands the job to its executor (or ends it with an exception naming why not). */
  start(job: ActiveJob): void {
    const reg = this.resolve(job, "");
    if (!reg) return;
    job.exec = { reg, released: false, killed: false };
    // guard() inlined: no closure per job on the hottest executor call.
    this.starting = job;
    try {
      this.settle(job, "start", reg.executor.start(this.execJob(job), reg.report));
    } catch (err) {
      this.failed(job, "start", err);
    } finally {
      this.starting = undefined;
    }
  }

  /** Restart: a job started and not released goes back to its executor. */
  reattach(job: ActiveJob): void {
    const reg = this.resolve(job, " after a restart (is the plugin that registers it loaded?)");
    if (!reg) return;
    job.exec = { reg, released: false, killed: false };
    this.guard(job, "reattach", () => reg.executor.reattach(this.execJob(job), reg.report));
  }

  /** A fatal exception: the bound executor stops the job (once). */
  kill(job: ActiveJob): void {
    const b = job.exec;
    if (!b || b.released || b.killed) return;
    b.killed = true;
    this.guard(job, "kill", () => b.reg.executor.kill(job.core.id));
  }

  /** True while the job is bound to an executor that has not released it. */
  running(job: ActiveJob): boolean {
    return job.exec !== undefined && !job.exec.released;
  }

  /** A `resource-update` of a running job: its executor's time limit follows. */
  updateExpiration(job: ActiveJob, expiration: number): void {
    const b = job.exec;
    if (!b || b.released) return;
    this.guard(job, "updateExpiration", () => b.reg.executor.updateExpiration?.(job.core.id, expiration));
  }

  /**
   * Closes every registered executor, and those unregistered (their plugin removed, as at
   * manager close) that still run jobs; failures are logged.
   */
  close(): void {
    const regs = new Set(this.byName.values());
    for (const job of this.engine.active.values()) if (job.exec && !job.exec.released) regs.add(job.exec.reg);
    for (const reg of regs) {
      try {
        reg.executor.close?.();
      } catch (err) {
        this.engine.log("error", `executor ${reg.name}: close failed: ${errText(err)}`);
      }
    }
  }

  /** What the executor is handed: the job, its allocation and what it saved before. */
  execJob(job: ActiveJob): ExecJob {
    const c = job.core;
    let startedAt: number | undefined;
    let saved: Readonly<Record<string, unknown>> = NOTHING_SAVED;
    // A first start (the usual case) has neither: no walk over the eventlogs.
    if (eventPosted(c, "start") || eventPosted(c, EXEC_STATE_EVENT) || job.execlog !== undefined) {
      for (const e of job.eventlog) if (e.name === "start") { startedAt = e.timestamp; break; }
      saved = savedState(job.eventlog, job.execlog) ?? NOTHING_SAVED;
    }
    const duration = durationOf(c.jobspec);
    // Two literals, not a spread of a conditional object (a temporary per start).
    return startedAt === undefined
      ? { id: c.id, userid: c.userid, jobspec: c.jobspec, R: c.R, duration, saved }
      : { id: c.id, userid: c.userid, jobspec: c.jobspec, R: c.R, duration, startedAt, saved };
  }

  private resolve(job: ActiveJob, why: string): ExecRegistration | undefined {
    const name = executorName(job.core.jobspec);
    const reg = typeof name === "string" ? this.byName.get(name) : undefined;
    if (reg) return reg;
    const note = typeof name === "string" ? `executor "${name}" is not registered${why}` : name.error;
    this.end(job, note);
    return undefined;
  }

  /** Runs one executor call; a throw or rejection ends the job with an exception. */
  private guard(job: ActiveJob, what: string, fn: () => void | Promise<void>): void {
    try {
      this.settle(job, what, fn());
    } catch (err) {
      this.failed(job, what, err);
    }
  }

  /** An executor call's result: a rejection ends the job like a throw. */
  private settle(job: ActiveJob, what: string, r: void | Promise<void>): void {
    if (r instanceof Promise) r.catch((err: unknown) => this.failed(job, what, err));
  }

  private failed(job: ActiveJob, what: string, err: unknown): void {
    const name = job.exec?.reg.name ?? "?";
    this.engine.log("error", `job ${formatJobId(job.core.id)}: executor ${name}: ${what} failed: ${errText(err)}`);
    if (!this.engine.active.has(job.core.id) || job.exec?.released) return;
    this.end(job, `executor "${name}": ${what} failed: ${errText(err)}`);
  }

  /** An `exec` exception, then the final release (nothing runs, resources go back). */
  private end(job: ActiveJob, note: string): void {
    if (job.exec) job.exec.released = true;
    this.engine.post(job, "exception", { type: "exec", severity: 0, note });
    this.engine.post(job, "release", RELEASE_ALL);
  }

  /** The report handle of one registration: every call checks the job is bound to it. */
  private reportFor(name: string, self: () => ExecRegistration): ExecReport {
    const e = this.engine;
    // The job of a `finish` report, kept until the next report: the `release` that follows
    // at once (from every builtin executor) finds it without a lookup by id.
    let finished: ActiveJob | undefined;
    const bound = (id: JobId, what: string, known?: ActiveJob): ActiveJob | undefined => {
      finished = undefined;
      const job = known !== undefined && known.core.id === id ? known : e.active.get(id);
      if (job && job.exec?.reg === self() && !job.exec.released) return job;
      e.log("error", `executor ${name}: ${what} for job ${formatJobId(id)}, which it does not run (ignored)`);
      return undefined;
    };
    return {
      start: (id) => {
        const job = bound(id, "start", this.starting);
        if (job && !eventPosted(job.core, "start") && !queued(job, "start")) e.post(job, "start");
      },
      finish(id, status, usage?: ExecUsage) {
        const job = bound(id, "finish");
        if (!job) return;
        if (!Number.isInteger(status)) return e.log("error", `executor ${name}: finish for job ${formatJobId(id)}: status must be an integer`);
        e.post(job, "finish", usage && isPlainObject(usage) ? { status, usage } : status === 0 ? FINISHED_OK : { status });
        finished = job;
      },
      release(id) {
        const job = bound(id, "release", finished);
        if (!job) return;
        job.exec!.released = true;
        e.post(job, "release", RELEASE_ALL);
      },
      exception(id, type, note, severity = 0) {
        const job = bound(id, "exception");
        if (job) e.post(job, "exception", { type: String(type), severity, note: String(note) });
      },
      save(id, data) {
        const job = bound(id, "save");
        if (!job) return;
        if (!isPlainObject(data)) return e.log("error", `executor ${name}: save for job ${formatJobId(id)}: data must be an object`);
        e.postExec(job, EXEC_STATE_EVENT, data);
      },
      durable(fn) {
        e.batch.afterCommit((err) => {
          if (!err) fn();
        });
      },
      log: (level, message) => e.log(level, `executor ${name}: ${message}`),
    };
  }
}

/**
 * The merged `exec-state` contexts of a job, oldest first: those in its main eventlog (a store
 * written before the exec eventlog existed), then those in its exec eventlog. Undefined if none.
 */
export function savedState(eventlog: readonly EventEntry[], execlog: readonly EventEntry[] | undefined): Record<string, unknown> | undefined {
  let saved: Record<string, unknown> | undefined;
  for (const log of [eventlog, execlog ?? []]) {
    for (const e of log) if (e.name === EXEC_STATE_EVENT && e.context) saved = { ...saved, ...e.context };
  }
  return saved;
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

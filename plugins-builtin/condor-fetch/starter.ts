/**
 * The starter hooks (spec htcondor.md §3) for any job whose keyword resolves (§3.1:
 * STARTER_JOB_HOOK_KEYWORD, else the job's HookKeyword if the config has hooks for it,
 * else STARTER_DEFAULT_JOB_HOOK_KEYWORD) — fetched work and ordinary jobs alike:
 *
 * - PREPARE_JOB_BEFORE_TRANSFER then PREPARE_JOB run as a prolog (between `alloc` and
 *   `start`), each with the job ad on stdin; their output rewrites the job (Cmd, Arguments,
 *   Iwd, Env and any other attribute). Status 1–299 holds the job, ≥ 300 sends it back to
 *   pending: a RUN job cannot go back in Flux's state machine, so the job ends with a
 *   `hold`/`requeue` exception and a copy of it is submitted — held (HoldReasonCode 19,
 *   HoldReasonSubCode = status) or pending (docs/condor-fetch.md).
 * - UPDATE_JOB_INFO after STARTER_INITIAL_UPDATE_INTERVAL, then every STARTER_UPDATE_INTERVAL,
 *   with usage from /proc; fire and forget.
 * - JOB_EXIT as an epilog once the job has finished, with `exit`, `hold`, `remove` or `evict`,
 *   waited for at most `<Keyword>_HOOK_JOB_EXIT_TIMEOUT` (30 s).
 * All four run as the job's user in a multi-user instance (`runAs`, through the launcher),
 * as HTCondor's starter runs them as the job's owner.
 */
import { basename } from "node:path";
import { ClassAd, JOB_AD_ATTRIBUTES, withRead, describeHookResult, formatJobId, printOldAd, readHookAd, splitCondorArgs, unparse, waitStatus } from "jobtap/plugin";
import type { EventArgs, HookResult, HookRunner, JobArgs, JobId, PluginContext } from "jobtap/plugin";
import type { FetchConfig, HookType, KeywordHooks } from "./config.js";
import { addUsage, hookStatus, jobEnvironment, maxUsage, procUsage, processTree, type ProcUsage } from "./jobads.js";
import { DEFAULT_REQUEUE, planCopy, type CopyPlan } from "./requeue.js";

const PREPARE = "condor-fetch.prepare";
const JOB_EXIT = "condor-fetch.job-exit";
/** jobtap's limit on each PREPARE hook (HTCondor waits for ever; docs/condor-fetch.md). */
const PREPARE_TIME_LIMIT_MS = 300_000;
const UPDATE_TIME_LIMIT_MS = 60_000;
/** How often the usage of a job with UPDATE_JOB_INFO or JOB_EXIT is sampled, so JOB_EXIT reports it. */
const SAMPLE_MS = 5_000;

type ExitArg = "exit" | "hold" | "remove" | "evict";

/** One job under starter hooks. */
interface StarterJob {
  id: JobId;
  userid: number;
  hooks: KeywordHooks;
  abort: AbortController;
  startedAt?: number;
  /** Set by a fatal exception: how the job is leaving. */
  exitArg?: ExitArg;
  exitReason?: string;
  updateTimer?: ReturnType<PluginContext["clock"]["setTimeout"]>;
  sampleTimer?: ReturnType<PluginContext["clock"]["setTimeout"]>;
  /** The largest usage seen so far (the processes are gone when JOB_EXIT runs). */
  usage?: ProcUsage;
  updates: number;
  /** The PREPARE hook running now and since when (ms, the plugin's clock): for job.explain. */
  preparing?: { type: HookType; path: string; since: number };
}

/** Jobspec keys a PREPARE hook's output rewrites (the rest become job ad attributes). */
const REWRITES = new Set(["cmd", "arguments", "args", "iwd", "env", "environment"]);
/** Attributes the manager computes: a hook cannot set them (they would be hidden). */
const computed = new Set(JOB_AD_ATTRIBUTES.map((n) => n.toLowerCase()));

export class StarterHooks {
  readonly jobs = new Map<JobId, StarterJob>();
  private removed = false;

  constructor(
    private readonly p: PluginContext,
    private readonly runner: HookRunner,
    private readonly cfg: () => FetchConfig | undefined,
    /** A held or requeued copy replaced a job (the fetch claim follows it). */
    private readonly replaced: (oldId: JobId, newId: JobId) => void,
  ) {}

  /** §3.1 keyword resolution; undefined: no starter hooks for this job. */
  resolve(id: JobId): KeywordHooks | undefined {
    const cfg = this.cfg();
    if (cfg === undefined) return undefined;
    if (cfg.starterKeyword !== undefined) return cfg.hooksFor(cfg.starterKeyword);
    const ad = this.p.jobAd(id);
    const kw = ad.has("HookKeyword") ? ad.evaluate("HookKeyword") : undefined;
    if (typeof kw === "string" && kw !== "") {
      const hooks = cfg.hooksFor(kw);
      if (hooks !== undefined) return hooks;
    }
    return cfg.starterDefaultKeyword === undefined ? undefined : cfg.hooksFor(cfg.starterDefaultKeyword);
  }

  private label(sj: StarterJob, type: HookType): string {
    return `job ${formatJobId(sj.id)} keyword ${sj.hooks.keyword} ${type}`;
  }

  /** Starts tracking a job with starter hooks; false when its keyword has none. */
  private track(job: JobArgs): StarterJob | undefined {
    const hooks = this.resolve(job.id);
    const p = hooks?.paths;
    if (!hooks || !(p!.PREPARE_JOB_BEFORE_TRANSFER || p!.PREPARE_JOB || p!.UPDATE_JOB_INFO || p!.JOB_EXIT)) return undefined;
    const sj: StarterJob = { id: job.id, userid: job.userid, hooks, abort: new AbortController(), updates: 0 };
    this.jobs.set(job.id, sj);
    this.p.subscribe(job.id);
    return sj;
  }

  /** `job.state.run`: the PREPARE hooks as a prolog. */
  onRun(job: JobArgs): void {
    const sj = this.track(job);
    if (!sj || !(sj.hooks.paths.PREPARE_JOB_BEFORE_TRANSFER || sj.hooks.paths.PREPARE_JOB)) return;
    this.p.prologStart(job.id, PREPARE);
    void this.prepare(sj).catch((e: unknown) => {
      this.p.log.error(`job ${formatJobId(sj.id)}: PREPARE_JOB: ${(e as Error).message}`);
      this.finishPrologSafely(sj, 1 << 8);
    });
  }

  /**
   * `job.new` at a restart (or a runtime load): a started job gets its UPDATE_JOB_INFO timer
   * back; a job whose PREPARE hooks or JOB_EXIT were running when the daemon stopped has
   * them run again (their prolog/epilog is still open in its eventlog, and would hold the
   * job for ever).
   */
  onRestart(job: JobArgs): void {
    if (job.state !== "RUN" && job.state !== "CLEANUP") return;
    const sj = this.track(job);
    if (sj === undefined) return;
    const posted = (name: string) => this.p.eventPosted(job.id, name);
    if (job.state === "RUN" && posted("start")) this.onStart(sj, this.p.clock.now() / 1000);
    else if (job.state === "RUN" && posted("prolog-start") && !posted("prolog-finish") && (sj.hooks.paths.PREPARE_JOB || sj.hooks.paths.PREPARE_JOB_BEFORE_TRANSFER)) {
      this.p.log.info(`job ${formatJobId(job.id)}: PREPARE hooks were running at the restart: running them again`);
      void this.prepare(sj).catch(() => this.finishPrologSafely(sj, 1 << 8));
    } else if (job.state === "CLEANUP" && posted("epilog-start") && !posted("epilog-finish") && sj.hooks.paths.JOB_EXIT) {
      this.p.log.info(`job ${formatJobId(job.id)}: JOB_EXIT was running at the restart: running it again`);
      void withRead(this.p.jobResult(job.id), (r) => {
        sj.exitArg = r === "CANCELED" ? "remove" : r === "TIMEOUT" ? "hold" : r === "COMPLETED" || r === "FAILED" ? "exit" : "evict";
        this.jobExit(sj, true);
      });
    }
  }

  private finishPrologSafely(sj: StarterJob, status: number): void {
    try {
      this.p.prologFinish(sj.id, PREPARE, status);
    } catch (e) {
      this.p.log.warn(`job ${formatJobId(sj.id)}: prolog-finish: ${(e as Error).message}`);
    }
  }

  /** Runs BEFORE_TRANSFER then PREPARE_JOB; merges their output, or holds/requeues. */
  private async prepare(sj: StarterJob): Promise<void> {
    const ad = this.p.jobAd(sj.id).clone();
    const merged = new ClassAd();
    for (const type of ["PREPARE_JOB_BEFORE_TRANSFER", "PREPARE_JOB"] as const) {
      const path = sj.hooks.paths[type];
      if (path === undefined) continue;
      sj.preparing = { type, path, since: this.p.clock.now() };
      const r = await this.runner.run({
        path,
        args: type === "PREPARE_JOB" ? sj.hooks.prepareJobArgs : [],
        name: this.label(sj, type),
        hookType: type,
        stdin: printOldAd(ad),
        timeLimitMs: PREPARE_TIME_LIMIT_MS,
        signal: sj.abort.signal,
        runAs: { job: sj.id },
      });
      sj.preparing = undefined;
      if (sj.abort.signal.aborted) return this.finishPrologSafely(sj, this.removed ? 0 : 1 << 8);
      if (r.kind === "refused") continue; // an unsafe path counts as not configured (§1)
      const update = this.prepareOutput(sj, type, r);
      const status = hookStatus(r, update);
      const message = update.has("HookStatusMessage") ? update.evaluate("HookStatusMessage") : undefined;
      const text = `${type} (${basename(path)}) ${status === 0 ? "succeeded" : "failed"} (${r.kind === "exited" && !r.timedOut && status !== r.exitCode ? `reported status ${status}` : describeHookResult(r)}): ${typeof message === "string" ? message : "<no message>"}`;
      if (status !== 0) return this.failed(sj, status, text);
      if (typeof message === "string") this.p.log.warn(`job ${formatJobId(sj.id)}: ${text}`);
      for (const [name, expr] of update.attributes()) {
        ad.set(name, expr);
        merged.set(name, expr);
      }
    }
    this.rewrite(sj, merged);
    this.finishPrologSafely(sj, 0);
  }

  /** The hook's stdout as updates: reading stops at the first bad line (§3.2). */
  private prepareOutput(sj: StarterJob, type: HookType, r: HookResult): ClassAd {
    if (r.kind !== "exited" && r.kind !== "signaled") return new ClassAd();
    const { ad, failed } = readHookAd(r.stdout);
    if (failed.length === 0) return ad;
    const f = failed[0]!;
    this.p.log.warn(`${this.label(sj, type)}: output line ${f.line} and after ignored: ${f.message}`);
    return readHookAd(r.stdout.split("\n").slice(0, f.line - 1).join("\n")).ad;
  }

  /** Applies a PREPARE hook's attributes to the job before it starts. */
  private rewrite(sj: StarterJob, merged: ClassAd): void {
    if (merged.names().length === 0) return;
    const updates: Record<string, unknown> = {};
    const names = new Set(merged.names().map((n) => n.toLowerCase()));
    if (names.has("cmd") || names.has("arguments") || names.has("args")) {
      const ad = this.p.jobAd(sj.id).clone();
      for (const [n, e] of merged.attributes()) ad.set(n, e);
      if (names.has("args") && !names.has("arguments")) ad.delete("Arguments");
      const cmd = ad.evaluate("Cmd");
      const args = ad.has("Arguments") ? ad.evaluate("Arguments") : ad.has("Args") ? ad.evaluate("Args") : "";
      if (typeof cmd === "string" && cmd !== "") {
        const words = typeof args !== "string" ? [] : ad.has("Arguments") ? splitCondorArgs(args) : args.split(/\s+/).filter((w) => w !== "");
        updates["tasks"] = [{ ...(this.lookupTask(sj.id) ?? {}), command: [cmd, ...words] }];
      }
    }
    const iwd = merged.has("Iwd") ? merged.evaluate("Iwd") : undefined;
    if (typeof iwd === "string") updates["attributes.system.cwd"] = iwd;
    if (names.has("env") || names.has("environment")) {
      for (const [k, v] of Object.entries(jobEnvironment(merged))) updates[`attributes.system.environment.${k}`] = v;
    }
    for (const [name, expr] of merged.attributes()) {
      if (REWRITES.has(name.toLowerCase()) || computed.has(name.toLowerCase())) continue;
      updates[`attributes.user.classad.${name}`] = unparse(expr, true);
    }
    if (Object.keys(updates).length === 0) return;
    try {
      this.p.jobspecUpdate(sj.id, updates);
    } catch (e) {
      this.p.log.warn(`job ${formatJobId(sj.id)}: PREPARE_JOB output not applied: ${(e as Error).message}`);
    }
  }

  private lookupTask(id: JobId): Record<string, unknown> | undefined {
    const j = this.p.lookup(id);
    if (j === undefined || j instanceof Promise) return undefined;
    return JSON.parse(JSON.stringify(j.jobspec.tasks[0])) as Record<string, unknown>;
  }

  /**
   * Status 1–299 (or a failure): held copy; ≥ 300: a pending copy after a growing
   * cool-down, held once `max_requeues` is reached (requeue.ts). The job itself ends.
   */
  private async failed(sj: StarterJob, status: number, hookText: string): Promise<void> {
    const f58 = formatJobId(sj.id);
    this.p.log.warn(`job ${f58}: ${hookText}`);
    let copy: JobId | undefined;
    // Without a plan (the job vanished) the job still ends, held or requeued as its status says.
    let plan: Omit<CopyPlan, "jobspec"> = { hold: status < 300, text: hookText, delay: 0 };
    try {
      const full = planCopy(this.p, sj.id, status, hookText, this.cfg()?.requeue ?? DEFAULT_REQUEUE);
      plan = full;
      copy = await this.p.submit(full.jobspec, { userid: sj.userid, urgency: plan.hold ? 0 : 16, environmentFrom: sj.id });
      if (plan.hold) {
        this.p.postEvent(copy, "urgency", { urgency: 0, userid: this.p.owner, hold_reason: plan.text, hold_reason_code: 19, hold_reason_subcode: status });
      }
    } catch (e) {
      this.p.log.error(`job ${f58}: could not submit its ${plan.hold ? "held" : "requeued"} copy: ${(e as Error).message}`);
    }
    const hold = plan.hold;
    const wait = plan.delay > 0 ? `, runs in ${plan.delay} s` : "";
    const where = copy === undefined ? "" : ` (${hold ? "held" : "pending"} again as ${formatJobId(copy)}${wait})`;
    try {
      this.p.raiseException(sj.id, hold ? "hold" : "requeue", 0, `${plan.text}${where}`);
    } catch (e) {
      this.p.log.warn(`job ${f58}: ${(e as Error).message}`);
    }
    this.finishPrologSafely(sj, hold ? waitStatus.exited(Math.max(1, Math.min(status, 255))) : waitStatus.exited(255));
    if (copy !== undefined) this.replaced(sj.id, copy);
  }

  /** job.event.* for a tracked job. */
  onEvent(job: EventArgs): void {
    const sj = this.jobs.get(job.id);
    if (sj === undefined) return;
    const e = job.entry;
    switch (e.name) {
      case "start":
        this.onStart(sj, e.timestamp);
        break;
      case "exception":
        if (e.context?.severity === 0) this.onFatal(sj, String(e.context.type), String(e.context.note ?? ""));
        break;
      case "finish":
        this.jobExit(sj);
        break;
    }
  }

  private onFatal(sj: StarterJob, type: string, note: string): void {
    // The last look at the processes before the executor kills them.
    if (sj.startedAt !== undefined) this.sample(sj);
    sj.exitArg ??= type === "cancel" ? "remove" : type === "hold" || type === "timeout" ? "hold" : "evict";
    sj.exitReason ??= note === "" ? type : `${type}: ${note}`;
    sj.abort.abort();
  }

  private onStart(sj: StarterJob, ts: number): void {
    sj.startedAt = ts;
    if (sj.hooks.paths.JOB_EXIT !== undefined || sj.hooks.paths.UPDATE_JOB_INFO !== undefined) {
      const sample = () => {
        sj.sampleTimer = this.p.clock.setTimeout(() => {
          this.sample(sj);
          sample();
        }, SAMPLE_MS);
      };
      // At start the tree is the tasks themselves: no /proc scan (a scan costs ~1 ms per 4 processes).
      sj.usage = procUsage(this.pidsOf(sj));
      sample();
    }
    if (sj.hooks.paths.UPDATE_JOB_INFO === undefined) return;
    const cfg = this.cfg();
    const next = (sec: number) => {
      sj.updateTimer = this.p.clock.setTimeout(() => {
        this.updateJobInfo(sj);
        next(cfg?.updateInterval ?? 300);
      }, sec * 1000);
    };
    next(cfg?.initialUpdateInterval ?? 8);
  }

  /** The job's task pids, as its executor saved them (its exec eventlog's `tasks`). */
  private pidsOf(sj: StarterJob): number[] {
    const tasks = this.p.execSaved(sj.id).tasks;
    if (!Array.isArray(tasks)) return [];
    return tasks.flatMap((t: { pid?: unknown }) => (typeof t?.pid === "number" ? [t.pid] : []));
  }

  /** Reads the usage of the job's whole process tree now, keeping the largest seen. */
  private sample(sj: StarterJob): ProcUsage {
    const now = procUsage(processTree(this.pidsOf(sj)));
    const before = sj.usage;
    sj.usage = maxUsage(before, now);
    // Once it is being stopped, the tree shrinks under the kill: keep the last whole one.
    if (sj.exitArg !== undefined && before !== undefined) sj.usage.pids = before.pids;
    return now;
  }

  /** The job ad with the update attributes: live while it runs; at exit, the last sample's. */
  private liveAd(sj: StarterJob, state: string): ClassAd {
    const ad = this.p.jobAd(sj.id).clone();
    // At exit the processes are gone: the last sample stands (no scan).
    const now = state === "Exited" && sj.usage !== undefined ? sj.usage : this.sample(sj);
    // NumPids is what runs now; CPU and sizes the largest seen (exited processes included).
    const u = { ...sj.usage!, pids: state === "Exited" ? sj.usage!.pids : now.pids };
    addUsage(ad, u, sj.startedAt, state, this.pidsOf(sj)[0]);
    return ad;
  }

  private updateJobInfo(sj: StarterJob): void {
    sj.updates++;
    const name = this.label(sj, "UPDATE_JOB_INFO");
    void this.runner
      .run({ path: sj.hooks.paths.UPDATE_JOB_INFO!, name, hookType: "UPDATE_JOB_INFO", stdin: printOldAd(this.liveAd(sj, "Running")), timeLimitMs: UPDATE_TIME_LIMIT_MS, stdoutCap: 0, stderrCap: 4096, runAs: { job: sj.id } })
      .then((r) => {
        if (!(r.kind === "exited" && r.exitCode === 0)) this.p.log.info(`${name}: ${describeHookResult(r)}`);
      });
  }

  /** JOB_EXIT as an epilog, in CLEANUP after `finish`. */
  private jobExit(sj: StarterJob, restarted = false): void {
    if (sj.updateTimer) this.p.clock.clearTimeout(sj.updateTimer);
    if (sj.sampleTimer) this.p.clock.clearTimeout(sj.sampleTimer);
    sj.updateTimer = sj.sampleTimer = undefined;
    const path = sj.hooks.paths.JOB_EXIT;
    if (path === undefined) return;
    const arg: ExitArg = (sj.exitArg ??= "exit");
    const ad = this.liveAd(sj, "Exited");
    ad.set("ExitReason", sj.exitReason ?? "exited normally");
    if (sj.startedAt !== undefined) ad.set("JobDuration", Math.max(0, this.p.clock.now() / 1000 - sj.startedAt));
    if (!restarted) this.p.epilogStart(sj.id, JOB_EXIT);
    const name = this.label(sj, "JOB_EXIT");
    void this.runner
      .run({ path, args: [arg], name, hookType: "JOB_EXIT", stdin: printOldAd(ad), timeLimitMs: sj.hooks.jobExitTimeout * 1000, stdoutCap: 0, stderrCap: 4096, runAs: { job: sj.id } })
      .then((r) => {
        if (!(r.kind === "exited" && r.exitCode === 0)) this.p.log.info(`${name} ${arg}: ${describeHookResult(r)}`);
        try {
          this.p.epilogFinish(sj.id, JOB_EXIT, 0);
        } catch (e) {
          this.p.log.warn(`job ${formatJobId(sj.id)}: epilog-finish: ${(e as Error).message}`);
        }
      });
  }

  /** The job is inactive: forget it. */
  gone(id: JobId): void {
    const sj = this.jobs.get(id);
    if (sj === undefined) return;
    if (sj.updateTimer) this.p.clock.clearTimeout(sj.updateTimer);
    if (sj.sampleTimer) this.p.clock.clearTimeout(sj.sampleTimer);
    this.jobs.delete(id);
  }

  /**
   * The plugin is being removed: timers stop and running hooks are killed. A PREPARE that
   * was running finishes its prolog with status 0, so the job starts as it is (removing the
   * plugin removes its hooks); a JOB_EXIT that was running finishes its epilog.
   */
  stop(): void {
    this.removed = true;
    for (const sj of this.jobs.values()) {
      if (sj.updateTimer) this.p.clock.clearTimeout(sj.updateTimer);
      if (sj.sampleTimer) this.p.clock.clearTimeout(sj.sampleTimer);
      sj.abort.abort();
    }
  }

  query(): Record<string, unknown>[] {
    return [...this.jobs.values()].map((sj) => ({ id: formatJobId(sj.id), keyword: sj.hooks.keyword, updates: sj.updates, exit: sj.exitArg ?? null }));
  }
}

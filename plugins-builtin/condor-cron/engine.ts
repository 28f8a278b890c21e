/**
 * The cron engine: HTCondor's cron job managers (spec htcondor.md §7.3) on the plugin's
 * clock. One engine runs the three managers (startd, schedd, benchmarks); each keeps its own
 * load limit. A job is idle, ready (due, waiting for load or a benchmark) or running.
 *
 * - Periodic: ready at start, then every PERIOD from its start times; an instance still
 *   running when the next period comes is skipped, or with KILL terminated (SIGTERM, SIGKILL
 *   1 s later) and started again once reaped.
 * - WaitForExit: ready at start, again PERIOD after each exit (at once for 0).
 * - OneShot: ready at start; again on reconfig only with RECONFIG_RERUN.
 * - OnDemand: benchmarks, made ready when the host is idle and RunBenchmarks holds.
 */
import {
  ClassAd,
  formatJobId,
  describeHookResult,
  HookRunner,
  isTrue,
  parseExpr,
  type ClassAdExpr,
  type HookResult,
  type JobId,
  type PluginContext,
} from "jobtap/plugin";
import { KINDS, MANAGER_NAME, SUBSYS, type CronConfig, type CronKind } from "./config.js";
import { Metrics } from "./monitor.js";
import { CronOutputReader, type CronRecord } from "./output.js";
import type { CronJobConfig } from "./table.js";
import { cronAdSelects, cronTarget } from "./target.js";

type Timer = ReturnType<PluginContext["clock"]["setTimeout"]>;

/** One configured job and what it is doing. */
class CronJob {
  state: "idle" | "ready" | "running" = "idle";
  timer: Timer | undefined;
  /** Clock ms of the next scheduled run (undefined: none scheduled). */
  nextRun: number | undefined;
  abort: AbortController | undefined;
  pid: number | undefined;
  lastStart: number | undefined;
  lastExit: string | undefined;
  lastExitCode: number | null = null;
  lastOutputBytes = 0;
  /** The last finished run's wall time (clock ms) and the head of its stdout (LAST_OUTPUT_CAP bytes). */
  lastDuration: number | undefined;
  lastOutput = "";
  runs = 0;
  /** Records published by the running instance (RECONFIG signals only after one). */
  blocks = 0;
  /** Start again as soon as the running instance is reaped (KILL, RECONFIG_RERUN). */
  rerun = false;
  removed = false;
  readonly sources = new Set<string>();
  condition: ClassAdExpr | undefined;
  /** METRICS (startd): a resource monitor, whose records are aggregated (monitor.ts). */
  monitor: Metrics | undefined;
  /** A monitor's stored ads by record name, in first-seen order. */
  readonly monitorAds = new Map<string, ClassAd>();

  constructor(
    readonly kind: CronKind,
    public cfg: CronJobConfig,
  ) {
    this.condition = cfg.condition === undefined ? undefined : parseExpr(cfg.condition, true);
  }

  get label(): string {
    return `${this.kind} cron job ${this.cfg.name}`;
  }
}

/** One row of `condor-cron.list`. */
export interface CronJobStatus {
  manager: CronKind;
  name: string;
  mode: string;
  period: number | null;
  state: string;
  last_run: number | null;
  last_exit: string | null;
  last_exit_code: number | null;
  next_run: number | null;
  last_output_bytes: number;
  /** The last finished run's wall time in seconds. */
  last_duration: number | null;
  /** The head of the last finished run's stdout, at most LAST_OUTPUT_CAP bytes. */
  last_output: string;
  runs: number;
  ads: string[];
}

/** How much of a run's stdout `list` keeps: enough to see what a health check said. */
export const LAST_OUTPUT_CAP = 4096;

/** The first `max` bytes of `text`, cut at a character boundary. */
function headOf(text: string, max: number): string {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= max) return text;
  let end = max;
  // Back off continuation bytes (10xxxxxx) so no character is split.
  while (end > 0 && ((buf[end] as number) & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString("utf8");
}

const DEFAULT_RUN_BENCHMARKS = "(LastBenchmark == 0) || ((MyCurrentTime - LastBenchmark) >= 4 * 3600)";
const EPSILON = 1e-9;

export class CronEngine {
  private readonly runner: HookRunner;
  /** Jobs in creation order, keyed `<kind>:<name lowercased>`. */
  private readonly jobs = new Map<string, CronJob>();
  private passTimer: Timer | undefined;
  private benchTimer: Timer | undefined;
  private lastBenchmark = 0;
  private benchRound = false;
  private stopped = false;
  /** Clock ms at start: a monitor's lifetime for DeviceXAverageUsage. */
  private readonly startedAt: number;
  /** Slots of each running job (for monitors' per-job figures). */
  private readonly runningOn = new Map<JobId, number[]>();

  constructor(
    private readonly p: PluginContext,
    private cfg: CronConfig,
  ) {
    // Started from a helper process: a spawn from the (large) daemon costs its event loop
    // ~2 ms each, which 50 one-second jobs turn into a tenth of its time (bench/cron.ts).
    // The helper count is read at load only.
    this.runner = new HookRunner({ plugin: "condor-cron", clock: p.clock, log: p.log, maxInFlight: Infinity, spawnHelpers: cfg.spawnHelpers });
    this.startedAt = p.clock.now();
  }

  private get now(): number {
    return this.p.clock.now();
  }

  /** Creates every job and runs what is due at initialization. */
  start(): void {
    this.logSkipped();
    for (const kind of KINDS) for (const c of this.cfg.tables[kind].jobs) this.create(kind, c);
    if (this.benchJobs().length > 0) this.publishLastBenchmark();
    this.checkBenchmarks();
    this.schedulePass();
    this.armBenchmarkCheck(this.cfg.benchmarkCheck * 1000);
  }

  /** Plugin removal: no more runs; running instances are killed (resolves once they ended). */
  stop(): Promise<void> {
    this.stopped = true;
    for (const job of this.jobs.values()) this.clearTimer(job);
    if (this.passTimer) this.p.clock.clearTimeout(this.passTimer);
    if (this.benchTimer) this.p.clock.clearTimeout(this.benchTimer);
    return this.runner.close();
  }

  skipped(): { manager: CronKind; job: string; reason: string }[] {
    return KINDS.flatMap((kind) => this.cfg.tables[kind].skipped.map((s) => ({ manager: kind, ...s })));
  }

  private logSkipped(): void {
    for (const s of this.skipped()) this.p.log.error(`${s.manager} cron job ${s.job} skipped: ${s.reason}`);
  }

  private create(kind: CronKind, c: CronJobConfig): CronJob {
    const job = new CronJob(kind, c);
    for (const n of c.notes ?? []) this.p.log.warn(`${job.label}: ${n}`);
    if (c.metrics !== undefined) {
      if (kind === "startd") job.monitor = new Metrics(c.metrics, (m) => this.p.log.warn(m));
      else this.p.log.warn(`${job.label}: METRICS applies to startd cron jobs only; ignored`);
    }
    this.jobs.set(`${kind}:${c.name.toLowerCase()}`, job);
    // The base ad is registered with the job, so it merges before the job's tagged ads.
    if (kind !== "schedd" && !job.monitor) this.publishTo(job, c.name, new ClassAd());
    if (c.mode !== "OnDemand") job.state = "ready";
    return job;
  }

  private remove(job: CronJob): void {
    job.removed = true;
    this.clearTimer(job);
    job.nextRun = undefined;
    job.abort?.abort();
    for (const s of job.sources) this.p.withdrawAd(s);
    job.sources.clear();
    job.monitorAds.clear();
    this.jobs.delete(`${job.kind}:${job.cfg.name.toLowerCase()}`);
  }

  /** HTCondor's reconfig: new jobs start, unlisted ones stop, a changed mode restarts. */
  reconfigure(cfg: CronConfig): void {
    if (this.stopped) return;
    const old = this.cfg;
    this.cfg = cfg;
    this.logSkipped();
    for (const kind of KINDS) {
      const wanted = new Map(cfg.tables[kind].jobs.map((c) => [c.name.toLowerCase(), c]));
      if (kind === "schedd") {
        // The schedd reads its job list at startup only; existing jobs take new settings.
        for (const name of wanted.keys()) if (!this.jobs.has(`schedd:${name}`)) wanted.delete(name);
        const had = new Set(old.tables.schedd.jobs.map((c) => c.name.toLowerCase()));
        for (const c of cfg.tables.schedd.jobs) if (!had.has(c.name.toLowerCase())) this.p.log.warn(`schedd cron job ${c.name}: the schedd job list is read at start only; restart to add it`);
      }
      for (const job of [...this.jobs.values()].filter((j) => j.kind === kind)) {
        const c = wanted.get(job.cfg.name.toLowerCase());
        if (c === undefined) {
          if (kind === "schedd") continue;
          this.p.log.info(`${job.label}: no longer listed, stopped and its ads removed`);
          this.remove(job);
        } else if (c.mode !== job.cfg.mode) {
          this.p.log.info(`${job.label}: mode ${job.cfg.mode} → ${c.mode}, replaced`);
          this.remove(job);
          this.create(kind, c);
        } else this.update(job, c);
        wanted.delete(c?.name.toLowerCase() ?? "");
      }
      for (const c of wanted.values()) this.create(kind, c);
    }
    if (this.benchJobs().length > 0) this.publishLastBenchmark();
    this.schedulePass();
  }

  /** Same name and mode: new settings; RECONFIG and RECONFIG_RERUN apply. */
  private update(job: CronJob, c: CronJobConfig): void {
    const periodChanged = c.period !== job.cfg.period;
    job.cfg = c;
    job.condition = c.condition === undefined ? undefined : parseExpr(c.condition, true);
    if (c.mode === "Periodic" && periodChanged && job.state === "idle" && job.timer !== undefined) {
      this.armAt(job, (job.lastStart ?? this.now) + c.period! * 1000);
    }
    if (c.reconfig && job.state === "running" && job.pid !== undefined && job.blocks > 0) {
      try {
        process.kill(job.pid, "SIGHUP");
      } catch {
        // already gone
      }
    }
    if (c.reconfigRerun && job.runs > 0) {
      if (job.state === "running") job.rerun = true;
      else if (job.state === "idle") {
        this.clearTimer(job);
        job.state = "ready";
      }
    }
  }

  // --- scheduling ---

  private clearTimer(job: CronJob): void {
    if (job.timer !== undefined) this.p.clock.clearTimeout(job.timer);
    job.timer = undefined;
  }

  /** The job's timer fires at clock time `at` (ms). */
  private armAt(job: CronJob, at: number): void {
    this.clearTimer(job);
    job.nextRun = at;
    job.timer = this.p.clock.setTimeout(() => this.due(job), Math.max(0, at - this.now));
  }

  private due(job: CronJob): void {
    job.timer = undefined;
    if (this.stopped || job.removed) return;
    const period = (job.cfg.period ?? 0) * 1000;
    if (job.state === "running") {
      if (job.cfg.mode !== "Periodic") return;
      if (job.cfg.kill) {
        this.p.log.warn(`${job.label}: still running at its next period: killed (KILL = true), runs again when reaped`);
        job.rerun = true;
        job.abort?.abort();
      } else this.p.log.debug(`${job.label}: still running at its next period: this period skipped`);
      this.armAt(job, (job.nextRun ?? this.now) + Math.max(period, 1000));
      return;
    }
    if (job.state === "idle") {
      job.state = "ready";
      this.schedulePass();
    }
  }

  private schedulePass(): void {
    if (this.passTimer !== undefined || this.stopped) return;
    this.passTimer = this.p.clock.setTimeout(() => {
      this.passTimer = undefined;
      this.pass();
    }, 0);
  }

  private load(kind: CronKind): number {
    let sum = 0;
    for (const j of this.jobs.values()) if (j.kind === kind && j.state === "running") sum += j.cfg.jobLoad;
    return sum;
  }

  /** Starts the ready jobs that fit their manager's load limit. */
  private pass(): void {
    if (this.stopped) return;
    if (this.benchRound && !this.benchJobs().some((j) => j.state !== "idle")) this.benchmarksDone();
    for (const job of [...this.jobs.values()]) {
      if (job.state !== "ready" || job.removed) continue;
      // Startd cron jobs do not start while a benchmark round is under way.
      if (job.kind === "startd" && this.benchRound) continue;
      const max = this.cfg.tables[job.kind].maxJobLoad;
      if (this.load(job.kind) + job.cfg.jobLoad > max + EPSILON) continue;
      if (!this.conditionHolds(job)) {
        job.state = "idle";
        this.afterRun(job, false);
        continue;
      }
      this.run(job);
    }
  }

  private conditionHolds(job: CronJob): boolean {
    if (job.condition === undefined) return true;
    try {
      const v = this.p.machineAd().evaluateExpr(job.condition);
      if (isTrue(v)) return true;
      this.p.log.debug(`${job.label}: CONDITION is not true against the machine ad: not started`);
    } catch (e) {
      this.p.log.warn(`${job.label}: CONDITION could not be evaluated: ${(e as Error).message}`);
    }
    return false;
  }

  /** Schedules the next run after a run (or a run not started because of CONDITION). */
  private afterRun(job: CronJob, ran: boolean): void {
    if (job.removed || this.stopped) return;
    const period = (job.cfg.period ?? 0) * 1000;
    if (job.rerun) {
      job.rerun = false;
      job.state = "ready";
      return;
    }
    if (job.cfg.mode === "Periodic") {
      if (!ran) this.armAt(job, this.now + period);
      else if (job.timer === undefined) this.armAt(job, Math.max(this.now, (job.lastStart ?? this.now) + period));
    } else if (job.cfg.mode === "WaitForExit") {
      // A CONDITION that is not true waits a period (at least 1 s) rather than spinning.
      const wait = ran ? period : Math.max(period, 1000);
      if (wait === 0) job.state = "ready";
      else this.armAt(job, this.now + wait);
    } else job.nextRun = undefined;
  }

  // --- running ---

  private env(job: CronJob): Record<string, string> {
    const mgr = MANAGER_NAME[job.kind];
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
    env[`${mgr}_INTERFACE_VERSION`] = "1";
    env[`${SUBSYS[job.kind]}_CRON_NAME`] = mgr;
    const configVal = job.cfg.configValProg ?? this.cfg.configVal[job.kind];
    if (configVal !== undefined) env[`${mgr}_CONFIG_VAL`] = configVal;
    return { ...env, ...job.cfg.env };
  }

  private run(job: CronJob): void {
    const c = job.cfg;
    job.state = "running";
    job.lastStart = this.now;
    job.runs++;
    job.blocks = 0;
    job.lastOutputBytes = 0;
    if (c.mode === "Periodic") this.armAt(job, this.now + c.period! * 1000);
    else job.nextRun = undefined;
    const reader = new CronOutputReader({ prefix: c.prefix });
    const cap = this.cfg.outputCap;
    let capped = false;
    let orphans = 0;
    const take = (records: CronRecord[]) => {
      for (const r of records) this.publishRecord(job, r);
      for (; orphans < reader.orphanFailed.length; orphans++) {
        const f = reader.orphanFailed[orphans]!;
        this.p.log.warn(`${job.label}: output line ${f.line}: ${f.message} (${JSON.stringify(f.text.slice(0, 200))}); the record has no valid attribute and is dropped`);
      }
    };
    const ac = new AbortController();
    job.abort = ac;
    const onStdout = (text: string) => {
      if (capped || job.removed || this.stopped) return;
      const bytes = Buffer.byteLength(text);
      if (job.lastOutputBytes + bytes > cap) {
        capped = true;
        job.lastOutputBytes += bytes;
        this.p.log.warn(`${job.label}: output passed ${cap} bytes; the rest of this run's output is discarded`);
        return;
      }
      job.lastOutputBytes += bytes;
      take(reader.push(text));
    };
    void this.runner
      .run({
        path: c.executable,
        args: [c.name, ...c.args],
        env: this.env(job),
        ...(c.cwd === undefined ? {} : { cwd: c.cwd }),
        name: job.label,
        hookType: `${job.kind}-cron`,
        onStdout,
        onSpawn: (pid) => (job.pid = pid),
        signal: ac.signal,
        stdoutCap: cap,
        stderrCap: 64 * 1024,
        // Logged here: at warn with LOG_NON_ZERO_EXIT after a failure, else at debug (§7.5).
        logStderr: false,
      })
      .then((r) => {
        if (!capped && !job.removed && !this.stopped) take(reader.end());
        this.exited(job, r);
      });
  }

  private exited(job: CronJob, r: HookResult): void {
    job.state = "idle";
    job.pid = undefined;
    job.abort = undefined;
    job.lastExit = describeHookResult(r);
    if (job.lastStart !== undefined) job.lastDuration = this.now - job.lastStart;
    job.lastOutput = headOf("stdout" in r ? r.stdout : "", LAST_OUTPUT_CAP);
    job.lastExitCode = r.kind === "exited" ? r.exitCode : null;
    if (this.stopped || job.removed) return;
    const table = this.cfg.tables[job.kind];
    if (r.kind === "exited" || r.kind === "signaled") {
      const failed = r.kind === "signaled" || r.exitCode !== 0;
      const published = job.blocks > 0 ? `; its ${job.blocks} record(s) were published` : "";
      if (failed) this.p.log.warn(`${job.label}: ${job.lastExit}${published}`);
      const lines = (text: string) => text.split("\n").filter((l) => l !== "");
      if (failed && table.logNonZeroExit) {
        for (const line of lines(r.stdout)) this.p.log.warn(`${job.label}: stdout: ${line}`);
        for (const line of lines(r.stderr)) this.p.log.warn(`${job.label}: stderr: ${line}`);
      } else for (const line of lines(r.stderr)) this.p.log.debug(`${job.label}: stderr: ${line}`);
    } else this.p.log.error(`${job.label}: ${job.lastExit}`);
    this.afterRun(job, r.kind === "exited" || r.kind === "signaled");
    this.schedulePass();
  }

  /** Publishes one record: startd/benchmarks into slot ads, schedd into the machine ad. */
  private publishRecord(job: CronJob, r: CronRecord): void {
    const c = job.cfg;
    for (const f of r.failed) {
      this.p.log.warn(`${job.label}: output line ${f.line}: ${f.message} (${JSON.stringify(f.text.slice(0, 200))}); line skipped`);
    }
    r.ad.set(`${c.prefix}LastUpdate`, BigInt(Math.floor(this.now / 1000)));
    const name = job.kind === "schedd" || r.tag === undefined ? c.name : `${c.name}.${r.tag}`;
    if (job.monitor) {
      job.monitorAds.set(name, job.monitor.sample(job.monitorAds.get(name), r.ad, `${job.label}: record ${name}`));
      job.blocks++;
      this.publishMonitor(job);
    } else if (this.publishTo(job, name, r.ad)) job.blocks++;
  }

  // --- resource monitors (METRICS) ---

  /** Publishes a monitor's share of each slot: the aggregate of its ads merging into it. */
  private publishMonitor(job: CronJob): void {
    const monitor = job.monitor!;
    const uptime = Math.floor(this.now / 1000) - Math.floor(this.startedAt / 1000); // whole seconds, as HTCondor
    for (const slot of this.p.slotAds()) {
      const id = Number(slot.evaluate("SlotID"));
      const source = `${job.kind}:${job.cfg.name}:slot${id}`;
      const ads = [...job.monitorAds.values()].filter((ad) => cronAdSelects(ad, job.cfg.slots, slot));
      if (ads.length === 0) {
        if (job.sources.delete(source)) this.p.withdrawAd(source);
        continue;
      }
      try {
        this.p.publishAd(source, monitor.slotAd(ads, uptime, job.label), { slotIds: [id] });
        job.sources.add(source);
      } catch (e) {
        this.p.log.warn(`${job.label}: ad for slot ${id} not published: ${(e as Error).message}`);
      }
    }
  }

  /** A job entered RUN: per-job monitor figures start on its slots. */
  jobStarted(id: JobId): void {
    if (this.stopped || ![...this.jobs.values()].some((j) => j.monitor)) return; // every job passes here
    const name = formatJobId(id);
    const slots = this.p.slotAds().filter((s) => s.has("JobIds") && String(s.evaluate("JobIds")).split(",").includes(name));
    if (slots.length === 0) return;
    this.runningOn.set(id, slots.map((s) => Number(s.evaluate("SlotID"))));
    this.forMonitorsOn(slots, (m, ad) => m.jobStarted(ad));
  }

  /** A job left RUN: per-job monitor figures on its slots are removed. */
  jobEnded(id: JobId): void {
    const ids = this.runningOn.get(id);
    if (ids === undefined || this.stopped) return;
    this.runningOn.delete(id);
    this.forMonitorsOn(this.p.slotAds().filter((s) => ids.includes(Number(s.evaluate("SlotID")))), (m, ad) => m.jobEnded(ad));
  }

  private forMonitorsOn(slots: ClassAd[], fn: (m: Metrics, ad: ClassAd) => void): void {
    for (const job of this.jobs.values()) {
      if (!job.monitor) continue;
      for (const ad of job.monitorAds.values()) if (slots.some((s) => cronAdSelects(ad, job.cfg.slots, s))) fn(job.monitor, ad);
      this.publishMonitor(job);
    }
  }

  private publishTo(job: CronJob, name: string, ad: ClassAd): boolean {
    const source = `${job.kind}:${name}`;
    try {
      this.p.publishAd(source, ad, job.kind === "schedd" ? { ad: "machine" } : cronTarget(ad, job.cfg.slots));
      job.sources.add(source);
      return true;
    } catch (e) {
      this.p.log.warn(`${job.label}: ad ${name} not published: ${(e as Error).message}`);
      return false;
    }
  }

  // --- benchmarks ---

  private benchJobs(): CronJob[] {
    return [...this.jobs.values()].filter((j) => j.kind === "benchmarks");
  }

  private publishLastBenchmark(): void {
    const ad = new ClassAd();
    ad.set("LastBenchmark", BigInt(this.lastBenchmark));
    this.p.publishAd("benchmarks:LastBenchmark", ad);
  }

  private armBenchmarkCheck(ms: number): void {
    if (this.stopped) return;
    this.benchTimer = this.p.clock.setTimeout(() => {
      this.benchTimer = undefined;
      this.checkBenchmarks();
      this.armBenchmarkCheck(this.cfg.benchmarkCheck * 1000);
    }, ms);
  }

  /** Runs the benchmarks when every slot is Unclaimed and RunBenchmarks holds. */
  private checkBenchmarks(): void {
    const jobs = this.benchJobs();
    if (jobs.length === 0 || this.benchRound) return;
    let slots;
    let expr: ClassAdExpr;
    try {
      slots = this.p.slotAds();
      expr = parseExpr(this.cfg.runBenchmarks ?? DEFAULT_RUN_BENCHMARKS, true);
    } catch (e) {
      this.p.log.warn(`benchmarks: RunBenchmarks: ${(e as Error).message}`);
      return;
    }
    if (slots.length === 0 || !slots.every((s) => s.evaluate("State") === "Unclaimed")) return;
    if (!isTrue(slots[0]!.evaluateExpr(expr))) return;
    this.benchRound = true;
    for (const j of jobs) if (j.state === "idle") j.state = "ready";
    this.schedulePass();
  }

  private benchmarksDone(): void {
    this.benchRound = false;
    this.lastBenchmark = Math.floor(this.now / 1000);
    this.publishLastBenchmark();
  }

  // --- listing ---

  list(): CronJobStatus[] {
    const secs = (ms: number | undefined) => (ms === undefined ? null : ms / 1000);
    return [...this.jobs.values()].map((j) => ({
      manager: j.kind,
      name: j.cfg.name,
      mode: j.cfg.mode,
      period: j.cfg.period ?? null,
      state: j.state,
      last_run: secs(j.lastStart),
      last_exit: j.lastExit ?? null,
      last_exit_code: j.lastExitCode,
      next_run: j.state === "ready" ? this.now / 1000 : secs(j.nextRun),
      last_output_bytes: j.lastOutputBytes,
      last_duration: secs(j.lastDuration),
      last_output: j.lastOutput,
      runs: j.runs,
      ads: [...j.sources],
    }));
  }
}

/**
 * The job router's engine (spec htcondor.md §4.4–§4.10) on the manager's clock.
 *
 * Each poll: adopt orphans (every 5th poll, the first included), recompute throttles, pick
 * candidates and route them, run UPDATE_JOB_INFO for submitted copies, retry cleanups.
 *
 * How HTCondor's routed-copy states map onto jobtap jobs (docs/condor-router.md):
 * - CLAIMED: the original (in SCHED) gets `Managed = "External"` and `ManagedManager`
 *   through a jobspec-update; while claimed the router gives it priority 0, so the local
 *   scheduler never allocates it, and its JobStatus stays idle.
 * - SUBMITTED: the copy is a new job submitted as the original's owner; the original gets
 *   `RoutedToJobId`. When the copy starts, the original is allocated (`alloc`, no local
 *   resources) on the `condor-router` mirror executor, which posts `start`, and later
 *   `finish` with the copy's status and usage.
 * - The copy removed before it started: the original is yielded (back to pending,
 *   `Managed = "Schedd"`) and the route counts a failure. After it started, the original is
 *   running (a Flux job never returns to pending from RUN): it ends with a `router`
 *   exception, and the route counts a failure.
 * - The original cancelled or held: the copy is removed; neither success nor failure.
 * Routing records live in the plugin's persistent state, so a restart finds every claim.
 */
import {
  ClassAd,
  Evaluator,
  formatJobId,
  isTrue,
  JOB_AD_ATTRIBUTES,
  parseExpr,
  parseJobId,
  printOldAd,
  ROUTER_HOOK_SEPARATOR,
  TransformRun,
  unparse,
  waitStatus,
  writeHookAds,
  type ClassAdExpr,
  type EventEntry,
  type ExecReport,
  type ExecUsage,
  type JobArgs,
  type JobId,
  type PluginContext,
  ErrorCode,
  JobtapError,
} from "jobtap/plugin";
import type { RouterPluginConfig } from "./config.js";
import type { Route, RouterConfig } from "./routes.js";
import { batchValues, buildCopyAd, copyJobspec, destinationOf, plainCopy } from "./copy.js";
import { RouterHooks } from "./hooks.js";
import { RouteState } from "./throttle.js";

/** The executor name the originals of routed jobs run on while they mirror their copy. */
export const MIRROR_EXECUTOR = "condor-router";

/** The R of an original that mirrors its copy: no local resources. */
const MIRROR_R = { version: 1, execution: { R_lite: [], nodelist: [], starttime: 0, expiration: 0, executor: MIRROR_EXECUTOR } };

/** One managed original and its copy. */
interface Managed {
  orig: JobId;
  key: string;
  route: string;
  state: "claimed" | "submitted" | "cleanup";
  copy?: JobId;
  copyStarted: boolean;
  copyFinish?: { status: number; usage?: ExecUsage };
  /** The copy is inactive. */
  copyDone: boolean;
  /** The copy ended with a fatal exception (removed), not with its own finish. */
  copyRemoved: boolean;
  /** Original removed or held by its user: neither success nor failure. */
  interrupted: boolean;
  /** The original's mirror executor handle, once it runs. */
  report?: ExecReport;
  /** Clock ms when the record was made (mirror lag). */
  since: number;
  /** routeJob is between the claim and the copy's submission. */
  routing: boolean;
  /** Cleanup's outcome, once done. */
  outcome?: "success" | "failure" | "interrupted";
  /** The outcome cleanup is working on (a failed JOB_CLEANUP retries only cleanup). */
  pending?: "success" | "failure" | "interrupted";
  /** Why the original must end with an exception (copy removed after it started, finalize failure). */
  endNote?: string;
}

/** The persistent routing record of one original (`job.<f58>` in the plugin's state). */
interface RoutingRecord {
  route: string;
  copy?: string;
}

const STATE_PREFIX = "job.";
const CLASSAD = "attributes.user.classad.";

/** A copy's finish event usage, if it has one. */
function usageOf(entry: EventEntry): ExecUsage | undefined {
  const u = entry.context?.usage;
  return typeof u === "object" && u !== null ? (u as ExecUsage) : undefined;
}

export class Router {
  private readonly byOrig = new Map<JobId, Managed>();
  private readonly byCopy = new Map<JobId, Managed>();
  private readonly routes = new Map<string, RouteState>();
  private order: RouteState[] = [];
  private readonly evaluator: Evaluator;
  private hooks: RouterHooks;
  private timer: ReturnType<PluginContext["clock"]["setTimeout"]> | undefined;
  private polls = 0;
  private roundRobin = 0;
  private stopped = false;
  /** Mirror executor handles that arrived before their record was known (restart). */
  private readonly pendingReports = new Map<JobId, ExecReport>();
  private sourceConstraint: ClassAdExpr | undefined;
  private readonly requirements = new Map<string, ClassAdExpr>();
  private pollRunning: Promise<void> | undefined;
  /** Job ads (by identity) that no route could take under table `tableEpoch`. */
  private noMatch = new WeakMap<ClassAd, number>();
  private tableEpoch = 0;
  /** False when a constraint reads the clock or randomness: then nothing is remembered. */
  private cacheable = true;

  constructor(
    private readonly p: PluginContext,
    private cfg: RouterPluginConfig,
    private readonly hookTimeLimitMs: number,
  ) {
    this.evaluator = new Evaluator({ clock: () => Math.floor(p.clock.now() / 1000) });
    this.hooks = this.makeHooks();
    this.applyRoutes();
  }

  private get name(): string {
    return this.cfg.router.settings.name;
  }

  private nowS(): number {
    return this.p.clock.now() / 1000;
  }

  private makeHooks(): RouterHooks {
    return new RouterHooks(this.p, this.cfg.hookPath, this.cfg.router.settings.hookKeyword, this.hookTimeLimitMs);
  }

  /** Route states in NAMES order; a route keeping its name keeps its counters and throttle. */
  private applyRoutes(): void {
    const next: RouteState[] = [];
    this.requirements.clear();
    for (const route of this.cfg.router.routes) {
      const old = this.routes.get(route.name);
      const st = old ?? new RouteState(route, this.nowS());
      st.route = route;
      next.push(st);
      if (route.transform.requirements !== undefined) this.requirements.set(route.name, parseExpr(route.transform.requirements, true));
    }
    for (const name of [...this.routes.keys()]) if (!next.some((s) => s.route.name === name)) this.routes.delete(name);
    for (const st of next) this.routes.set(st.route.name, st);
    this.order = next;
    const sc = this.cfg.router.settings.sourceJobConstraint;
    this.sourceConstraint = sc === undefined ? undefined : parseExpr(sc, true);
    this.tableEpoch++;
    const texts = [sc ?? "", ...this.cfg.router.routes.map((r) => r.transform.requirements ?? "")];
    this.cacheable = !texts.some((t) => /time\s*\(|CurrentTime|random|\$/i.test(t));
    for (const w of this.cfg.router.warnings) this.p.log.warn(w);
  }

  /** A new configuration (conf.update after the first). */
  reconfigure(cfg: RouterPluginConfig): void {
    this.cfg = cfg;
    void this.hooks.close();
    this.hooks = this.makeHooks();
    this.applyRoutes();
    // Counters of managed jobs follow their routes; jobs of a dropped route stay managed.
    this.recount();
    this.schedule(0);
  }

  /** Loads the routing records (a restart) and starts polling: the first poll runs at once. */
  async start(): Promise<void> {
    const keys = await this.p.state.keys();
    for (const key of keys) {
      if (!key.startsWith(STATE_PREFIX)) continue;
      const rec = (await this.p.state.get<RoutingRecord>(key)) as RoutingRecord | undefined;
      const orig = parseId(key.slice(STATE_PREFIX.length));
      if (rec === undefined || orig === undefined) continue;
      const m = this.track(orig, rec.route);
      m.state = "submitted";
      const copy = rec.copy === undefined ? undefined : parseId(rec.copy);
      if (copy !== undefined) this.attachCopy(m, copy);
      else m.state = "claimed";
    }
    for (const [id, report] of this.pendingReports) {
      const m = this.byOrig.get(id);
      if (m) this.mirrorAttached(id, report, true);
    }
    this.recount();
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.p.clock.clearTimeout(this.timer);
    void this.hooks.close();
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer !== undefined) this.p.clock.clearTimeout(this.timer);
    this.timer = this.p.clock.setTimeout(() => {
      this.timer = undefined;
      void this.pollOnce().finally(() => this.schedule(this.cfg.router.settings.pollingPeriod * 1000));
    }, ms);
  }

  /** One poll (also what the bench times). Resolves when every copy it submitted is durable. */
  pollOnce(): Promise<void> {
    if (this.pollRunning) return this.pollRunning;
    this.pollRunning = this.poll().finally(() => (this.pollRunning = undefined));
    return this.pollRunning;
  }

  private async poll(): Promise<void> {
    if (this.polls++ % 5 === 0) this.adoptOrphans();
    const now = this.nowS();
    for (const st of this.order) st.updateThrottle(now);
    const work: Promise<void>[] = [];
    for (const [orig, route] of this.candidates()) work.push(this.routeJob(orig, route));
    for (const m of [...this.byOrig.values()]) work.push(this.check(m));
    await Promise.all(work);
  }

  // --- candidate selection (§4.4) ---------------------------------------------------

  private globalCapReached(): boolean {
    const max = this.cfg.router.settings.maxJobs;
    return max >= 0 && this.byOrig.size >= max;
  }

  /** Jobs to route now and the route each takes; counts each against its route at once. */
  private candidates(): Array<[JobId, RouteState]> {
    const out: Array<[JobId, RouteState]> = [];
    if (this.order.length === 0 || !this.order.some((r) => r.accepting()) || this.globalCapReached()) return out;
    for (const id of this.p.jobIds("SCHED")) {
      if (this.byOrig.has(id) || this.byCopy.has(id)) continue;
      let ad: ClassAd;
      try {
        ad = this.p.jobAd(id);
      } catch {
        continue;
      }
      // A job ad is one frozen object until the job's next event: a job that no route
      // could take stays so until then, unless the constraints read the clock.
      if (this.noMatch.get(ad) === this.tableEpoch) continue;
      if (!this.isCandidate(ad)) {
        if (this.cacheable) this.noMatch.set(ad, this.tableEpoch);
        continue;
      }
      const route = this.pickRoute(ad);
      if (route === "full") break;
      if (route === undefined) {
        if (this.cacheable && this.order.every((r) => r.accepting())) this.noMatch.set(ad, this.tableEpoch);
        continue;
      }
      route.current++;
      route.recentRouted++;
      out.push([id, route]);
      if (this.globalCapReached() || this.globalCapAfter(out.length)) break;
    }
    return out;
  }

  private globalCapAfter(n: number): boolean {
    const max = this.cfg.router.settings.maxJobs;
    return max >= 0 && this.byOrig.size + n >= max;
  }

  /** The umbrella constraint's fixed part and the source constraint. */
  private isCandidate(ad: ClassAd): boolean {
    if (ad.evaluate("JobStatus") !== 1n) return false;
    const managed = ad.has("Managed") ? ad.evaluate("Managed") : undefined;
    if (managed === "External" || managed === "ScheddDone") return false;
    if (ad.has("RoutedBy") && ad.evaluate("RoutedBy") === this.name) return false;
    if (this.sourceConstraint !== undefined && !isTrue(this.evaluator.evaluate(this.sourceConstraint, { my: ad }))) return false;
    return true;
  }

  /** First matching accepting route in order, or round robin; "full" when none accepts. */
  private pickRoute(ad: ClassAd): RouteState | "full" | undefined {
    const n = this.order.length;
    let anyAccepting = false;
    const start = this.cfg.router.settings.roundRobinSelection ? this.roundRobin % n : 0;
    for (let i = 0; i < n; i++) {
      const st = this.order[(start + i) % n]!;
      if (!st.accepting()) continue;
      anyAccepting = true;
      const req = this.requirements.get(st.route.name);
      if (req !== undefined && !isTrue(this.evaluator.evaluate(req, { my: ad }))) continue;
      if (this.cfg.router.settings.roundRobinSelection) this.roundRobin = (start + i + 1) % n;
      return st;
    }
    return anyAccepting ? undefined : "full";
  }

  // --- routing one job (§4.6 TakeOver and Submit, §4.7) --------------------------------

  private track(orig: JobId, route: string): Managed {
    const m: Managed = {
      orig, key: formatJobId(orig), route, state: "claimed", copyStarted: false, copyDone: false, copyRemoved: false, routing: false,
      interrupted: false, since: this.p.clock.now(),
    };
    this.byOrig.set(orig, m);
    return m;
  }

  private async routeJob(orig: JobId, st: RouteState): Promise<void> {
    const route = st.route;
    const original = this.p.jobAd(orig);
    if (this.routeBool(route.settings.editJobInPlace, original)) return this.editInPlace(orig, st, original);
    const m = this.track(orig, route.name);
    if (!this.claim(m)) {
      this.forget(m);
      st.current--;
      st.recentFailed++;
      return;
    }
    this.p.state.set(STATE_PREFIX + m.key, { route: route.name } satisfies RoutingRecord);
    m.routing = true;
    try {
      await this.submitCopy(m, st, this.p.jobAd(orig));
    } catch (e) {
      this.p.log.error(`job ${m.key}: route ${route.name}: ${(e as Error).message}`);
      await this.finishCleanup(m, "failure");
    } finally {
      m.routing = false;
    }
  }

  /** A route boolean macro (EditJobInPlace, ...) evaluated against the original; undefined ⇒ false. */
  private routeBool(expr: string | undefined, ad: ClassAd): boolean {
    if (expr === undefined) return false;
    try {
      return isTrue(this.evaluator.evaluate(parseExpr(expr, true), { my: ad }));
    } catch {
      return false;
    }
  }

  /** TakeOver: the original, still idle and not managed by another, becomes External. */
  private claim(m: Managed): boolean {
    const args = this.lookup(m.orig);
    if (args?.state !== "SCHED") return false;
    try {
      this.p.jobspecUpdate(m.orig, { [`${CLASSAD}Managed`]: '"External"', [`${CLASSAD}ManagedManager`]: JSON.stringify(this.name) });
    } catch (e) {
      this.p.log.info(`job ${m.key}: not claimed: ${(e as Error).message}`);
      return false;
    }
    // An alloc that was already queued wins: then the job runs here and is not ours.
    return this.lookup(m.orig)?.state === "SCHED";
  }

  private lookup(id: JobId): JobArgs | undefined {
    return this.p.lookup(id) as JobArgs | undefined;
  }

  private async submitCopy(m: Managed, st: RouteState, original: ClassAd): Promise<void> {
    const route = st.route;
    let working = original;
    const translated = await this.hooks.run(m.key, original, "TRANSLATE_JOB", () => RouterHooks.translateInput(route, original));
    if (translated.kind === "failed") throw new JobtapError(ErrorCode.HOOK, translated.why);
    if (translated.kind === "ok") {
      if (translated.empty) {
        // HTCondor logs it and tries again at the next poll: the job is let go, unharmed.
        this.p.log.warn(`job ${m.key}: TRANSLATE_JOB printed nothing; trying again next poll`);
        return this.finishCleanup(m, "interrupted");
      }
      working = translated.ad;
    }
    const built = buildCopyAd(working, route, this.cfg.router, this.evaluator, m.key);
    if (!built.ok) throw new JobtapError(ErrorCode.CONDOR_TRANSFORM, built.error);
    const system = await this.destinationSystem(built.ad, route);
    const args = this.lookup(m.orig);
    if (args === undefined || m.interrupted) return this.finishCleanup(m, "interrupted");
    const jobspec = copyJobspec(built.ad, args.jobspec, original, system);
    const copy = await this.p.submit(jobspec, { userid: args.userid, environmentFrom: m.orig });
    this.p.state.set(STATE_PREFIX + m.key, { route: route.name, copy: formatJobId(copy) } satisfies RoutingRecord);
    this.attachCopy(m, copy);
    try {
      this.p.jobspecUpdate(m.orig, { [`${CLASSAD}RoutedToJobId`]: JSON.stringify(formatJobId(copy)) });
    } catch {
      // The original moved on meanwhile (cancelled): the next check cleans up.
    }
    this.p.log.info(`job ${m.key}: routed to ${route.name} as job ${formatJobId(copy)}`);
  }

  /** The copy's `attributes.system` choices from its destination. */
  private async destinationSystem(ad: ClassAd, route: Route): Promise<Record<string, unknown>> {
    const dest = destinationOf(ad, route);
    if (dest.kind === "error") throw new JobtapError(ErrorCode.CONDOR_CONFIG, dest.error);
    if (dest.kind === "local") return dest.queue === undefined ? {} : { queue: dest.queue };
    const r = await this.p.call("exec-slurm.route", { grid_resource: dest.gridResource, ad: batchValues(ad) });
    const out = r.out as { routing?: { exec: unknown; duration?: number }; error?: string };
    if (r.error) throw new JobtapError(ErrorCode.PLUGIN_CALL, `exec-slurm.route: ${r.error.message}`);
    if (out.error !== undefined) throw new JobtapError(ErrorCode.PLUGIN_CALL, out.error);
    if (out.routing === undefined) throw new JobtapError(ErrorCode.PLUGIN_NOT_FOUND, `GridResource "${dest.gridResource}": the Slurm executor (.exec-slurm) is not loaded`);
    return { exec: out.routing.exec, ...(out.routing.duration !== undefined ? { duration: out.routing.duration } : {}) };
  }

  private attachCopy(m: Managed, copy: JobId): void {
    m.copy = copy;
    m.state = "submitted";
    this.byCopy.set(copy, m);
    const args = this.lookup(copy);
    if (args === undefined || args.state === "INACTIVE") {
      m.copyDone = true;
      this.readCopyOutcome(m, copy);
      return;
    }
    if (args.state === "RUN" || args.state === "CLEANUP") m.copyStarted = this.p.eventPosted(copy, "start");
    this.p.subscribe(copy);
    try {
      this.p.subscribe(m.orig);
    } catch {
      // The original is gone: the next check removes the copy.
    }
    if (m.copyStarted) this.mirrorStart(m);
  }

  /** For a copy found inactive (restart): its start and finish from its ad. */
  private readCopyOutcome(m: Managed, copy: JobId): void {
    let ad: ClassAd;
    try {
      ad = this.p.jobAd(copy);
    } catch {
      return;
    }
    m.copyStarted = Number(ad.evaluate("NumJobStarts") ?? 0) > 0;
    m.copyRemoved = ad.evaluate("JobStatus") === 3n;
    if (ad.evaluate("JobStatus") === 4n) {
      const sig = ad.evaluate("ExitSignal");
      const code = ad.evaluate("ExitCode");
      m.copyFinish = { status: typeof sig === "bigint" ? waitStatus.signaled(Number(sig)) : waitStatus.exited(Number(code ?? 0)) };
    }
  }

  /** EditJobInPlace: transforms edit the original, which stays idle (a route must guard itself). */
  private async editInPlace(orig: JobId, st: RouteState, original: ClassAd): Promise<void> {
    st.current--;
    const key = formatJobId(orig);
    let working = original;
    const translated = await this.hooks.run(key, original, "TRANSLATE_JOB", () => RouterHooks.translateInput(st.route, original));
    if (translated.kind === "failed") {
      this.p.log.error(`job ${key}: ${translated.why}`);
      st.recentFailed++;
      return;
    }
    if (translated.kind === "ok" && !translated.empty) working = translated.ad;
    const run = buildEditAd(working, st.route, this.cfg.router, this.evaluator);
    if (!run.ok) {
      this.p.log.error(`job ${key}: route ${st.route.name}: ${run.error}`);
      st.recentFailed++;
      return;
    }
    const updates = differences(original, run.ad);
    try {
      if (Object.keys(updates).length > 0) this.p.jobspecUpdate(orig, updates);
      st.recentSucceeded++;
    } catch (e) {
      this.p.log.error(`job ${key}: route ${st.route.name}: edit in place: ${(e as Error).message}`);
      st.recentFailed++;
    }
  }

  // --- mirroring (§4.6 CheckStatus) -------------------------------------------------

  /** `job.event.*` for a subscribed job: a copy's or an original's. */
  onEvent(args: JobArgs): void {
    const entry = args.entry;
    if (entry === undefined) return;
    const asCopy = this.byCopy.get(args.id);
    if (asCopy) return this.onCopyEvent(asCopy, entry);
    const asOrig = this.byOrig.get(args.id);
    if (asOrig) this.onOriginalEvent(asOrig, entry, args);
  }

  private onCopyEvent(m: Managed, entry: EventEntry): void {
    switch (entry.name) {
      case "start":
        m.copyStarted = true;
        this.routes.get(m.route) && this.recount();
        this.mirrorStart(m);
        break;
      case "exception":
        if (entry.context?.severity === 0 && m.copyFinish === undefined) m.copyRemoved = true;
        break;
      case "finish":
        if (m.copyRemoved) break;
        m.copyFinish = { status: Number(entry.context?.status ?? 0), ...(usageOf(entry) ? { usage: usageOf(entry)! } : {}) };
        break;
      case "clean":
        m.copyDone = true;
        void this.check(m);
        break;
    }
  }

  private onOriginalEvent(m: Managed, entry: EventEntry, args: JobArgs): void {
    const fatal = entry.name === "exception" && entry.context?.severity === 0;
    const held = entry.name === "urgency" && entry.context?.urgency === 0;
    if (!fatal && !held) return;
    if (m.outcome !== undefined) return;
    // HTCondor: the original removed, or held by its user ⇒ the copy is removed ("interrupted").
    m.interrupted = true;
    this.removeCopy(m, fatal ? "JobRouter aborted job: original removed" : "JobRouter aborted job: original held");
    if (args.state !== "RUN") void this.check(m);
  }

  private removeCopy(m: Managed, note: string): void {
    if (m.copy === undefined || m.copyDone) return;
    try {
      this.p.raiseException(m.copy, "cancel", 0, note);
    } catch {
      // Already ending.
    }
  }

  /** The copy runs: the original is allocated on the mirror executor, which posts start. */
  private mirrorStart(m: Managed): void {
    const args = this.lookup(m.orig);
    if (args?.state !== "SCHED") return;
    try {
      this.p.jobspecUpdate(m.orig, { "attributes.system.exec.name": MIRROR_EXECUTOR });
      this.p.setFlag(m.orig, "alloc-bypass");
      this.p.postEvent(m.orig, "alloc", { R: { ...MIRROR_R, execution: { ...MIRROR_R.execution, starttime: this.nowS() } }, bypass: true });
    } catch (e) {
      this.p.log.error(`job ${m.key}: cannot mirror the start of job ${formatJobId(m.copy!)}: ${(e as Error).message}`);
    }
  }

  /** The mirror executor was handed the original (start, or reattach after a restart). */
  mirrorAttached(id: JobId, report: ExecReport, started: boolean): void {
    const m = this.byOrig.get(id);
    if (m === undefined) {
      this.pendingReports.set(id, report);
      return;
    }
    this.pendingReports.delete(id);
    m.report = report;
    if (m.copyStarted && !started) report.start(id);
    if (m.copyDone) void this.check(m);
  }

  /** The running original got a fatal exception (cancel): remove the copy; finish follows it. */
  mirrorKilled(id: JobId): void {
    const m = this.byOrig.get(id);
    if (m === undefined) return;
    m.interrupted = true;
    this.removeCopy(m, "JobRouter aborted job: original removed");
    if (m.copyDone || m.copy === undefined) void this.check(m);
  }

  /** What happened to the copy decides the original's fate (§4.6 CheckStatus → Finalize / Cleanup). */
  private async check(m: Managed): Promise<void> {
    if (m.outcome !== undefined || this.hooks.running(m.key)) return;
    if (m.pending !== undefined) return this.finishCleanup(m, m.pending);
    // Claimed, copy not submitted yet: routeJob is at work (or, after a restart, the
    // orphan scan decides).
    if (m.state === "claimed") return;
    const orig = this.lookup(m.orig);
    if (orig === undefined || orig.state === "INACTIVE") {
      m.interrupted = true;
      this.removeCopy(m, "JobRouter aborted job: original gone");
    }
    if (!m.copyDone) {
      if (m.copy !== undefined && !m.copyStarted && !m.interrupted) await this.updateJobInfo(m);
      return;
    }
    if (m.interrupted) return this.finishCleanup(m, "interrupted");
    if (m.copyFinish === undefined || m.copyRemoved) {
      // The copy was removed (cancelled, refused, failed to run): a route failure.
      if (m.copyStarted) m.endNote = `routed copy ${formatJobId(m.copy!)} was removed after it started`;
      return this.finishCleanup(m, "failure");
    }
    await this.finalize(m);
  }

  /** UPDATE_JOB_INFO: the hook's attributes update a copy that is still pending. */
  private async updateJobInfo(m: Managed): Promise<void> {
    const copy = m.copy!;
    let copyAd: ClassAd;
    try {
      copyAd = this.p.jobAd(copy);
    } catch {
      return;
    }
    const out = await this.hooks.run(m.key, this.p.jobAd(m.orig), "UPDATE_JOB_INFO", () => printOldAd(copyAd));
    if (out.kind === "failed") return void this.p.log.warn(`job ${m.key}: ${out.why}`);
    if (out.kind !== "ok" || out.empty) return;
    const updates = differences(copyAd, mergedAd(copyAd, out.ad));
    if (Object.keys(updates).length === 0) return;
    try {
      this.p.jobspecUpdate(copy, updates);
    } catch (e) {
      this.p.log.warn(`job ${m.key}: UPDATE_JOB_INFO: copy ${formatJobId(copy)}: ${(e as Error).message}`);
    }
  }

  /** Finalize: JOB_FINALIZE, then the original ends with the copy's status. */
  private async finalize(m: Managed): Promise<void> {
    const original = this.p.jobAd(m.orig);
    let copyAd: ClassAd | undefined;
    try {
      copyAd = this.p.jobAd(m.copy!);
    } catch {
      copyAd = undefined;
    }
    const out = await this.hooks.run(m.key, original, "JOB_FINALIZE", () => writeHookAds(copyAd === undefined ? [original] : [original, copyAd], ROUTER_HOOK_SEPARATOR));
    if (out.kind === "failed") {
      m.endNote = out.why;
      return this.finishCleanup(m, "failure");
    }
    if (out.kind === "ok" && !out.empty) {
      // A running job's jobspec is fixed: the hook's updates are kept in the eventlog.
      const attrs: Record<string, string> = {};
      for (const [name, expr] of out.ad.attributes()) attrs[name] = unparse(expr, true);
      try {
        this.p.postEvent(m.orig, "router-finalize", { attributes: attrs });
      } catch {
        // The original is gone.
      }
    }
    return this.finishCleanup(m, "success");
  }

  /**
   * Cleanup: JOB_CLEANUP (if a copy exists; non-zero ⇒ retried next poll), remove an
   * unfinished copy, settle the original, count the outcome, forget the job.
   */
  private async finishCleanup(m: Managed, outcome: "success" | "failure" | "interrupted"): Promise<void> {
    m.state = "cleanup";
    m.pending = outcome;
    if (m.copy !== undefined) {
      let copyAd: ClassAd | undefined;
      try {
        copyAd = this.p.jobAd(m.copy);
      } catch {
        copyAd = undefined;
      }
      if (copyAd !== undefined) {
        let original: ClassAd;
        try {
          original = this.p.jobAd(m.orig);
        } catch {
          original = copyAd;
        }
        const out = await this.hooks.run(m.key, original, "JOB_CLEANUP", () => printOldAd(copyAd!));
        if (out.kind === "failed") {
          this.p.log.warn(`job ${m.key}: ${out.why}; cleanup retried next poll`);
          return;
        }
      }
      if (!m.copyDone && outcome !== "success") this.removeCopy(m, "JobRouter aborted job");
    }
    m.outcome = outcome;
    this.settleOriginal(m, outcome);
    const st = this.routes.get(m.route);
    if (st !== undefined) {
      if (outcome === "success") {
        const failed = this.routeBool(st.route.settings.jobFailureTest, this.adOrUndefined(m.orig) ?? new ClassAd());
        if (failed) st.recentFailed++;
        else st.recentSucceeded++;
      } else if (outcome === "failure") st.recentFailed++;
    }
    this.forget(m);
    this.recount();
  }

  private adOrUndefined(id: JobId): ClassAd | undefined {
    try {
      return this.p.jobAd(id);
    } catch {
      return undefined;
    }
  }

  /** The original's end of the story: finished, back to pending, or ended with a reason. */
  private settleOriginal(m: Managed, outcome: "success" | "failure" | "interrupted"): void {
    const args = this.lookup(m.orig);
    if (args === undefined || args.state === "INACTIVE") return;
    if (args.state === "SCHED" || args.state === "PRIORITY") {
      if (outcome === "success" && m.copyFinish !== undefined) return this.mirrorFinishPending(m);
      // Yield: back to the local queue (and to routing), Managed = "Schedd".
      try {
        this.p.jobspecUpdate(m.orig, { [`${CLASSAD}Managed`]: '"Schedd"', [`${CLASSAD}ManagedManager`]: '""' });
      } catch (e) {
        this.p.log.warn(`job ${m.key}: cannot yield: ${(e as Error).message}`);
      }
      return;
    }
    const report = m.report;
    if (report === undefined) return;
    if (m.endNote !== undefined) {
      report.exception(m.orig, "router", m.endNote);
      report.finish(m.orig, m.copyFinish?.status ?? waitStatus.signaled(9));
    } else if (m.copyFinish !== undefined) report.finish(m.orig, m.copyFinish.status, m.copyFinish.usage);
    else report.finish(m.orig, waitStatus.signaled(15));
    report.release(m.orig);
  }

  /** A copy that finished before the original was seen running (restart): allocate, then finish. */
  private mirrorFinishPending(m: Managed): void {
    m.copyStarted = true;
    this.mirrorStart(m);
    if (m.report !== undefined) this.settleOriginal(m, "success");
  }

  private forget(m: Managed): void {
    this.byOrig.delete(m.orig);
    if (m.copy !== undefined) this.byCopy.delete(m.copy);
    this.p.state.delete(STATE_PREFIX + m.key);
    for (const id of [m.orig, m.copy]) {
      if (id === undefined) continue;
      try {
        this.p.unsubscribe(id);
      } catch {
        // Gone.
      }
    }
  }

  /** Recomputes current/running per route from the managed jobs. */
  private recount(): void {
    for (const st of this.order) st.current = st.running = 0;
    for (const m of this.byOrig.values()) {
      const st = this.routes.get(m.route);
      if (st === undefined) continue;
      st.current++;
      if (m.copyStarted && !m.copyDone) st.running++;
    }
  }

  // --- orphans (§4.10) ----------------------------------------------------------------

  /**
   * Copies routed by this router that it does not know are adopted when their original is
   * still claimed, else removed; originals claimed by this router with no known copy are
   * yielded (back to pending).
   */
  private adoptOrphans(): void {
    const claimedWithoutCopy = new Set<JobId>();
    for (const m of this.byOrig.values()) if (m.copy === undefined && m.state === "claimed" && !m.routing) claimedWithoutCopy.add(m.orig);
    for (const id of this.p.jobIds()) {
      if (this.byCopy.has(id)) continue;
      const ad = this.adOrUndefined(id);
      if (ad === undefined) continue;
      if (ad.has("RoutedBy") && ad.evaluate("RoutedBy") === this.name) {
        const from = ad.evaluate("RoutedFromJobId");
        const orig = typeof from === "string" ? parseId(from) : undefined;
        const known = orig === undefined ? undefined : this.byOrig.get(orig);
        if (known?.routing) continue; // its copy is being submitted right now
        const origArgs = orig === undefined ? undefined : this.lookup(orig);
        if (orig !== undefined && origArgs !== undefined && origArgs.state !== "INACTIVE" && (known === undefined || known.copy === undefined)) {
          const routeName = ad.evaluate("RouteName");
          const m = known ?? this.track(orig, typeof routeName === "string" ? routeName : "");
          this.p.state.set(STATE_PREFIX + m.key, { route: m.route, copy: formatJobId(id) } satisfies RoutingRecord);
          this.attachCopy(m, id);
          claimedWithoutCopy.delete(orig);
          this.p.log.info(`job ${formatJobId(id)}: adopted as the routed copy of job ${m.key}`);
        } else if (known?.copy !== id) {
          this.p.log.info(`job ${formatJobId(id)}: routed copy of a job that is gone; removing it`);
          try {
            this.p.raiseException(id, "cancel", 0, "JobRouter aborted job: orphaned routed copy");
          } catch {
            // Already ending.
          }
        }
      } else if (!this.byOrig.has(id) && ad.has("Managed") && ad.evaluate("Managed") === "External" && ad.evaluate("ManagedManager") === this.name) {
        const m = this.track(id, "");
        void this.finishCleanup(m, "interrupted");
      }
    }
    for (const orig of claimedWithoutCopy) {
      const m = this.byOrig.get(orig);
      if (m !== undefined && m.copy === undefined) void this.finishCleanup(m, "interrupted");
    }
    this.recount();
  }

  // --- priority and status --------------------------------------------------------------

  /** Claimed originals get priority 0: the local scheduler leaves them alone. */
  claimed(job: JobArgs): boolean {
    const t = job.jobspec.attributes.user?.classad as Record<string, unknown> | undefined;
    return t?.Managed === '"External"' && t.ManagedManager === JSON.stringify(this.name);
  }

  /** What the admin should know about the loaded table (ignored routes, ...). */
  warnings(): string[] {
    return [...this.cfg.router.warnings];
  }

  /**
   * `condor_router_q -S`: the routed copies in the queue (RouteName defined) counted per
   * (status letter, route, GridResource), sorted by route.
   */
  statusRows(): Array<{ count: number; status: string; route: string; grid_resource: string }> {
    const counts = new Map<string, { count: number; status: string; route: string; grid_resource: string }>();
    for (const id of this.p.jobIds()) {
      const ad = this.adOrUndefined(id);
      if (ad === undefined || !ad.has("RouteName")) continue;
      const route = String(ad.evaluate("RouteName"));
      const js = ad.evaluate("JobStatus");
      const status = "UIRXCHE"[typeof js === "bigint" ? Number(js) : 0] ?? "U";
      const grid = ad.has("GridResource") ? ad.evaluate("GridResource") : "";
      const gridText = typeof grid === "string" ? grid : "";
      const key = `${route}\0${status}\0${gridText}`;
      const row = counts.get(key) ?? { count: 0, status, route, grid_resource: gridText };
      row.count++;
      counts.set(key, row);
    }
    return [...counts.values()].sort((a, b) => a.route.localeCompare(b.route) || a.status.localeCompare(b.status));
  }

  /** Per route: limits, counts and throttle (`jobtap router q`). */
  routeSummary(): Array<Record<string, unknown>> {
    return this.order.map((st) => ({
      name: st.route.name,
      grid_resource: st.route.settings.gridResource ?? "",
      max_jobs: st.route.settings.maxJobs,
      max_idle_jobs: st.route.settings.maxIdleJobs,
      current: st.current,
      running: st.running,
      idle: st.idle,
      recent_routed: st.recentRouted,
      recent_succeeded: st.recentSucceeded,
      recent_failed: st.recentFailed,
      throttle: st.describeThrottle(),
      accepting: st.accepting(),
    }));
  }
}

function parseId(text: string): JobId | undefined {
  try {
    return parseJobId(text);
  } catch {
    return undefined;
  }
}

/** `base` with `update`'s attributes over it. */
function mergedAd(base: ClassAd, update: ClassAd): ClassAd {
  const out = plainCopy(base);
  for (const [n, e] of update.attributes()) out.bind(n, e);
  return out;
}

/** Jobspec updates that make the user attributes of `before` those of `after`. */
function differences(before: ClassAd, after: ClassAd): Record<string, unknown> {
  const computed = new Set(JOB_AD_ATTRIBUTES.map((n) => n.toLowerCase()));
  const out: Record<string, unknown> = {};
  for (const [name, expr] of after.attributes()) {
    if (computed.has(name.toLowerCase())) continue;
    const old = before.lookup(name);
    const text = unparse(expr, true);
    if (old === undefined || unparse(old, true) !== text) out[`${CLASSAD}${name}`] = text;
  }
  return out;
}

/** EditJobInPlace: pre-route, route and post-route transforms on the original itself. */
function buildEditAd(working: ClassAd, route: Route, cfg: RouterConfig, evaluator: Evaluator): { ok: true; ad: ClassAd } | { ok: false; error: string } {
  const run = new TransformRun({ evaluator });
  let current = plainCopy(working);
  const steps = [...cfg.preRouteTransforms.map((t) => t.transform), { ...route.transform, requirements: undefined }, ...cfg.postRouteTransforms.map((t) => t.transform)];
  for (const t of steps) {
    const out = run.apply(t, current);
    if (!out.ok) return { ok: false, error: out.error };
    current = out.ad;
  }
  return { ok: true, ad: current };
}

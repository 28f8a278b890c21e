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
 *
 * This file polls and picks candidates; each job's record moves through the phases of
 * lifecycle.ts, acted on by routing.ts (claim, submit), mirror.ts (the copy's events),
 * cleanup.ts (finalize, cleanup, settle) and orphans.ts, all over core.ts's shared state.
 */
import { ClassAd, formatJobId, isTrue, parseExpr, type ClassAdExpr, type ExecReport, type JobArgs, type JobId, type PluginContext } from "jobtap/plugin";
import { check } from "./cleanup.js";
import type { RouterPluginConfig } from "./config.js";
import { RouterCore, STATE_PREFIX, type RoutingRecord } from "./core.js";
import { mirrorAttached, mirrorKilled, onEvent } from "./mirror.js";
import { adoptOrphans, parseId } from "./orphans.js";
import { attachCopy, routeJob } from "./routing.js";
import { RouteState } from "./throttle.js";

export { MIRROR_EXECUTOR } from "./core.js";

export class Router {
  readonly c: RouterCore;
  private timer: ReturnType<PluginContext["clock"]["setTimeout"]> | undefined;
  private polls = 0;
  private roundRobin = 0;
  private stopped = false;
  sourceConstraint: ClassAdExpr | undefined;
  readonly requirements = new Map<string, ClassAdExpr>();
  private pollRunning: Promise<void> | undefined;
  /** Job ads (by identity) that no route could take under table `tableEpoch`. */
  private noMatch = new WeakMap<ClassAd, number>();
  private tableEpoch = 0;
  /** False when a constraint reads the clock or randomness: then nothing is remembered. */
  private cacheable = true;

  constructor(p: PluginContext, cfg: RouterPluginConfig, hookTimeLimitMs: number) {
    this.c = new RouterCore(p, cfg, hookTimeLimitMs);
    this.applyRoutes();
  }

  private get p(): PluginContext {
    return this.c.p;
  }

  private get cfg(): RouterPluginConfig {
    return this.c.cfg;
  }

  /** Route states in NAMES order; a route keeping its name keeps its counters and throttle. */
  private applyRoutes(): void {
    const { routes } = this.c;
    const next: RouteState[] = [];
    this.requirements.clear();
    for (const route of this.cfg.router.routes) {
      const old = routes.get(route.name);
      const st = old ?? new RouteState(route, this.c.nowS());
      st.route = route;
      next.push(st);
      if (route.transform.requirements !== undefined) this.requirements.set(route.name, parseExpr(route.transform.requirements, true));
    }
    for (const name of [...routes.keys()]) if (!next.some((s) => s.route.name === name)) routes.delete(name);
    for (const st of next) routes.set(st.route.name, st);
    this.c.order = next;
    const sc = this.cfg.router.settings.sourceJobConstraint;
    this.sourceConstraint = sc === undefined ? undefined : parseExpr(sc, true);
    this.tableEpoch++;
    const texts = [sc ?? "", ...this.cfg.router.routes.map((r) => r.transform.requirements ?? "")];
    this.cacheable = !texts.some((t) => /time\s*\(|CurrentTime|random|\$/i.test(t));
    for (const w of this.cfg.router.warnings) this.p.log.warn(w);
  }

  /** A new configuration (conf.update after the first). */
  reconfigure(cfg: RouterPluginConfig): void {
    this.c.cfg = cfg;
    void this.c.hooks.close();
    this.c.hooks = this.c.makeHooks();
    this.applyRoutes();
    // Counters of managed jobs follow their routes; jobs of a dropped route stay managed.
    this.c.recount();
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
      const m = this.c.track(orig, rec.route);
      const copy = rec.copy === undefined ? undefined : parseId(rec.copy);
      if (copy !== undefined) attachCopy(this.c, m, copy);
    }
    for (const [id, report] of this.c.pendingReports) {
      const m = this.c.byOrig.get(id);
      if (m) this.mirrorAttached(id, report, true);
    }
    this.c.recount();
    this.schedule(0);
  }

  /** Plugin removal: no more polls; running route hooks are killed (resolves once they ended). */
  stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.p.clock.clearTimeout(this.timer);
    return this.c.hooks.close();
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

  /** Adopt orphans (every 5th poll, the first included), recompute throttles, route, check. */
  private async poll(): Promise<void> {
    if (this.polls++ % 5 === 0) adoptOrphans(this.c);
    const now = this.c.nowS();
    for (const st of this.c.order) st.updateThrottle(now);
    const work: Promise<void>[] = [];
    for (const [orig, route] of this.candidates()) work.push(routeJob(this.c, orig, route));
    for (const m of [...this.c.byOrig.values()]) work.push(check(this.c, m));
    await Promise.all(work);
  }

  // --- candidate selection (§4.4) ---------------------------------------------------

  private globalCapAfter(n: number): boolean {
    const max = this.cfg.router.settings.maxJobs;
    return max >= 0 && this.c.byOrig.size + n >= max;
  }

  /** Jobs to route now and the route each takes; counts each against its route at once. */
  private candidates(): Array<[JobId, RouteState]> {
    const out: Array<[JobId, RouteState]> = [];
    const { order } = this.c;
    if (order.length === 0 || !order.some((r) => r.accepting()) || this.globalCapAfter(0)) return out;
    for (const id of this.p.jobIds("SCHED")) {
      if (this.c.byOrig.has(id) || this.c.byCopy.has(id)) continue;
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
        if (this.cacheable && order.every((r) => r.accepting())) this.noMatch.set(ad, this.tableEpoch);
        continue;
      }
      route.current++;
      route.recentRouted++;
      out.push([id, route]);
      if (this.globalCapAfter(out.length)) break;
    }
    return out;
  }

  /** The umbrella constraint's fixed part and the source constraint. */
  private isCandidate(ad: ClassAd): boolean {
    if (ad.evaluate("JobStatus") !== 1n) return false;
    const managed = ad.has("Managed") ? ad.evaluate("Managed") : undefined;
    if (managed === "External" || managed === "ScheddDone") return false;
    if (ad.has("RoutedBy") && ad.evaluate("RoutedBy") === this.c.name) return false;
    if (this.sourceConstraint !== undefined && !isTrue(this.c.evaluator.evaluate(this.sourceConstraint, { my: ad }))) return false;
    return true;
  }

  /** First matching accepting route in order, or round robin; "full" when none accepts. */
  private pickRoute(ad: ClassAd): RouteState | "full" | undefined {
    const { order } = this.c;
    const n = order.length;
    let anyAccepting = false;
    const start = this.cfg.router.settings.roundRobinSelection ? this.roundRobin % n : 0;
    for (let i = 0; i < n; i++) {
      const st = order[(start + i) % n]!;
      if (!st.accepting()) continue;
      anyAccepting = true;
      const req = this.requirements.get(st.route.name);
      if (req !== undefined && !isTrue(this.c.evaluator.evaluate(req, { my: ad }))) continue;
      if (this.cfg.router.settings.roundRobinSelection) this.roundRobin = (start + i + 1) % n;
      return st;
    }
    return anyAccepting ? undefined : "full";
  }

  // --- the plugin's callbacks (mirror.ts) -------------------------------------------------

  /** `job.event.*` for a subscribed job: a copy's or an original's. */
  onEvent(args: JobArgs): void {
    onEvent(this.c, args);
  }

  /** The mirror executor was handed the original (start, or reattach after a restart). */
  mirrorAttached(id: JobId, report: ExecReport, started: boolean): void {
    mirrorAttached(this.c, id, report, started);
  }

  /** The running original got a fatal exception (cancel): remove the copy; finish follows it. */
  mirrorKilled(id: JobId): void {
    mirrorKilled(this.c, id);
  }

  // --- priority and status --------------------------------------------------------------

  /** Claimed originals get priority 0: the local scheduler leaves them alone. */
  claimed(job: JobArgs): boolean {
    const t = job.jobspec.attributes.user?.classad as Record<string, unknown> | undefined;
    return t?.Managed === '"External"' && t.ManagedManager === JSON.stringify(this.c.name);
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
      const ad = this.c.adOrUndefined(id);
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

  /**
   * Each routed original and its copy (the dashboard's router view): the router's phase and
   * both jobs' states while they are active (null once inactive or not made yet). At most
   * `max`, oldest claims first, so a huge routed backlog cannot make the reply unbounded.
   */
  pairs(max = 1000): Array<{ original: string; copy: string | null; route: string; phase: string; original_state: string | null; copy_state: string | null }> {
    const out = [];
    for (const m of this.c.byOrig.values()) {
      if (out.length >= max) break;
      out.push({
        original: formatJobId(m.orig),
        copy: m.copy === undefined ? null : formatJobId(m.copy),
        route: m.route,
        phase: m.phase,
        original_state: this.c.lookup(m.orig)?.state ?? null,
        copy_state: m.copy === undefined ? null : (this.c.lookup(m.copy)?.state ?? null),
      });
    }
    return out;
  }

  /** Per route: limits, counts and throttle (`jobtap router q`). */
  routeSummary(): Array<Record<string, unknown>> {
    return this.c.order.map((st) => ({
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

/**
 * What the router's parts share: the managed jobs by original and by copy, the route states,
 * the hooks, and the small steps every part takes (track, move, forget, recount, remove the
 * copy, mirror its start). routing.ts, mirror.ts, cleanup.ts and orphans.ts act on it;
 * router.ts owns it.
 */
import { Evaluator, formatJobId, isTrue, parseExpr, type ClassAd, type ExecReport, type JobArgs, type JobId, type PluginContext } from "jobtap/plugin";
import type { RouterPluginConfig } from "./config.js";
import { RouterHooks } from "./hooks.js";
import { canMove, copyDone, type Managed, type Phase } from "./lifecycle.js";
import { RouteState } from "./throttle.js";

/** The executor name the originals of routed jobs run on while they mirror their copy. */
export const MIRROR_EXECUTOR = "condor-router";

/** The R of an original that mirrors its copy: no local resources. */
const MIRROR_R = { version: 1, execution: { R_lite: [], nodelist: [], starttime: 0, expiration: 0, executor: MIRROR_EXECUTOR } };

/** The persistent routing record of one original (`job.<f58>` in the plugin's state). */
export interface RoutingRecord {
  route: string;
  copy?: string;
}

export const STATE_PREFIX = "job.";
export const CLASSAD = "attributes.user.classad.";

export class RouterCore {
  readonly byOrig = new Map<JobId, Managed>();
  readonly byCopy = new Map<JobId, Managed>();
  readonly routes = new Map<string, RouteState>();
  /** Mirror executor handles that arrived before their record was known (restart). */
  readonly pendingReports = new Map<JobId, ExecReport>();
  order: RouteState[] = [];
  readonly evaluator: Evaluator;
  hooks: RouterHooks;

  constructor(
    readonly p: PluginContext,
    public cfg: RouterPluginConfig,
    private readonly hookTimeLimitMs: number,
  ) {
    this.evaluator = new Evaluator({ clock: () => Math.floor(p.clock.now() / 1000) });
    this.hooks = this.makeHooks();
  }

  get name(): string {
    return this.cfg.router.settings.name;
  }

  nowS(): number {
    return this.p.clock.now() / 1000;
  }

  makeHooks(): RouterHooks {
    return new RouterHooks(this.p, this.cfg.hookPath, this.cfg.router.settings.hookKeyword, this.hookTimeLimitMs);
  }

  /** A new record for `orig`, claimed. */
  track(orig: JobId, route: string): Managed {
    const m: Managed = {
      orig, key: formatJobId(orig), route, phase: "claimed", copyStarted: false, copyRemoved: false, interrupted: false, since: this.p.clock.now(),
    };
    this.byOrig.set(orig, m);
    return m;
  }

  /** Moves `m` to `phase`; a move the table (lifecycle.ts) does not list is logged as a bug. */
  move(m: Managed, phase: Phase): void {
    if (!canMove(m.phase, phase)) this.p.log.error(`job ${m.key}: router bug: phase ${m.phase} -> ${phase} is not in the table`);
    m.phase = phase;
  }

  /** Drops the record, its persistent routing record and the subscriptions. */
  forget(m: Managed): void {
    if (m.phase !== "done") this.move(m, "done");
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
  recount(): void {
    for (const st of this.order) st.current = st.running = 0;
    for (const m of this.byOrig.values()) {
      const st = this.routes.get(m.route);
      if (st === undefined) continue;
      st.current++;
      if (m.copyStarted && m.phase === "submitted") st.running++;
    }
  }

  lookup(id: JobId): JobArgs | undefined {
    return this.p.lookup(id) as JobArgs | undefined;
  }

  adOrUndefined(id: JobId): ClassAd | undefined {
    try {
      return this.p.jobAd(id);
    } catch {
      return undefined;
    }
  }

  /**
   * A route boolean macro (EditJobInPlace, ...) evaluated with MY = the original and TARGET
   * = the copy when there is one (JobFailureTest's `target.RemoteWallClockTime`); undefined ⇒ false.
   */
  routeBool(expr: string | undefined, ad: ClassAd, target?: ClassAd): boolean {
    if (expr === undefined) return false;
    try {
      return isTrue(this.evaluator.evaluate(parseExpr(expr, true), { my: ad, target: target ?? null }));
    } catch {
      return false;
    }
  }

  /** Removes the copy, if it is still active. */
  removeCopy(m: Managed, note: string): void {
    if (m.copy === undefined || copyDone(m)) return;
    try {
      this.p.raiseException(m.copy, "cancel", 0, note);
    } catch {
      // Already ending.
    }
  }

  /** The copy runs: the original is allocated on the mirror executor, which posts start. */
  mirrorStart(m: Managed): void {
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
}

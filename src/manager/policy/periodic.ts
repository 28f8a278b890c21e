/**
 * Periodic job policy (HTCondor's schedd PeriodicExprEval and the shadow's exit check,
 * spec htcondor.md §4.9): every `intervalMs` of manager time (PERIODIC_EXPR_INTERVAL,
 * default 60 s) each active job whose ad sets a policy expression — every active job when
 * the site has SYSTEM_PERIODIC_* — is evaluated (MY = the job ad) in HTCondor's order
 * (user-policy.ts), and again when its task exits, with its exit attributes in the ad and
 * OnExitHold/OnExitRemove after the periodic ones. What a decision does is
 * periodic-actions.ts's.
 *
 * An expression that evaluates to error does nothing and is logged once per expression text.
 */
import type { ClassAd } from "../../classad/classad.js";
import type { Evaluator } from "../../classad/evaluator.js";
import type { Clock, TimerHandle } from "../base/clock.js";
import { formatJobId, type JobId } from "../base/ids.js";
import type { EventWatcher, Logger } from "../engine/engine.js";
import type { EventEntry, Jobspec } from "../port/records.js";
import type { ActiveJob } from "../engine/job.js";
import type { PolicyAds, PolicyReads } from "../ads/policy-ad.js";
import { openPolicyEpilog, type PolicyActions } from "./periodic-actions.js";
import { analyze, policyReads, type Decision, type SystemPolicy } from "./user-policy.js";

export { PERIODIC_HOLD_CODE, SYSTEM_HOLD_CODE } from "./user-policy.js";

export interface PeriodicDeps {
  clock: Clock;
  intervalMs: number;
  jobs(): Iterable<ActiveJob>;
  active(id: JobId): ActiveJob | undefined;
  jobAd(job: ActiveJob): ClassAd;
  /** Policy-only ads for what the policy reads (evaluated instead of the whole job ad). */
  policyAds(reads: PolicyReads): PolicyAds;
  evaluator: Evaluator;
  log: Logger;
  actions: PolicyActions;
  system?: SystemPolicy;
  /** Sets or clears the engine's watcher of one event name (Engine.watch). */
  watch(name: string, fn: EventWatcher | undefined): void;
  /** The active copy a job's policy submitted (its RequeuedFromJobId), if any. */
  copyOf(job: ActiveJob): JobId | undefined;
}

/** Lower-cased names of the job attributes that make a job subject to its own policy. */
const NAMES = new Set(["periodicremove", "periodichold", "periodicrelease", "onexithold", "onexitremove"]);

/** The periodic evaluation timer, its pass, and the exit-time check. */
export class PeriodicPolicy {
  private timer: TimerHandle | undefined;
  private readonly logged = new Set<string>();
  /** Jobs given a policy expression by a `classad-update` (not in their jobspec). */
  private readonly updated = new WeakSet<ActiveJob>();
  private system: SystemPolicy;
  private hasSystem: boolean;
  private lightAds: PolicyAds;
  /** Whether a jobspec's attributes name a policy expression, per jobspec object. */
  private readonly ownPolicy = new WeakMap<Jobspec, boolean>();
  private intervalMs: number;
  /** Between start() and stop(): the timer runs whenever the interval is above 0. */
  private armed = false;

  constructor(private readonly d: PeriodicDeps) {
    this.intervalMs = d.intervalMs;
    this.system = d.system ?? {};
    this.hasSystem = hasAny(this.system);
    this.lightAds = d.policyAds(policyReads(this.system));
    d.watch("submit", this.onJobspec);
    d.watch("jobspec-update", this.onJobspec);
    d.watch("classad-update", this.onAdUpdate);
    if (this.hasSystem) this.watchExits(true);
  }

  /** Replaces the site's SYSTEM_PERIODIC_* and, when given, the interval (a reload). */
  setSystem(system: SystemPolicy, intervalMs?: number): void {
    this.system = system;
    this.hasSystem = hasAny(system);
    this.lightAds = this.d.policyAds(policyReads(system));
    if (this.hasSystem) this.watchExits(true);
    if (intervalMs === undefined || intervalMs === this.intervalMs) return;
    this.intervalMs = intervalMs;
    if (!this.armed) return;
    this.stop();
    this.start();
  }

  /** Arms the interval timer (idempotent). */
  start(): void {
    this.armed = true;
    if (this.timer !== undefined || !(this.intervalMs > 0)) return;
    this.timer = this.d.clock.setTimeout(() => {
      this.timer = undefined;
      this.pass();
      this.start();
    }, this.intervalMs);
  }

  stop(): void {
    this.armed = false;
    if (this.timer !== undefined) this.d.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Evaluates every active job's periodic expressions once; returns how many acted. */
  pass(): number {
    // Chosen first: an action changes the active set (a removed job leaves, a copy enters).
    const due: ActiveJob[] = [];
    let subjects = 0;
    for (const job of this.d.jobs()) {
      if (!this.subject(job)) continue;
      subjects++;
      const s = job.core.state;
      if (s !== "NEW" && s !== "INACTIVE" && s !== "CLEANUP") due.push(job);
    }
    // Nobody left to check at exit (the jobs with expressions all ended, no site policy).
    if (subjects === 0 && !this.hasSystem) this.watchExits(false);
    let acted = 0;
    const memo: PassMemo = { second: NaN, decisions: new Map() };
    for (const job of due) if (this.evaluate(job, false, memo)) acted++;
    return acted;
  }

  /**
   * A job whose task exited on its own (`finish` is its end event) is checked at once, with
   * its exit attributes in its ad (HTCondor's check at exit). It runs inside the event's
   * processing; what it posts is queued behind it, so a copy's epilog (periodic-actions.ts)
   * is open before the job's cleanup can end. Watched only while some job may be subject.
   */
  private readonly onFinish = (job: ActiveJob): void => {
    if (job.core.endEvent?.name !== "finish" || !this.subject(job)) return;
    this.evaluate(job, true);
  };

  /** HTCondor's shadow re-evaluates on each update of a running job's ad. */
  private readonly onAdUpdate = (job: ActiveJob, e: EventEntry): void => {
    if (namesPolicy(e.context?.attributes)) {
      this.updated.add(job);
      this.watchExits(true);
    }
    const s = job.core.state;
    if (s !== "CLEANUP" && s !== "INACTIVE" && s !== "NEW" && job.core.endEvent === undefined && this.subject(job)) this.evaluate(job, false);
  };

  /** A job submitted with, or updated to, a policy expression: exits are watched from now on. */
  private readonly onJobspec = (job: ActiveJob): void => {
    if (!this.exitsWatched && this.wantsPolicy(job.core.jobspec)) this.watchExits(true);
  };

  private exitsWatched = false;

  /**
   * Watches `finish` events while the site has SYSTEM_PERIODIC_* or some active job has
   * an expression of its own; otherwise no event but submits and updates reaches the
   * policy (issue 35 (c): a manager with a trivial policy runs as fast as one without).
   */
  private watchExits(on: boolean): void {
    if (on === this.exitsWatched) return;
    this.exitsWatched = on;
    this.d.watch("finish", on ? this.onFinish : undefined);
  }

  /**
   * After a restart: a job whose copy was being submitted when the daemon stopped (its
   * policy epilog still open) is decided again; the copy is submitted unless it exists.
   */
  resume(): void {
    for (const job of this.d.jobs()) {
      if (!this.subject(job)) continue;
      this.watchExits(true);
      break;
    }
    for (const job of [...this.d.jobs()]) {
      if (job.core.state !== "CLEANUP" || !openPolicyEpilog(job)) continue;
      const copy = this.d.copyOf(job);
      if (copy !== undefined) this.d.actions.finishCopy(job, copy);
      else if (!this.evaluate(job, true)) this.d.actions.finishCopy(job, undefined);
    }
  }

  private subject(job: ActiveJob): boolean {
    return this.hasSystem || this.wantsPolicy(job.core.jobspec) || this.updated.has(job);
  }

  /** Whether the job's ClassAd attributes name a policy expression (no ad is built otherwise). */
  private wantsPolicy(js: Jobspec): boolean {
    let wants = this.ownPolicy.get(js);
    if (wants === undefined) this.ownPolicy.set(js, (wants = namesPolicy(js.attributes.user?.classad)));
    return wants;
  }

  /**
   * Evaluates the job's policy and acts on a decision. In a pass (`memo`), jobs sharing one
   * policy-only ad (ads/policy-ad.ts: equal ads, no random()) are decided once per clock
   * second, the unit of time() and every time attribute: evaluating each would give the same.
   */
  private evaluate(job: ActiveJob, exited: boolean, memo?: PassMemo): boolean {
    // The policy-only ad evaluates as the whole ad does; a job without one (a classad-update,
    // an eval()) takes its whole ad.
    const light = this.lightAds.entry(job);
    const ad = light.ad ?? this.d.jobAd(job);
    let d: Decision | undefined;
    if (memo !== undefined && light.shared) {
      const second = Math.floor(this.d.clock.now() / 1000);
      if (second !== memo.second) {
        memo.second = second;
        memo.decisions.clear();
      }
      const known = memo.decisions.get(ad);
      if (known !== undefined) d = known ?? undefined;
      else memo.decisions.set(ad, (d = this.analyze(job, ad, exited)) ?? null);
    } else d = this.analyze(job, ad, exited);
    if (d === undefined) return false;
    this.d.actions.act(job, d, exited);
    return true;
  }

  private analyze(job: ActiveJob, ad: ClassAd, exited: boolean): Decision | undefined {
    return analyze(ad, this.d.evaluator, this.system, exited, (name, text) =>
      this.logOnce(`job ${formatJobId(job.core.id)}: ${name} = ${text} evaluates to error: ignored`, `${name}\0${text}`),
    );
  }

  private logOnce(message: string, key: string): void {
    if (this.logged.has(key) || this.logged.size > 4096) return;
    this.logged.add(key);
    this.d.log("error", `periodic policy: ${message}`);
  }
}

/** One pass's decisions per shared policy-only ad, valid for one clock second. */
interface PassMemo {
  second: number;
  decisions: Map<ClassAd, Decision | null>;
}

function hasAny(s: SystemPolicy): boolean {
  return s.hold !== undefined || s.release !== undefined || s.remove !== undefined;
}

function namesPolicy(table: unknown): boolean {
  if (typeof table !== "object" || table === null) return false;
  for (const name of Object.keys(table)) if (NAMES.has(name.toLowerCase())) return true;
  return false;
}

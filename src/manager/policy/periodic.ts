/**
 * Periodic job policy (HTCondor's schedd PeriodicExprEval, spec htcondor.md §9): every
 * `intervalMs` of manager time (PERIODIC_EXPR_INTERVAL, default 60 s), each active job whose
 * ad sets PeriodicRemove, PeriodicHold or PeriodicRelease has them evaluated (MY = the job
 * ad), in HTCondor's order: remove first, then hold (a job not held), then release (a held
 * job). The manager maps the outcomes (docs/ads.md "Periodic job policy"): remove → a
 * `cancel` exception, hold → urgency 0 with HoldReasonCode 3, release → the default urgency.
 *
 * Only boolean true acts; undefined, false and error do nothing (an error is logged once
 * per expression text).
 */
import type { ClassAd } from "../../classad/classad.js";
import type { Evaluator } from "../../classad/evaluator.js";
import { unparse } from "../../classad/unparse.js";
import { isError } from "../../classad/values.js";
import type { Clock, TimerHandle } from "../base/clock.js";
import { formatJobId } from "../base/ids.js";
import { JOB_STATUS } from "../ads/jobad.js";
import type { Logger } from "../engine/engine.js";
import type { ActiveJob } from "../engine/job.js";

/** HTCondor's HoldReasonCode for a hold by the job's own PeriodicHold. */
export const PERIODIC_HOLD_CODE = 3;

/** What the manager does for a periodic expression that became true. */
export interface PeriodicActions {
  remove(job: ActiveJob, reason: string): void;
  hold(job: ActiveJob, reason: string, code: number, subCode: number): void;
  release(job: ActiveJob, reason: string): void;
}

export interface PeriodicDeps {
  clock: Clock;
  intervalMs: number;
  jobs(): Iterable<ActiveJob>;
  jobAd(job: ActiveJob): ClassAd;
  evaluator: Evaluator;
  log: Logger;
  actions: PeriodicActions;
}

const NAMES = ["periodicremove", "periodichold", "periodicrelease"];

/** The periodic evaluation timer and its pass. */
export class PeriodicPolicy {
  private timer: TimerHandle | undefined;
  private readonly logged = new Set<string>();

  constructor(private readonly d: PeriodicDeps) {}

  /** Arms the interval timer (idempotent). */
  start(): void {
    if (this.timer !== undefined || !(this.d.intervalMs > 0)) return;
    this.timer = this.d.clock.setTimeout(() => {
      this.timer = undefined;
      this.pass();
      this.start();
    }, this.d.intervalMs);
  }

  stop(): void {
    if (this.timer !== undefined) this.d.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Evaluates every active job's periodic expressions once; returns how many acted. */
  pass(): number {
    let acted = 0;
    for (const job of [...this.d.jobs()]) {
      if (!wantsPeriodic(job) || job.core.state === "INACTIVE" || job.core.state === "CLEANUP") continue;
      if (this.evaluate(job)) acted++;
    }
    return acted;
  }

  private evaluate(job: ActiveJob): boolean {
    const ad = this.d.jobAd(job);
    const status = ad.evaluate("JobStatus");
    if (this.holds(ad, "PeriodicRemove", job)) {
      this.d.actions.remove(job, reasonOf(ad, "PeriodicRemove"));
      return true;
    }
    const pending = job.core.state === "SCHED" || job.core.state === "DEPEND" || job.core.state === "PRIORITY";
    if (status !== BigInt(JOB_STATUS.held) && pending && this.holds(ad, "PeriodicHold", job)) {
      const reason = ad.evaluate("PeriodicHoldReason");
      const sub = ad.evaluate("PeriodicHoldSubCode");
      this.d.actions.hold(job, typeof reason === "string" && reason !== "" ? reason : reasonOf(ad, "PeriodicHold"), PERIODIC_HOLD_CODE, typeof sub === "bigint" ? Number(sub) : 0);
      return true;
    }
    if (status === BigInt(JOB_STATUS.held) && this.holds(ad, "PeriodicRelease", job)) {
      this.d.actions.release(job, reasonOf(ad, "PeriodicRelease"));
      return true;
    }
    return false;
  }

  private holds(ad: ClassAd, name: string, job: ActiveJob): boolean {
    const expr = ad.lookup(name);
    if (expr === undefined) return false;
    const v = this.d.evaluator.evaluateAttr(ad, name, null);
    if (isError(v)) this.logOnce(`job ${formatJobId(job.core.id)}: ${name} = ${unparse(expr, true)} evaluates to error: ignored`, `${name}\0${unparse(expr, true)}`);
    return v === true;
  }

  private logOnce(message: string, key: string): void {
    if (this.logged.has(key) || this.logged.size > 4096) return;
    this.logged.add(key);
    this.d.log("error", `periodic policy: ${message}`);
  }
}

/** HTCondor's wording of why an expression acted. */
function reasonOf(ad: ClassAd, name: string): string {
  return `The job attribute ${name} expression '${unparse(ad.lookup(name)!, true)}' evaluated to TRUE`;
}

/** Whether the job's ClassAd attributes name a periodic expression (no ad is built otherwise). */
function wantsPeriodic(job: ActiveJob): boolean {
  const table = job.core.jobspec.attributes.user?.classad;
  if (typeof table !== "object" || table === null) return false;
  for (const name of Object.keys(table)) if (NAMES.includes(name.toLowerCase())) return true;
  return false;
}

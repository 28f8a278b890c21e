/**
 * The startd's PREEMPT (spec htcondor.md §9): a slot's `Preempt` evaluated with MY = the slot
 * ad and TARGET = the ad of each job running in it; when it is true the job is evicted —
 * the manager's `evict` exception and a pending copy, as condor-fetch's preemption and
 * requeue do (evict.ts, docs/ads.md "PREEMPT").
 *
 * It is evaluated when the slot ads change (a publication such as condor-cron output, a
 * withdrawal, a reconfig) and at the start of each scheduling pass. Only a job in RUN is
 * evicted (one in CLEANUP is already leaving), once: a job whose eviction is under way is not
 * evaluated again. Undefined, false or error keeps the job (an error is logged once per
 * expression text).
 */
import type { ClassAd } from "../../classad/classad.js";
import type { Evaluator } from "../../classad/evaluator.js";
import { unparse } from "../../classad/unparse.js";
import { isError } from "../../classad/values.js";
import type { Clock, TimerHandle } from "../base/clock.js";
import type { JobId } from "../base/ids.js";
import type { HostAds } from "../ads/hostads.js";
import type { Logger } from "../engine/engine.js";
import type { ActiveJob } from "../engine/job.js";
import type { SlotUse } from "../scheduler/scheduler.js";

export interface PreemptDeps {
  clock: Clock;
  hostAds: HostAds;
  /** The slots' use (the scheduler's), in SlotID order as `hostAds.slotAds()`. */
  slotUse(): SlotUse[];
  active(id: JobId): ActiveJob | undefined;
  jobAd(job: ActiveJob): ClassAd;
  evaluator: Evaluator;
  log: Logger;
  /** Evicts a running job (the exception and its pending copy); settles when done. */
  evict(job: ActiveJob, slotId: number, reason: string): Promise<void>;
}

/** PREEMPT's evaluation over the running jobs. */
export class PreemptPolicy {
  private timer: TimerHandle | undefined;
  /** Jobs whose eviction is under way (their copy is being submitted). */
  private readonly evicting = new Set<JobId>();
  private readonly logged = new Set<string>();

  constructor(private readonly d: PreemptDeps) {}

  /** Asks for an evaluation soon (coalesced; never inside the caller's stack). */
  request(): void {
    if (this.timer !== undefined || !this.d.hostAds.preempting) return;
    this.timer = this.d.clock.setTimeout(() => {
      this.timer = undefined;
      this.check();
    }, 0);
  }

  /** Evaluates every slot's Preempt against each job running in it now. */
  check(): void {
    if (!this.d.hostAds.preempting) return;
    const uses = this.d.slotUse();
    if (!uses.some((u) => u.jobs.length > 0)) return;
    const ads = this.d.hostAds.slotAds();
    uses.forEach((use, i) => {
      const slotAd = ads[i];
      if (slotAd === undefined || !slotAd.has("Preempt") || use.jobs.length === 0) return;
      for (const id of use.jobs) this.checkJob(slotAd, use.slot.id, id);
    });
  }

  private checkJob(slotAd: ClassAd, slotId: number, id: JobId): void {
    if (this.evicting.has(id)) return;
    const job = this.d.active(id);
    if (job === undefined || job.core.state !== "RUN") return;
    const v = this.d.evaluator.evaluateAttr(slotAd, "Preempt", this.d.jobAd(job));
    if (isError(v)) this.logOnce(slotId, slotAd);
    if (v !== true) return;
    const reason = `slot ${slotId}: PREEMPT (${unparse(slotAd.lookup("Preempt")!, true)}) is true`;
    this.evicting.add(id);
    void this.d.evict(job, slotId, reason).finally(() => this.evicting.delete(id));
  }

  private logOnce(slotId: number, slotAd: ClassAd): void {
    const text = unparse(slotAd.lookup("Preempt")!, true);
    const key = `${slotId}\0${text}`;
    if (this.logged.has(key) || this.logged.size > 4096) return;
    this.logged.add(key);
    this.d.log("error", `PREEMPT: slot ${slotId}: Preempt = ${text} evaluates to error: the job is kept`);
  }

  /** Stops the timer (close). */
  stop(): void {
    if (this.timer !== undefined) this.d.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}

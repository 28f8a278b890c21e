/**
 * State actions (spec §2.3): what the manager does on entering, or while in, each state.
 * Idempotent: run after every event of the job, they only do what is still outstanding.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import type { Engine, ActionRunner } from "./engine/engine.js";
import type { Executors } from "./exec/registry.js";
import { formatJobId, type JobId } from "./base/ids.js";
import type { InactiveCache } from "./engine/inactive.js";
import { durationOf, queued, type ActiveJob } from "./engine/job.js";
import { resourceRequest } from "./core/jobspec.js";
import type { QueueGate } from "./core/queues.js";
import type { Scheduler } from "./scheduler/scheduler.js";
import type { AppliedTopic } from "./port/topics.js";
import { inactiveRecordOf } from "./engine/summary.js";
import { eventPosted, isDebugJob } from "./core/transition.js";
import { waitResultOf } from "./engine/views.js";
import { keepRejected } from "./jobads.js";

export interface ActionDeps {
  engine: Engine;
  scheduler: Scheduler;
  /** The executor registry: picks and calls a job's executor (exec/registry.ts). */
  executors: Executors;
  inactive: InactiveCache;
  queues: QueueGate;
}

/** State actions (spec §2.3): what the manager does on entering, or while in, each state. */
export class Actions implements ActionRunner {
  constructor(private readonly d: ActionDeps) {}

  /** Runs `fn` with the alloc queue sorted once at its end (Scheduler.reorderOnce). */
  reorderOnce(fn: () => void): void {
    this.d.scheduler.reorderOnce(fn);
  }

  /** `jobtap job kill`: the job's executor signals its processes; false if none is left. */
  signal(job: ActiveJob, signum: number): boolean {
    const executor = job.exec?.released === false ? job.exec.reg.executor : undefined;
    if (executor === undefined) return false;
    if (executor.signal === undefined) {
      throw new JobtapError(ErrorCode.BAD_STATE, `job ${formatJobId(job.core.id)}: its executor cannot deliver signals`);
    }
    return executor.signal(job.core.id, signum);
  }

  run(job: ActiveJob): void {
    switch (job.core.state) {
      case "DEPEND":
        return this.depend(job);
      case "PRIORITY":
        // Back from SCHED (urgency, jobspec-update, flux-restart): cancel the alloc request.
        return this.withdraw(job);
      case "SCHED":
        return this.sched(job);
      case "RUN":
        return this.runState(job);
      case "CLEANUP":
        return this.cleanup(job);
      case "INACTIVE":
        return this.retire(job);
      default:
        return;
    }
  }

  private depend(job: ActiveJob): void {
    const c = job.core;
    if (c.dependencies.length > 0 || job.dependQueued || queued(job, "dependency-add")) return;
    job.dependQueued = true;
    this.d.engine.post(job, "depend");
  }

  private sched(job: ActiveJob): void {
    const c = job.core;
    const s = this.d.scheduler;
    // Held jobs (priority 0) and alloc-bypass jobs get no alloc request.
    // Jobs of a stopped queue stay in SCHED with no request until the queue starts.
    if (c.priority === 0 || c.flags.includes("alloc-bypass") || this.d.queues.holds(c.jobspec)) {
      this.withdraw(job);
      return;
    }
    // Already queued: only its priority may have changed.
    const queued = job.schedEntry;
    if (queued?.live) {
      job.schedEntry = s.reprioritize(queued, c.priority);
      return;
    }
    // The entry it drops (dead: placed before) keeps its LastRejMatchTime; the new one starts afresh.
    keepRejected(job, s);
    try {
      job.request ??= resourceRequest(c.jobspec);
    } catch (err) {
      this.d.engine.raise(job, "alloc", 0, (err as Error).message);
      return;
    }
    // Informational, for debug jobs only (Flux); queued behind this event, so before `alloc`.
    if (isDebugJob(c)) this.d.engine.post(job, "debug.alloc-request");
    job.schedEntry = s.enqueue(c.id, c.priority, job.request, durationOf(c.jobspec), job);
  }

  /** Cancels the job's alloc request, if it has one queued (the job holds its entry: no lookup). */
  private withdraw(job: ActiveJob): void {
    const queued = job.schedEntry;
    if (queued === undefined) return;
    keepRejected(job, this.d.scheduler);
    job.schedEntry = undefined;
    this.d.scheduler.dequeue(queued);
  }

  /**
   * After a queue started or stopped: every idle SCHED job gets its request withdrawn or
   * sent again (a busy job runs this action itself once its event is processed).
   */
  requeueAll(): void {
    for (const job of this.d.engine.active.values()) {
      if (job.core.state === "SCHED" && !job.busy && job.hold === 0) this.sched(job);
    }
  }

  private runState(job: ActiveJob): void {
    if (job.startRequested || job.core.perilog > 0 || queued(job, "prolog-start")) return;
    job.startRequested = true;
    this.d.executors.start(job);
  }

  private cleanup(job: ActiveJob): void {
    const c = job.core;
    const id = c.id;
    // Only a job never allocated can still sit in the alloc queue.
    if (!eventPosted(c, "alloc")) this.withdraw(job);
    if (job.startRequested && !eventPosted(c, "release")) {
      // Still running: a job ended by an exception is stopped; finish/release come back as
      // events and run this action again.
      if (c.endEvent?.name === "exception") this.d.executors.kill(job);
      return;
    }
    const perilogBusy = c.perilog > 0 || queued(job, "epilog-start") || queued(job, "prolog-finish");
    if (c.hasResources && !perilogBusy && !job.freeRequested) {
      job.freeRequested = true;
      this.d.scheduler.free(id);
      this.d.engine.post(job, "free");
      return;
    }
    if (!c.hasResources && !perilogBusy && !job.cleanQueued && !queued(job, "free")) {
      job.cleanQueued = true;
      this.d.engine.post(job, "clean");
    }
  }

  allocRefused(job: ActiveJob): void {
    this.d.scheduler.free(job.core.id);
  }

  /** A running job's new expiration goes to its executor (Flux sends it to exec). */
  resourceUpdate(job: ActiveJob): void {
    const c = job.core;
    if (!job.startRequested || eventPosted(c, "release") || !this.d.executors.running(job)) return;
    const expiration = (c.R?.execution as { expiration?: unknown } | undefined)?.expiration;
    this.d.executors.updateExpiration(job, typeof expiration === "number" ? expiration : 0);
  }

  /** INACTIVE (spec §2.3): waiters, inactive cache + job.inactive-add, job.destroy, drop. */
  private retire(job: ActiveJob): void {
    const e = this.d.engine;
    const c = job.core;
    if (job.waiters !== undefined) {
      for (const w of job.waiters) w(waitResultOf(c));
      job.waiters = undefined;
    }
    const record = inactiveRecordOf(job);
    e.counts.inactive[record.result]!++;
    if (this.d.inactive.add(record)) {
      e.batch.storeSummaryOf(job, record);
      this.notify(job, "job.inactive-add");
    }
    this.notify(job, "job.destroy");
    e.port.jobGone(c.id);
    e.dismiss(job);
  }

  /** Fire-and-forget topics of a job that is leaving: async errors are logged. */
  notify(job: ActiveJob, topic: AppliedTopic): void {
    const pending = this.d.engine.callJob(job, topic);
    if (pending) pending.catch((err: unknown) => this.d.engine.log("error", `${topic} ${formatJobId(job.core.id)}: ${err}`));
  }
}

export type { JobId };

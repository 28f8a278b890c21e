/**
 * Queue start/stop (Flux §2.3, §9): a job of a stopped queue stays in SCHED with no alloc
 * request; starting the queue sends the requests. The manager keeps only the mechanism —
 * which queues are stopped and which queue a job that names none belongs to; the policy
 * (configured queues, persistence, services) lives in the `.update-queue` plugin, which
 * sets this state through the ManagerPort.
 */
import type { Jobspec } from "../port/records.js";

/** Which named queues are stopped, and the default queue of jobs that name none. */
export class QueueGate {
  private readonly stopped = new Set<string>();
  private defaultQueue: string | undefined;

  /** Marks `queue` started or stopped; true if that changed anything. */
  setStarted(queue: string, started: boolean): boolean {
    if (started) return this.stopped.delete(queue);
    if (this.stopped.has(queue)) return false;
    this.stopped.add(queue);
    return true;
  }

  /** The queue of jobs that name none; true if it changed. */
  setDefault(queue: string | undefined): boolean {
    if (queue === this.defaultQueue) return false;
    this.defaultQueue = queue;
    return true;
  }

  /** True if the job's queue is stopped (cheap when no queue is: the common case). */
  holds(jobspec: Jobspec): boolean {
    if (this.stopped.size === 0) return false;
    const q = jobspec.attributes.system?.queue;
    // No queue named and no default: the anonymous queue, "" (Flux's single unnamed queue).
    const queue = typeof q === "string" ? q : (this.defaultQueue ?? "");
    return this.stopped.has(queue);
  }

  /** The job's queue when it is stopped, else undefined (`job why`). */
  stoppedQueueOf(jobspec: Jobspec): string | undefined {
    if (this.stopped.size === 0) return undefined;
    const q = jobspec.attributes.system?.queue;
    const queue = typeof q === "string" ? q : (this.defaultQueue ?? "");
    return this.stopped.has(queue) ? queue : undefined;
  }

  /** Stopped queue names, sorted (listings, tests). */
  stoppedQueues(): string[] {
    return [...this.stopped].sort();
  }
}

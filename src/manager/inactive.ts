/**
 * The inactive cache: compact records of finished jobs, kept up to an age and a count
 * limit, then purged (from memory and the store) with `job.inactive-remove`. Full
 * eventlogs and jobspecs of inactive jobs are not kept in memory; they are read from the
 * store on demand.
 */
import type { Clock, TimerHandle } from "./clock.js";
import type { JobId } from "./ids.js";
import { RESULTS, type JobResult } from "./states.js";

/** What stays in memory for an inactive job (kept small: this is per finished job). */
export interface InactiveRecord {
  readonly id: JobId;
  readonly userid: number;
  readonly urgency: number;
  readonly priority: number;
  readonly t_submit: number;
  readonly t_clean: number;
  /** Index into RESULTS. */
  readonly result: number;
  readonly name: string;
  /** Wait status from `finish`, -1 if none. */
  readonly waitStatus: number;
  /** The job's annotations when it became inactive (Flux keeps them on inactive jobs;
   *  after a restart only the eventlog's `memo`s are left). Null for most jobs. */
  readonly annotations: Record<string, unknown> | null;
}

/** The result name (COMPLETED, FAILED, ...) of an inactive record. */
export function resultName(r: InactiveRecord): JobResult {
  return RESULTS[r.result] ?? "FAILED";
}

export interface InactiveLimits {
  /** Seconds an inactive job is kept (default: forever). */
  ageLimit?: number;
  /** How many inactive jobs are kept (default: unlimited). */
  numLimit?: number;
}

export class InactiveCache {
  /** Insertion order is inactivation order: oldest first, which is purge order. */
  readonly records = new Map<JobId, InactiveRecord>();
  private timer: TimerHandle | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly limits: InactiveLimits,
    private readonly purge: (r: InactiveRecord) => void,
  ) {}

  get size(): number {
    return this.records.size;
  }

  get(id: JobId): InactiveRecord | undefined {
    return this.records.get(id);
  }

  /** Adds a record; returns false if it was already there. Then enforces the limits. */
  add(r: InactiveRecord): boolean {
    if (this.records.has(r.id)) return false;
    this.records.set(r.id, r);
    this.enforce();
    return true;
  }

  /** Purges one job now (e.g. an explicit purge request). Returns false if not cached. */
  remove(id: JobId): boolean {
    const r = this.records.get(id);
    if (!r) return false;
    this.records.delete(id);
    this.purge(r);
    return true;
  }

  /** Applies the count limit, then the age limit, and arms a timer for the next expiry. */
  enforce(): void {
    const num = this.limits.numLimit;
    if (num !== undefined) {
      for (const r of this.records.values()) {
        if (this.records.size <= num) break;
        this.remove(r.id);
      }
    }
    const age = this.limits.ageLimit;
    if (age === undefined) return;
    const cutoff = this.clock.now() / 1000 - age;
    for (const r of this.records.values()) {
      if (r.t_clean > cutoff) {
        this.arm((r.t_clean - cutoff) * 1000);
        return;
      }
      this.remove(r.id);
    }
  }

  private arm(ms: number): void {
    if (this.timer) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.enforce();
    }, Math.max(0, ms));
  }

  close(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * Counts kept in place where the manager already passes (a scheduling pass, a store batch):
 * plain numbers, no allocation, no listener. The daemon's `/metrics` reads them when
 * Prometheus scrapes (docs/api.md, Metrics); nothing here knows about Prometheus.
 */

/** Upper bounds (seconds) for short manager operations: a pass, a batch's write. */
export const SECONDS_BUCKETS: readonly number[] = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30];

/** Upper bounds for a count per operation (jobs in a store batch). */
export const SIZE_BUCKETS: readonly number[] = [1, 4, 16, 64, 256, 1024, 4096, 16384];

/** A histogram as plain numbers: per-bucket counts (not cumulative), their sum and count. */
export class Tally {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }

  /** Adds one observation; a value past the last bound counts only in `count` (+Inf). */
  observe(v: number): void {
    this.sum += v;
    this.count++;
    const bounds = this.bounds;
    for (let b = 0; b < bounds.length; b++) {
      if (v <= bounds[b]!) {
        this.counts[b]!++;
        return;
      }
    }
  }
}

/** The scheduler's passes: how many ran, how many jobs they placed, how long each took. */
export interface PassStats {
  passes: number;
  placed: number;
  readonly seconds: Tally;
}

/** The store batches: the time from hand-over to durable, and the jobs each carried. */
export interface BatchStats {
  readonly seconds: Tally;
  readonly jobs: Tally;
}

/** Jobs accepted, and jobs that became inactive by result (indexed as RESULTS). */
export interface JobCounts {
  submitted: number;
  readonly inactive: Float64Array;
}

/** What the manager counts about itself (JobManager.stats). */
export interface ManagerStats {
  readonly jobs: JobCounts;
  readonly passes: PassStats;
  readonly batches: BatchStats;
  /** Seconds the last open spent replaying the store (replay and restart callbacks). */
  readonly replaySeconds: number;
}

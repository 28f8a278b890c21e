/**
 * The last hour the dashboard charts (`GET /api/v1/stats`), kept in fixed rings of 360
 * ten-second buckets: jobs submitted and jobs that became inactive (throughput), active jobs
 * by state at each bucket's end (queue depth), and plugin callback and hook run times as
 * log-spaced histograms (p50/p95 per bucket). Memory is fixed (about 0.4 MB) whatever the
 * load; each job event costs a few array writes, nothing is kept per job.
 */
import type { JournalEntry } from "../../manager/engine/engine.js";

export const BUCKET_MS = 10_000;
export const BUCKETS = 360;
/** The active states charted as queue depth. */
export const DEPTH_STATES = ["DEPEND", "PRIORITY", "SCHED", "RUN", "CLEANUP"] as const;
type DepthState = (typeof DEPTH_STATES)[number];

// Histogram bins: 4 per power of two of microseconds, from 1 µs to about 2^32 µs (71 min).
const PER_OCTAVE = 4;
const BINS = 32 * PER_OCTAVE;

/** A latency series' point: how many, and the median and 95th percentile in seconds (null: none). */
export interface Latency {
  count: number;
  p50: number | null;
  p95: number | null;
}

/** One bucket as served. */
export interface StatsBucket {
  /** The bucket's start, seconds since the epoch. */
  t: number;
  submitted: number;
  inactive: number;
  depth: Record<DepthState, number>;
  callbacks: Latency;
  hooks: Latency;
}

export interface StatsView {
  bucket_seconds: number;
  /** Oldest first; only buckets since the recorder started; the last one is in progress. */
  buckets: StatsBucket[];
}

/** The recorder. */
export interface StatsRecorder {
  /** Feed it the manager's journal entries. */
  event(j: JournalEntry): void;
  /** A plugin handler's elapsed time. */
  callback(ms: number): void;
  /** A hook program's run time. */
  hook(ms: number): void;
  view(): StatsView;
}

/** A recorder starting at `now()` (ms) with `depth` active jobs by state. */
export function statsRecorder(now: () => number, depth: Partial<Record<string, number>>): StatsRecorder {
  const submitted = new Uint32Array(BUCKETS);
  const inactive = new Uint32Array(BUCKETS);
  const depthRing = DEPTH_STATES.map(() => new Uint32Array(BUCKETS));
  const cb = new Uint32Array(BUCKETS * BINS);
  const hk = new Uint32Array(BUCKETS * BINS);
  const counts = DEPTH_STATES.map((s) => depth[s] ?? 0);
  const started = Math.floor(now() / BUCKET_MS);
  let current = started;
  const snapshot = (i: number) => DEPTH_STATES.forEach((_, s) => ((depthRing[s] as Uint32Array)[i] = counts[s] as number));
  snapshot(current % BUCKETS);
  // Moves to the bucket of `now()`, clearing the ones passed; a bucket's depth is the counts
  // when it was left (nothing changed them between events, so that is its end state).
  const advance = (): number => {
    const b = Math.floor(now() / BUCKET_MS);
    if (b <= current) return current % BUCKETS;
    for (let k = current + 1; k <= b && k <= current + BUCKETS; k++) {
      const i = k % BUCKETS;
      submitted[i] = 0;
      inactive[i] = 0;
      cb.fill(0, i * BINS, (i + 1) * BINS);
      hk.fill(0, i * BINS, (i + 1) * BINS);
      snapshot(i);
    }
    current = b;
    return b % BUCKETS;
  };
  const indexOf = (s: string) => (DEPTH_STATES as readonly string[]).indexOf(s);
  return {
    event(j) {
      if (j.entry.name === "submit") submitted[advance()]!++;
      if (j.prev_state === j.state) return;
      const i = advance();
      if (j.state === "INACTIVE") inactive[i]!++;
      const from = indexOf(j.prev_state);
      const to = indexOf(j.state);
      if (from >= 0 && (counts[from] as number) > 0) counts[from]!--;
      if (to >= 0) counts[to]!++;
      snapshot(i);
    },
    callback(ms) {
      cb[advance() * BINS + bin(ms)]!++;
    },
    hook(ms) {
      hk[advance() * BINS + bin(ms)]!++;
    },
    view() {
      snapshot(advance());
      const buckets: StatsBucket[] = [];
      for (let k = Math.max(started, current - BUCKETS + 1); k <= current; k++) {
        const i = k % BUCKETS;
        buckets.push({
          t: (k * BUCKET_MS) / 1000,
          submitted: submitted[i] as number,
          inactive: inactive[i] as number,
          depth: Object.fromEntries(DEPTH_STATES.map((s, n) => [s, (depthRing[n] as Uint32Array)[i] as number])) as Record<DepthState, number>,
          callbacks: latency(cb, i),
          hooks: latency(hk, i),
        });
      }
      return { bucket_seconds: BUCKET_MS / 1000, buckets };
    },
  };
}

/** The bin of a duration in ms: 4 bins per doubling of microseconds. */
function bin(ms: number): number {
  const us = ms * 1000;
  if (!(us > 1)) return 0;
  return Math.min(BINS - 1, Math.ceil(Math.log2(us) * PER_OCTAVE));
}

/** p50 and p95 of one bucket's histogram: each the upper edge of the bin it falls in, in seconds. */
function latency(h: Uint32Array, i: number): Latency {
  let count = 0;
  for (let b = 0; b < BINS; b++) count += h[i * BINS + b] as number;
  if (count === 0) return { count, p50: null, p95: null };
  const at = (q: number) => {
    const rank = Math.ceil(q * count);
    let seen = 0;
    for (let b = 0; b < BINS; b++) {
      seen += h[i * BINS + b] as number;
      if (seen >= rank) return 2 ** (b / PER_OCTAVE) / 1e6;
    }
    return 2 ** ((BINS - 1) / PER_OCTAVE) / 1e6;
  };
  return { count, p50: at(0.5), p95: at(0.95) };
}

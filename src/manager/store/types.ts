/**
 * The job store: where eventlogs and jobspecs live. The eventlog is the source of truth;
 * the manager's in-memory state is a cache rebuilt from it at start.
 *
 * Writes are grouped into one `commit(batch)` per batch window; `commit` returns only when
 * the batch is durable (or throws STORE_WRITE), and the manager acknowledges submissions
 * only after that. A store may instead offer `commitAsync` (the write runs elsewhere while
 * the manager goes on); acknowledgements then wait for its promise. Eventlogs are RFC 18 JSON Lines text; the jobspec is stored once per job.
 */
import type { JobId } from "../base/ids.js";

/**
 * One batch window's writes. The manager's own batches are TextBatch objects
 * (batch-text.ts), which keep their text as pieces for the SQLite writer thread and derive
 * these fields from them when a store reads them.
 */
export interface StoreBatch {
  /** Jobs first seen in this window: jobspec JSON, stored once. */
  newJobs: Array<{ id: JobId; jobspec: string }>;
  /** Eventlog lines to append, per job, in order (each line ends with "\n"). */
  appends: Map<JobId, string>;
  /**
   * Exec eventlog lines to append, per job (executor state, kept apart from the main
   * eventlog as Flux keeps it: the `exec` path). Only for jobs stored already.
   */
  execAppends?: Map<JobId, string>;
  /**
   * Jobs that became inactive in this window: their summary (JSON, src/manager/engine/summary.ts),
   * written with or after their last eventlog lines, so a summary is never ahead of them.
   */
  inactive?: Array<{ id: JobId; summary: string }>;
  /** Jobs purged from the inactive cache: removed from the store (summary included). */
  purged: JobId[];
}

/** A stored job as raw text; parsing (and deciding it is corrupt) is the manager's business. */
export interface StoredJobText {
  id: JobId;
  jobspec: string;
  eventlog: string;
  /** The job's exec eventlog text (executor state), if it has any. */
  exec?: string;
}

export interface JobStore {
  /** "sqlite" or "memory" (or a custom name). */
  readonly kind: string;
  /** The FLUID epoch (ms) of this store, fixed at creation so ids keep increasing. */
  epoch(): number;
  /** Writes one batch atomically; durable when it returns. Throws STORE_WRITE on failure. */
  commit(batch: StoreBatch): void;
  /**
   * Optional asynchronous commit (the SQLite store's writer thread): takes the batch at once
   * (`load` sees it from now on), resolves once it is durable, rejects with STORE_WRITE if
   * it cannot be. Batches become durable in the order they are handed over; after a failure
   * every later batch is refused. When present, the manager commits only through it.
   */
  commitAsync?(batch: StoreBatch): Promise<void>;
  /**
   * Optional, with `commitAsync`: how many batches handed over are not yet written, as the
   * writer counts them now (the manager holds the next batch back while this is too high:
   * batch.ts). Without it the manager counts batches whose promise has not yet settled.
   */
  backlog?(): number;
  /** Optional: resolves once the store can take commits (awaited at start); rejects STORE_OPEN. */
  ready?(): Promise<void>;
  /** Every stored job, in id order (restart replay). */
  loadAll(): Iterable<StoredJobText>;
  /**
   * Restart's fast path (optional: without these, restart replays `loadAll`): the summary of
   * every inactive job that has one, in id order, and every job that has none (active jobs,
   * inactive ones stored before summaries), in id order.
   */
  loadSummaries?(): Iterable<{ id: JobId; summary: string }>;
  loadUnsummarized?(): Iterable<StoredJobText>;
  /**
   * Lazy inactive jobs (optional; both shipped stores have them): with these, restart keeps
   * the jobs already inactive in a compact tier and reads their records on demand. A page of
   * summaries in id order after `after` (from the first if undefined), at most `limit`
   * rows; one job's summary; the highest stored job id.
   */
  summaryPage?(after: JobId | undefined, limit: number): Array<{ id: JobId; summary: string }>;
  summaryText?(id: JobId): string | undefined;
  lastJobId?(): JobId | undefined;
  /**
   * Optional: called by a clean shutdown once every batch is durable, with the lowest id of
   * a job still active (undefined: none) and how many jobs are inactive. The store may keep
   * them and its own counters, so the next open need not scan every job for the
   * unsummarized ones (sqlite.ts, meta), and can size its tier of stored inactive jobs.
   */
  markClean?(lowestActive: JobId | undefined, inactive?: number): void;
  /**
   * Optional: how many jobs were inactive at the last clean shutdown that recorded it
   * (markClean), or undefined. A size hint for the stored tier, never trusted as a count.
   */
  inactiveHint?(): number | undefined;
  /** One job, for on-demand reads of inactive jobs (eventlog, jobspec). */
  load(id: JobId): StoredJobText | undefined;
  /** Moves a corrupt job aside (Flux's job-lost+found), with the reason. */
  setAside(id: JobId, reason: string): void;
  /** Jobs set aside, for inspection. */
  lostAndFound(): Array<{ id: JobId; reason: string }>;
  /** Persistent per-plugin key/value state (values are JSON text). */
  pluginGet(plugin: string, key: string): string | undefined;
  pluginSet(plugin: string, key: string, value: string): void;
  pluginDelete(plugin: string, key: string): void;
  pluginKeys(plugin: string): string[];
  /** Flushes and releases the store (after the last asynchronous commit). Idempotent. */
  close(): void | Promise<void>;
}

/** An empty batch. */
export function emptyBatch(): StoreBatch {
  return { newJobs: [], appends: new Map(), execAppends: new Map(), inactive: [], purged: [] };
}

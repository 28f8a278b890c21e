/**
 * The statements that write one batch's rows (batch-text.ts) to the SQLite store: the same
 * code runs on the manager's thread (synchronous commits) and in the store's writer thread
 * (sqlite-worker.ts), so the two paths cannot drift apart.
 */
import type Database from "better-sqlite3";
import { readRows, type BatchRows, type RowsText } from "./batch-text.js";
import type { WireText } from "./wire-text.js";

/** Removes every row of a job (jobspec, eventlog chunks, exec eventlog chunks, summary). */
export type PurgeRow = (row: bigint) => void;

/**
 * Prepares the write statements on `db` and returns a function writing one batch in one
 * (IMMEDIATE) transaction: new jobs with their first chunk, later chunks, summaries, then
 * purges (a job may do all four in one window); a job's exec eventlog chunk goes
 * in with its eventlog chunk, in the same transaction. Throws SQLite's error as is.
 */
export function batchWriter(db: Database.Database): { write: (rows: BatchRows) => void; purgeRow: PurgeRow } {
  const insert = db.prepare("INSERT INTO jobs (id, jobspec, eventlog0) VALUES (?, ?, ?)");
  const append = db.prepare("INSERT INTO eventlog (id, batch, lines) VALUES (?, ?, ?)");
  const appendExec = db.prepare("INSERT INTO exec_eventlog (id, batch, lines) VALUES (?, ?, ?)");
  const summarize = db.prepare("INSERT OR REPLACE INTO inactive (id, summary) VALUES (?, ?)");
  const purge = db.prepare("DELETE FROM jobs WHERE id = ?");
  const purgeLog = db.prepare("DELETE FROM eventlog WHERE id = ?");
  const purgeSummary = db.prepare("DELETE FROM inactive WHERE id = ?");
  const purgeExec = db.prepare("DELETE FROM exec_eventlog WHERE id = ?");
  const purgeRow: PurgeRow = (row) => {
    purge.run(row);
    purgeLog.run(row);
    purgeSummary.run(row);
    purgeExec.run(row);
  };
  const txn = db.transaction((r: BatchRows, { jobspecs, eventlogs, execlogs, summaries }: RowsText) => {
    const isNew = new Uint8Array(r.slotIds.length);
    for (let k = 0; k < r.newSlots.length; k++) {
      const slot = r.newSlots[k]!;
      isNew[slot] = 1;
      insert.run(r.slotIds[slot], jobspecs[k], eventlogs[slot] ?? "");
    }
    for (let slot = 0; slot < r.slotIds.length; slot++) {
      const lines = eventlogs[slot];
      if (isNew[slot] === 0 && lines !== undefined) append.run(r.slotIds[slot], r.seq, lines);
      const exec = execlogs[slot];
      if (exec !== undefined) appendExec.run(r.slotIds[slot], r.seq, exec);
    }
    for (let k = 0; k < r.summaryIds.length; k++) summarize.run(r.summaryIds[k], summaries[k]);
    for (const row of r.purged) purgeRow(row);
  });
  // The rows are cut out of the batch's text before the write lock is taken.
  return { write: (rows) => txn.immediate(rows, readRows(rows)), purgeRow };
}

/** Each connection's page cache, in KiB (a negative cache_size). */
const PAGE_CACHE_KIB = -2000;

/** Opens the store's connection settings on `db` (both threads use the same ones). */
export function connectionPragmas(db: Database.Database, opts: { synchronous?: "full" | "normal"; maxPages?: number }): void {
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${opts.synchronous === "full" ? "FULL" : "NORMAL"}`);
  // A longer WAL between checkpoints: each checkpoint copies the trees' right-hand leaves once
  // for ten times as many batches, and syncs a tenth as often (docs/manager.md, the writer thread).
  db.pragma("wal_autocheckpoint = 10000");
  // SQLite's own default page cache (2 MB), not better-sqlite3's 16 MB: each of the two
  // connections filled its cache during a restart and kept it (1M + 50k jobs: ~30 MB of the
  // RSS). The OS caches the file anyway; writes and paged reads run as fast (bench restart,
  // throughput).
  db.pragma(`cache_size = ${PAGE_CACHE_KIB}`);
  if (opts.maxPages !== undefined) db.pragma(`max_page_count = ${opts.maxPages}`);
}

/**
 * Messages between the store and its writer thread. A commit's `rows.chunks` is empty: the
 * text travels as `text` (wire-text.ts), whose buffer comes back with the reply as `bytes`.
 */
export type ToWriter = { kind: "commit"; rows: BatchRows; text: WireText } | { kind: "close" };
export type FromWriter = { kind: "ready"; error?: string } | { kind: "done"; seq: number; error?: string; bytes?: ArrayBuffer };

/** What the writer thread is started with. */
export interface WriterData {
  path: string;
  /**
   * Batches the thread has finished (written, or refused after a failure), counted from its
   * start (wrapping at 2^32), over shared memory: the manager's thread reads the writer's
   * progress at once, without waiting for its replies to be processed.
   */
  finished?: Int32Array;
  synchronous?: "full" | "normal";
  maxPages?: number;
}

/**
 * One batch's rows as the SQLite store writes them, and the statements that write them: the
 * same code runs on the manager's thread (synchronous commits) and in the store's writer
 * thread (sqlite-worker.ts), so the two paths cannot drift apart.
 *
 * A `BatchRows` is plain arrays: ids are the signed 64-bit row values in BigInt64Arrays
 * (their buffers are transferred to the writer thread, not copied), text is strings. A
 * structured clone of the batch's Map with bigint keys would cost the manager's thread more
 * than the arrays do.
 */
import type Database from "better-sqlite3";
import type { JobId } from "../ids.js";
import type { StoreBatch } from "./types.js";

/** A batch ready to write: `seq` numbers its eventlog chunks (continues across restarts). */
export interface BatchRows {
  seq: number;
  /** New jobs: row id, jobspec, first eventlog chunk (stored in the job's row). */
  newIds: BigInt64Array;
  newJobspecs: string[];
  newLines: string[];
  /** Later eventlog chunks of jobs stored in earlier batches. */
  appendIds: BigInt64Array;
  appendLines: string[];
  /** Summaries of jobs that became inactive in this batch. */
  inactiveIds: BigInt64Array;
  summaries: string[];
  /** Jobs purged: every row of theirs removed. */
  purged: BigInt64Array;
}

/** Job ids are unsigned 64-bit; SQLite integers are signed: store the two's-complement. */
export const toRow = (id: JobId): bigint => BigInt.asIntN(64, id);
export const fromRow = (v: bigint): JobId => BigInt.asUintN(64, v) as JobId;

/** The rows of `b`, numbered `seq`. */
export function batchRows(b: StoreBatch, seq: number): BatchRows {
  const n = b.newJobs.length;
  const newIds = new BigInt64Array(n);
  const newJobspecs = new Array<string>(n);
  const newLines = new Array<string>(n);
  const first = n > 0 ? new Set<JobId>() : undefined;
  for (let i = 0; i < n; i++) {
    const j = b.newJobs[i]!;
    newIds[i] = toRow(j.id);
    newJobspecs[i] = j.jobspec;
    newLines[i] = b.appends.get(j.id) ?? "";
    first!.add(j.id);
  }
  const appendIds = new BigInt64Array(b.appends.size - (first ? countIn(first, b.appends) : 0));
  const appendLines = new Array<string>(appendIds.length);
  let k = 0;
  for (const [id, lines] of b.appends) {
    if (first?.has(id)) continue;
    appendIds[k] = toRow(id);
    appendLines[k++] = lines;
  }
  const inactive = b.inactive ?? [];
  return {
    seq,
    newIds,
    newJobspecs,
    newLines,
    appendIds,
    appendLines,
    inactiveIds: BigInt64Array.from(inactive, (j) => toRow(j.id)),
    summaries: inactive.map((j) => j.summary),
    purged: BigInt64Array.from(b.purged, toRow),
  };
}

function countIn(ids: Set<JobId>, appends: Map<JobId, string>): number {
  let c = 0;
  for (const id of ids) if (appends.has(id)) c++;
  return c;
}

/** The buffers of `rows` that can be transferred rather than copied. */
export function transferList(rows: BatchRows): ArrayBuffer[] {
  return [rows.newIds, rows.appendIds, rows.inactiveIds, rows.purged].map((a) => a.buffer as ArrayBuffer);
}

/** Removes every row of a job (jobspec, eventlog chunks, summary). */
export type PurgeRow = (row: bigint) => void;

/**
 * Prepares the write statements on `db` and returns a function writing one batch in one
 * (IMMEDIATE) transaction: new jobs with their first chunk, later chunks, summaries, then
 * purges (a job may do all four in one window). Throws SQLite's error as is.
 */
export function batchWriter(db: Database.Database): { write: (rows: BatchRows) => void; purgeRow: PurgeRow } {
  const insert = db.prepare("INSERT INTO jobs (id, jobspec, eventlog0) VALUES (?, ?, ?)");
  const append = db.prepare("INSERT INTO eventlog (id, batch, lines) VALUES (?, ?, ?)");
  const summarize = db.prepare("INSERT OR REPLACE INTO inactive (id, summary) VALUES (?, ?)");
  const purge = db.prepare("DELETE FROM jobs WHERE id = ?");
  const purgeLog = db.prepare("DELETE FROM eventlog WHERE id = ?");
  const purgeSummary = db.prepare("DELETE FROM inactive WHERE id = ?");
  const purgeRow: PurgeRow = (row) => {
    purge.run(row);
    purgeLog.run(row);
    purgeSummary.run(row);
  };
  const txn = db.transaction((r: BatchRows) => {
    for (let i = 0; i < r.newIds.length; i++) insert.run(r.newIds[i], r.newJobspecs[i], r.newLines[i]);
    for (let i = 0; i < r.appendIds.length; i++) append.run(r.appendIds[i], r.seq, r.appendLines[i]);
    for (let i = 0; i < r.inactiveIds.length; i++) summarize.run(r.inactiveIds[i], r.summaries[i]);
    for (const row of r.purged) purgeRow(row);
  });
  return { write: (rows) => txn.immediate(rows), purgeRow };
}

/** Opens the store's connection settings on `db` (both threads use the same ones). */
export function connectionPragmas(db: Database.Database, opts: { synchronous?: "full" | "normal"; maxPages?: number }): void {
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${opts.synchronous === "full" ? "FULL" : "NORMAL"}`);
  if (opts.maxPages !== undefined) db.pragma(`max_page_count = ${opts.maxPages}`);
}

/** Messages between the store and its writer thread. */
export type ToWriter = { kind: "commit"; rows: BatchRows } | { kind: "close" };
export type FromWriter = { kind: "ready"; error?: string } | { kind: "done"; seq: number; error?: string };

/** What the writer thread is started with. */
export interface WriterData {
  path: string;
  synchronous?: "full" | "normal";
  maxPages?: number;
}

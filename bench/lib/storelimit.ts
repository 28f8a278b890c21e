/**
 * The store limit: how fast better-sqlite3 alone writes the rows jobtap wrote for a run
 * (a module under bench/lib/, so bench/run.mjs does not offer it as a bench of its own).
 *
 * The rows are not modelled but copied: the schema and every row jobtap wrote for `jobs`
 * jobs (the `jobs` row, the `eventlog` chunk rows, the `inactive` summary row) are read back
 * from the run's own database, then written into a fresh file with the same pragmas the
 * store uses (WAL, the run's `synchronous`), one transaction per JOBS_PER_TXN jobs (each
 * job's rows together), with prepared statements.
 * Everything else jobtap does per job is absent, so jobs per second here is the ceiling the
 * manager's own throughput is compared with. A single pass lasts ~0.1 s and swings by 2× on a
 * shared machine: the fastest of PASSES passes (each into a fresh file) is reported.
 */
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Jobs per transaction when writing straight through. */
export const JOBS_PER_TXN = 500;

/** Passes over the rows; the fastest is the limit. */
const PASSES = 3;

interface JobRows {
  id: bigint;
  jobspec: string;
  eventlog0: string;
  chunks: Array<{ batch: number; lines: string }>;
  /** The inactive summary row ("" if the job had none). */
  summary: string;
}

export interface StoreLimit {
  store_limit_jobs_per_s: number;
  /** The fixed reference (fixedStoreLimit), measured in the same run. */
  fixed_store_limit_jobs_per_s: number;
  /** Eventlog chunk rows per job on top of the job's own row (how many batch windows it spanned). */
  store_chunks_per_job: number;
  store_bytes_per_job: number;
}

/** Reads `jobs` jobs' rows (the most recent ones) from the run's database `dbPath`. */
function readRows(dbPath: string, jobs: number): { schema: string[]; rows: JobRows[] } {
  const db = new Database(dbPath, { readonly: true });
  try {
    const schema = (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL").all() as Array<{ sql: string }>).map(
      (r) => r.sql,
    );
    const rows = (
      db.prepare("SELECT id, jobspec, eventlog0 FROM jobs ORDER BY id DESC LIMIT ?").safeIntegers(true).all(jobs) as Array<{
        id: bigint;
        jobspec: string;
        eventlog0: string;
      }>
    ).map((r) => ({ ...r, chunks: [] as JobRows["chunks"], summary: "" }));
    const chunks = db.prepare("SELECT batch, lines FROM eventlog WHERE id = ? ORDER BY batch").safeIntegers(false);
    const summary = db.prepare("SELECT summary FROM inactive WHERE id = ?").pluck();
    for (const r of rows) {
      r.chunks = chunks.all(r.id) as JobRows["chunks"];
      r.summary = (summary.get(r.id) as string | undefined) ?? "";
    }
    return { schema, rows: rows.reverse() };
  } finally {
    db.close();
  }
}

/** Writes the rows of `jobs` jobs of the run at `dbPath` straight through better-sqlite3 and times it. */
export function measureStoreLimit(dbPath: string, jobs: number, sync: "full" | "normal"): StoreLimit {
  const { schema, rows } = readRows(dbPath, jobs);
  if (rows.length === 0) throw new Error(`store limit: no jobs in ${dbPath}`);
  let best = 0;
  for (let i = 0; i < PASSES; i++) best = Math.max(best, writePass(schema, rows, sync));
  let chunks = 0;
  let bytes = 0;
  for (const r of rows) {
    chunks += r.chunks.length;
    bytes += r.jobspec.length + r.eventlog0.length + r.summary.length;
    for (const c of r.chunks) bytes += c.lines.length;
  }
  return {
    store_limit_jobs_per_s: Math.round(best),
    fixed_store_limit_jobs_per_s: fixedStoreLimit(jobs, sync),
    store_chunks_per_job: Math.round((chunks / rows.length) * 100) / 100,
    store_bytes_per_job: Math.round(bytes / rows.length),
  };
}

/** Writes every row into a fresh file; returns jobs per second. */
function writePass(schema: string[], rows: JobRows[], sync: "full" | "normal"): number {
  const dir = mkdtempSync(join(tmpdir(), "jobtap-bench-store-"));
  const db = new Database(join(dir, "limit.db"));
  try {
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${sync === "full" ? "FULL" : "NORMAL"}`);
    for (const sql of schema) db.exec(sql);
    const insert = db.prepare("INSERT INTO jobs (id, jobspec, eventlog0) VALUES (?, ?, ?)");
    const append = db.prepare("INSERT INTO eventlog (id, batch, lines) VALUES (?, ?, ?)");
    const summarize = db.prepare("INSERT INTO inactive (id, summary) VALUES (?, ?)");
    const txn = db.transaction((part: JobRows[]) => {
      for (const r of part) {
        insert.run(r.id, r.jobspec, r.eventlog0);
        for (const c of r.chunks) append.run(r.id, c.batch, c.lines);
        if (r.summary) summarize.run(r.id, r.summary);
      }
    });
    const t0 = performance.now();
    for (let i = 0; i < rows.length; i += JOBS_PER_TXN) txn(rows.slice(i, i + JOBS_PER_TXN));
    return rows.length / ((performance.now() - t0) / 1000);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The fixed reference's row sizes (issue 41): a 248-byte jobspec, a 102-byte first events row, a 645-byte chunk. */
const FIXED_JOBSPEC = 248;
const FIXED_FIRST = 102;
const FIXED_CHUNK = 645;

/**
 * A store limit that does not depend on jobtap's own layout, so a change of layout cannot
 * move the yardstick: `jobs` jobs of two rows each (a jobs row holding a 248-byte jobspec
 * and a 102-byte first events text, one 645-byte eventlog chunk row), WAL, the run's
 * `synchronous`, JOBS_PER_TXN jobs per transaction, prepared statements; fastest of PASSES.
 */
export function fixedStoreLimit(jobs: number, sync: "full" | "normal"): number {
  const text = (n: number, c: string) => c.repeat(n);
  const jobspec = text(FIXED_JOBSPEC, "j");
  const first = text(FIXED_FIRST, "e");
  const chunk = text(FIXED_CHUNK, "c");
  const base = 1n << 40n;
  const rows: JobRows[] = [];
  for (let i = 0; i < jobs; i++) rows.push({ id: base + BigInt(i) * 65536n, jobspec, eventlog0: first, chunks: [{ batch: 2 + Math.floor(i / JOBS_PER_TXN), lines: chunk }], summary: "" });
  const schema = [
    "CREATE TABLE jobs (id INTEGER PRIMARY KEY, jobspec TEXT NOT NULL, eventlog0 TEXT NOT NULL)",
    "CREATE TABLE eventlog (id INTEGER NOT NULL, batch INTEGER NOT NULL, lines TEXT NOT NULL, PRIMARY KEY (id, batch)) WITHOUT ROWID",
    "CREATE TABLE inactive (id INTEGER PRIMARY KEY, summary TEXT NOT NULL)",
  ];
  let best = 0;
  for (let i = 0; i < PASSES; i++) best = Math.max(best, writePass(schema, rows, sync));
  return Math.round(best);
}

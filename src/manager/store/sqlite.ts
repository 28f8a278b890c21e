/**
 * The SQLite job store (better-sqlite3, WAL). One transaction per batch window with
 * prepared statements. The jobspec is one row per job; the eventlog is JSON Lines text
 * written with the job's row for its first window, then appended as one chunk row per job
 * per later window (insert-only: cheaper than rewriting a growing row), keyed (job, batch
 * number) in a clustered WITHOUT ROWID table.
 *
 * Commits run in a writer thread by default (sqlite-thread.ts): the manager's thread hands a
 * batch over and goes on; the batch counts as durable when the writer says so. The manager's
 * connection stays for reads and the rare direct writes (plugin state, lost+found), which
 * wait on SQLite's busy timeout while the writer holds the lock.
 *
 * Durability: WAL with `synchronous=NORMAL` by default, as Flux's content-sqlite does with a
 * statedir: a committed batch survives the job manager being killed (the restart test
 * SIGKILLs it); `synchronous: "full"` also fsyncs every commit, surviving a machine crash at
 * the cost of one fsync per batch window.
 */
import Database from "better-sqlite3";
import { dirname } from "node:path";
import { ErrorCode, JobtapError } from "../../errors.js";
import { makeDirs } from "../base/fsutil.js";
import type { JobId } from "../base/ids.js";
import type { JobStore, StoreBatch, StoredJobText } from "./types.js";
import { WriterThread } from "./sqlite-thread.js";
import { fromRow, TextBatch, toRow, type BatchRows } from "./batch-text.js";
import { batchWriter, connectionPragmas, type PurgeRow } from "./sqlite-write.js";
import { checkVersion, openError, ownerOnly, STORE_SCHEMA_VERSION } from "./sqlite-open.js";

export interface SqliteStoreOptions {
  synchronous?: "full" | "normal";
  /** FLUID epoch to record if the file is new (default: now). */
  epochMs?: number;
  /**
   * A cap on the file, in SQLite pages of 4 KiB (PRAGMA max_page_count): past it a commit
   * fails as on a full disk. Tests use it to fill the store without filling a disk.
   */
  maxPages?: number;
  /**
   * Where batches are written: "worker" (default), a writer thread with its own connection,
   * so the manager's thread does not wait on SQLite; or "main", synchronously in `commit`.
   */
  commits?: "worker" | "main";
}

export { STORE_SCHEMA_VERSION } from "./sqlite-open.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, jobspec TEXT NOT NULL, eventlog0 TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS eventlog (id INTEGER NOT NULL, batch INTEGER NOT NULL, lines TEXT NOT NULL,
  PRIMARY KEY (id, batch)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS exec_eventlog (id INTEGER NOT NULL, batch INTEGER NOT NULL, lines TEXT NOT NULL,
  PRIMARY KEY (id, batch)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS inactive (id INTEGER PRIMARY KEY, summary TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS lost_found (id INTEGER PRIMARY KEY, reason TEXT NOT NULL,
  jobspec TEXT, eventlog TEXT);
CREATE TABLE IF NOT EXISTS plugin_kv (plugin TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (plugin, key));
`;

/** The concatenated eventlog chunks of a job, in insertion order (`andBatch`: a further
 *  condition on the chunks' batch numbers). */
const EVENTLOG_OF = (idExpr: string, andBatch = "") =>
  `jobs.eventlog0 || coalesce((SELECT group_concat(lines, '') FROM (SELECT lines FROM eventlog WHERE eventlog.id = ${idExpr}${andBatch} ORDER BY batch)), '')`;

/** The concatenated exec eventlog chunks of a job (NULL if it has none). */
const EXEC_OF = (idExpr: string, andBatch = "") =>
  `(SELECT group_concat(lines, '') FROM (SELECT lines FROM exec_eventlog WHERE exec_eventlog.id = ${idExpr}${andBatch} ORDER BY batch))`;

/** A JobStore in one SQLite file (WAL); each batch is one transaction. */
export class SqliteStore implements JobStore {
  readonly kind = "sqlite";
  private readonly db: Database.Database;
  private readonly epochMs: number;
  private closed = false;
  /** Number of the next batch: orders a job's eventlog chunks, continues across restarts. */
  private batchSeq = 1;
  /** Every job with a smaller stored id has a summary (meta `summary_floor`; the least int64: unknown, scan all). */
  private floor = -(2n ** 63n);
  /** A write failed since open: a summary may be missing, so no floor is written at close. */
  private writeFailed = false;
  /** What a clean shutdown gave `markClean` (the lowest active job, or null for none). */
  private cleanMark: JobId | null | undefined;
  /** The inactive jobs a clean shutdown counted: `markClean`'s, and meta's at open. */
  private cleanInactive: number | undefined;
  private openInactive: number | undefined;
  private readonly st: ReturnType<SqliteStore["prepare"]>;
  private readonly writeRows: (rows: BatchRows) => void;
  private readonly purgeRow: PurgeRow;
  private readonly thread: WriterThread | undefined;
  /**
   * Present when commits run in the writer thread: hands the batch over and resolves once
   * it is durable (see JobStore.commitAsync).
   */
  readonly commitAsync?: (batch: StoreBatch) => Promise<void>;
  /** With the writer thread: batches handed over and not yet written (JobStore.backlog). */
  readonly backlog?: () => number;

  /** Opens (creating if needed) the store at `path`. Throws STORE_OPEN naming the path. */
  constructor(
    readonly path: string,
    opts: SqliteStoreOptions = {},
  ) {
    let db: Database.Database | undefined;
    try {
      makeDirs(dirname(path));
      ownerOnly(path);
      db = new Database(path);
      // Read before anything is written: a newer layout is refused untouched.
      checkVersion(db, path);
      if (db.readonly) throw new Error("the file is read-only");
      connectionPragmas(db, opts);
      db.exec(SCHEMA);
      if (db.pragma("user_version", { simple: true }) !== STORE_SCHEMA_VERSION) db.pragma(`user_version = ${STORE_SCHEMA_VERSION}`);
      this.db = db;
      this.st = this.prepare();
      this.epochMs = this.initEpoch(opts.epochMs ?? Date.now());
      ({ write: this.writeRows, purgeRow: this.purgeRow } = batchWriter(db));
      this.batchSeq = this.readMarks();
      if (opts.commits !== "main" && path !== ":memory:" && path !== "") {
        this.thread = new WriterThread({ path, synchronous: opts.synchronous, maxPages: opts.maxPages });
        this.commitAsync = (batch) => this.handOver(batch);
        this.backlog = () => this.thread!.backlog();
      }
    } catch (e) {
      db?.close();
      throw openError(e, path);
    }
  }

  private prepare() {
    const db = this.db;
    return {
      summaries: db.prepare("SELECT id, summary FROM inactive ORDER BY id").safeIntegers(true),
      summaryFirst: db.prepare("SELECT id, summary FROM inactive ORDER BY id LIMIT ?").raw(true).safeIntegers(true),
      summaryAfter: db.prepare("SELECT id, summary FROM inactive WHERE id > ? ORDER BY id LIMIT ?").raw(true).safeIntegers(true),
      summaryOne: db.prepare("SELECT summary FROM inactive WHERE id = ?").pluck(true),
      lastId: db.prepare("SELECT max(id) FROM jobs").pluck(true).safeIntegers(true),
      unsummarized: db
        .prepare(`SELECT id, jobspec, ${EVENTLOG_OF("jobs.id")} AS eventlog, ${EXEC_OF("jobs.id")} AS exec FROM jobs WHERE id >= ? AND NOT EXISTS (SELECT 1 FROM inactive WHERE inactive.id = jobs.id) ORDER BY id`)
        .safeIntegers(true),
      all: db.prepare(`SELECT id, jobspec, ${EVENTLOG_OF("jobs.id")} AS eventlog, ${EXEC_OF("jobs.id")} AS exec FROM jobs ORDER BY id`).safeIntegers(true),
      one: db.prepare(`SELECT id, jobspec, ${EVENTLOG_OF("jobs.id")} AS eventlog, ${EXEC_OF("jobs.id")} AS exec FROM jobs WHERE id = ?`).safeIntegers(true),
      oneBefore: db.prepare(`SELECT id, jobspec, ${EVENTLOG_OF("jobs.id", " AND batch < ?")} AS eventlog, ${EXEC_OF("jobs.id", " AND batch < ?")} AS exec FROM jobs WHERE id = ?`).safeIntegers(true),
      aside: db.prepare(
        `INSERT OR REPLACE INTO lost_found (id, reason, jobspec, eventlog) SELECT id, ?, jobspec, ${EVENTLOG_OF("jobs.id")} FROM jobs WHERE id = ?`,
      ),
      lost: db.prepare("SELECT id, reason FROM lost_found ORDER BY id").safeIntegers(true),
      kvGet: db.prepare("SELECT value FROM plugin_kv WHERE plugin = ? AND key = ?"),
      kvSet: db.prepare("INSERT OR REPLACE INTO plugin_kv (plugin, key, value) VALUES (?, ?, ?)"),
      kvDel: db.prepare("DELETE FROM plugin_kv WHERE plugin = ? AND key = ?"),
      kvKeys: db.prepare("SELECT key FROM plugin_kv WHERE plugin = ? ORDER BY key"),
    };
  }

  private initEpoch(fallback: number): number {
    const row = this.db.prepare("SELECT value FROM meta WHERE key = 'fluid_epoch'").get() as
      | { value: string }
      | undefined;
    if (row) return Number(row.value);
    this.guard(() =>
      this.db.prepare("INSERT INTO meta (key, value) VALUES ('fluid_epoch', ?)").run(String(fallback)),
    );
    return fallback;
  }

  /**
   * The next batch number and the summary floor from `meta`. `batch_seq` is only right after
   * a clean shutdown: it is deleted here, before any batch, so after a crash the next open
   * finds it missing and takes the highest stored batch instead (a scan of the eventlog).
   * The floor stays right across crashes: jobs below it keep their summaries until purged.
   */
  private readMarks(): number {
    const get = this.db.prepare("SELECT value FROM meta WHERE key = ?").pluck(true);
    const floor = get.get("summary_floor") as string | undefined;
    if (floor !== undefined && /^-?[0-9]+$/.test(floor)) this.floor = BigInt(floor);
    // Kept across crashes (a hint: the next clean shutdown writes it again).
    const inactive = get.get("inactive_count") as string | undefined;
    if (inactive !== undefined && /^[0-9]{1,10}$/.test(inactive)) this.openInactive = Number(inactive);
    const seq = get.get("batch_seq") as string | undefined;
    if (seq !== undefined && /^[0-9]+$/.test(seq)) {
      this.db.prepare("DELETE FROM meta WHERE key = 'batch_seq'").run();
      return Number(seq);
    }
    const last = this.db.prepare("SELECT max(batch) AS b FROM eventlog").get() as { b: number | null };
    return (last.b ?? 0) + 1;
  }

  /** Keeps a clean shutdown's mark, written by `close` once the writer thread has ended. */
  markClean(lowestActive: JobId | undefined, inactive?: number): void {
    this.cleanMark = lowestActive ?? null;
    this.cleanInactive = inactive;
  }

  inactiveHint(): number | undefined {
    return this.openInactive;
  }

  /** Writes `batch_seq` and (with no failed write since open) `summary_floor`; best effort. */
  private writeMarks(): void {
    if (this.cleanMark === undefined) return;
    try {
      let floor: bigint | undefined;
      if (!this.writeFailed) floor = this.cleanMark === null ? ((this.st.lastId.get() as bigint | null) ?? -1n) + 1n : toRow(this.cleanMark);
      const set = this.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
      this.db.transaction(() => {
        set.run("batch_seq", String(this.batchSeq));
        if (floor !== undefined && floor > this.floor) set.run("summary_floor", String(floor));
        if (this.cleanInactive !== undefined) set.run("inactive_count", String(this.cleanInactive));
      })();
    } catch {
      // Not written: the next open scans, as after a crash.
    }
  }

  epoch(): number {
    return this.epochMs;
  }

  /**
   * Writes one batch on this thread (batchWriter's order: new jobs with their first
   * eventlog chunk, later chunks, summaries, purges). With a writer thread, only for when
   * nothing is in flight (restart writes summaries before any batch).
   */
  commit(batch: StoreBatch): void {
    try {
      this.guard(() => this.writeRows(TextBatch.of(batch).rows(this.batchSeq++)));
    } catch (e) {
      this.writeFailed = true;
      throw e;
    }
  }

  /** Resolves once the writer thread is up (rejects STORE_OPEN if it cannot open the file). */
  ready(): Promise<void> {
    return this.thread?.ready ?? Promise.resolve();
  }

  private handOver(batch: StoreBatch): Promise<void> {
    if (this.closed) return Promise.reject(new JobtapError(ErrorCode.STORE_WRITE, `job store ${this.path} is closed`));
    const text = TextBatch.of(batch);
    return this.thread!.commit(text, text.rows(this.batchSeq++)).catch((e: unknown) => {
      this.writeFailed = true;
      throw e;
    });
  }

  loadAll(): Iterable<StoredJobText> {
    return this.texts(this.st.all);
  }

  *loadSummaries(): Iterable<{ id: JobId; summary: string }> {
    try {
      for (const r of this.st.summaries.iterate() as Iterable<{ id: bigint; summary: string }>) yield { id: fromRow(r.id), summary: r.summary };
    } catch (e) {
      throw openError(e, this.path);
    }
  }

  /** A page of summaries in id order (a statement run to its end: the connection is free between pages). */
  summaryPage(after: JobId | undefined, limit: number): Array<{ id: JobId; summary: string }> {
    try {
      const rows = (after === undefined ? this.st.summaryFirst.all(limit) : this.st.summaryAfter.all(toRow(after), limit)) as Array<[bigint, string]>;
      const out = new Array<{ id: JobId; summary: string }>(rows.length);
      for (let i = 0; i < rows.length; i++) out[i] = { id: fromRow(rows[i]![0]), summary: rows[i]![1] };
      return out;
    } catch (e) {
      throw openError(e, this.path);
    }
  }

  /** One inactive job's summary as the file holds it. */
  summaryText(id: JobId): string | undefined {
    return this.st.summaryOne.get(toRow(id)) as string | undefined;
  }

  lastJobId(): JobId | undefined {
    const v = this.st.lastId.get() as bigint | null;
    return v === null ? undefined : fromRow(v);
  }

  /** Jobs without a summary, from the floor on (every job below it has one). */
  loadUnsummarized(): Iterable<StoredJobText> {
    return this.texts(this.st.unsummarized, this.floor);
  }

  private *texts(query: Database.Statement, ...params: unknown[]): Iterable<StoredJobText> {
    try {
      for (const r of query.iterate(...params) as Iterable<Row>) {
        yield rowText(r);
      }
    } catch (e) {
      throw openError(e, this.path);
    }
  }

  /** One job, including what in-flight batches add to it (readers never see a gap). */
  load(id: JobId): StoredJobText | undefined {
    return this.thread ? this.thread.view(id, (before) => this.loadRow(id, before)) : this.loadRow(id);
  }

  /** One job as the file holds it; with `beforeSeq`, without chunks of that batch or later. */
  private loadRow(id: JobId, beforeSeq?: number): StoredJobText | undefined {
    const r = (beforeSeq === undefined ? this.st.one.get(toRow(id)) : this.st.oneBefore.get(beforeSeq, beforeSeq, toRow(id))) as
      | Row
      | undefined;
    return r && rowText(r);
  }

  setAside(id: JobId, reason: string): void {
    this.guard(() =>
      this.db
        .transaction(() => {
          this.st.aside.run(reason, toRow(id));
          this.purgeRow(toRow(id));
        })
        .immediate(),
    );
  }

  lostAndFound(): Array<{ id: JobId; reason: string }> {
    return (this.st.lost.all() as Array<{ id: bigint; reason: string }>).map((r) => ({
      id: fromRow(r.id),
      reason: r.reason,
    }));
  }

  pluginGet(plugin: string, key: string): string | undefined {
    return (this.st.kvGet.get(plugin, key) as { value: string } | undefined)?.value;
  }

  pluginSet(plugin: string, key: string, value: string): void {
    this.guard(() => this.st.kvSet.run(plugin, key, value));
  }

  pluginDelete(plugin: string, key: string): void {
    this.guard(() => this.st.kvDel.run(plugin, key));
  }

  pluginKeys(plugin: string): string[] {
    return (this.st.kvKeys.all(plugin) as Array<{ key: string }>).map((r) => r.key);
  }

  /** Waits for the writer thread's last batch and ends the thread, then closes the file. */
  close(): void | Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.thread) {
      this.writeMarks();
      this.db.close();
      return;
    }
    return this.thread.close().finally(() => {
      this.writeMarks();
      this.db.close();
    });
  }

  /** Runs a write; any SQLite failure becomes STORE_WRITE naming the file. */
  private guard<T>(fn: () => T): T {
    if (this.closed) throw new JobtapError(ErrorCode.STORE_WRITE, `job store ${this.path} is closed`);
    try {
      return fn();
    } catch (e) {
      throw new JobtapError(ErrorCode.STORE_WRITE, `cannot write job store ${this.path}: ${(e as Error).message}`, {
        path: this.path,
      });
    }
  }
}

/** A job's row as the load queries return it. */
type Row = { id: bigint; jobspec: string; eventlog: string; exec: string | null };

/** A stored job from its row (no `exec` key for a job without exec eventlog). */
function rowText(r: Row): StoredJobText {
  return r.exec === null ? { id: fromRow(r.id), jobspec: r.jobspec, eventlog: r.eventlog } : { id: fromRow(r.id), jobspec: r.jobspec, eventlog: r.eventlog, exec: r.exec };
}

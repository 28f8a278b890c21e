/**
 * The SQLite store's writer thread (issue 22): batches are written by a worker thread with
 * its own connection while the manager goes on. An acknowledgement still means the job is in
 * the file; chunks are numbered in order, across restarts; readers see batches in flight
 * exactly once; a failed or dead writer stops the manager with STORE_WRITE naming the file;
 * close writes the last batch; direct writes on the manager's connection wait their turn.
 * (The SIGKILL restart test in restart.test.ts runs on the writer thread too: it is the default.)
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { EARLY_COMMIT_JOBS } from "../../src/manager/engine/batch.js";
import { createJobManager } from "../../src/manager/manager.js";
import { SqliteStore } from "../../src/manager/store/sqlite.js";
import { emptyBatch, type StoreBatch } from "../../src/manager/store/types.js";
import { simManager, submitNow, tempDir, testJob } from "./helpers.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function statedir(): string {
  const { dir, cleanup } = tempDir("jobtap-thread-");
  cleanups.push(cleanup);
  return dir;
}

/** A third connection to the file, as another process would see it. */
function reader(dir: string): Database.Database {
  const db = new Database(join(dir, "jobtap.db"), { readonly: true });
  db.defaultSafeIntegers(true);
  cleanups.push(() => db.close());
  return db;
}

const row = (id: JobId) => BigInt.asIntN(64, id);
const line = (name: string, t: number) => `{"timestamp":${t},"name":"${name}"}\n`;
const newJob = (b: StoreBatch, id: JobId, lines: string) => {
  b.newJobs.push({ id, jobspec: "{}" });
  b.appends.set(id, lines);
  return b;
};

/** Blocks this thread until `done()` (the writer thread works meanwhile). */
function spinUntil(done: () => boolean): void {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < 5000 && !done(); i++) Atomics.wait(cell, 0, 0, 1);
  expect(done()).toBe(true);
}

describe("the SQLite store's writer thread", () => {
  it("a job is acknowledged, and goes on to validate, only once its row is in the file", async () => {
    const dir = statedir();
    const mgr = await createJobManager({ statedir: dir, resources: { cores: 1 }, batchWindowMs: 1, log: () => undefined });
    cleanups.push(() => mgr.close());
    const has = reader(dir).prepare("SELECT count(*) AS n FROM jobs WHERE id = ?").pluck();
    const missing: JobId[] = [];
    mgr.on("event", (j) => {
      if (j.entry.name === "validate" && has.get(row(j.id)) !== 1n) missing.push(j.id);
    });
    const acks = Array.from({ length: 600 }, () =>
      mgr.submit(testJob(0), { urgency: 0 }).then((id) => {
        if (has.get(row(id)) !== 1n) missing.push(id);
        return id;
      }),
    );
    expect(new Set(await Promise.all(acks)).size).toBe(600);
    expect(missing).toEqual([]);
  });

  it("eventlog chunks are numbered in batch order, and the numbering goes on after a restart", async () => {
    const dir = statedir();
    const a = await simManager({ statedir: dir, store: "sqlite" });
    a.mgr.pauseScheduling(); // the job stays pending while its urgency changes
    const id = await submitNow(a, testJob(0));
    for (let u = 1; u <= 12; u++) {
      a.mgr.setUrgency(id, u);
      await a.clock.advance(10);
    }
    const expected = a.mgr.eventlog(id).map((e) => e.name);
    await a.mgr.close();
    const file = reader(dir);
    const chunks = file.prepare("SELECT batch, lines FROM eventlog WHERE id = ? ORDER BY batch").all(row(id)) as Array<{ batch: bigint; lines: string }>;
    expect(chunks.length).toBeGreaterThanOrEqual(12);
    // Read in batch-number order, the chunks are the events in the order they happened.
    const stamps = chunks.flatMap((c) => c.lines.trim().split("\n").map((l) => (JSON.parse(l) as { timestamp: number }).timestamp));
    expect(stamps).toEqual([...stamps].sort((x, y) => x - y));
    expect(new Set(stamps).size).toBeGreaterThanOrEqual(12);
    const last = Number(chunks.at(-1)!.batch);

    const b = await simManager({ statedir: dir, store: "sqlite" });
    b.mgr.pauseScheduling();
    expect(b.mgr.eventlog(id).map((e) => e.name).slice(0, expected.length)).toEqual(expected);
    b.mgr.setUrgency(id, 20);
    await b.clock.advance(10);
    await b.mgr.close();
    const after = (file.prepare("SELECT batch FROM eventlog WHERE id = ? ORDER BY batch").all(row(id)) as Array<{ batch: bigint }>).map((r) => Number(r.batch));
    expect(after.length).toBeGreaterThan(chunks.length);
    expect(after.filter((n) => n > last).length).toBe(after.length - chunks.length);
  });

  it("a burst of submissions is handed over every EARLY_COMMIT_JOBS jobs, before its window ends", async () => {
    const dir = statedir();
    const s = await simManager({ statedir: dir, store: "sqlite" });
    const n = 2 * EARLY_COMMIT_JOBS + 100;
    let acked = 0;
    const acks = Array.from({ length: n }, () => s.mgr.submit(testJob(0), { urgency: 0 }).then((id) => (acked++, id)));
    await s.clock.advance(0); // no simulated time passes: only the early batches are written
    expect(acked).toBe(2 * EARLY_COMMIT_JOBS);
    await s.clock.advance(10);
    expect(acked).toBe(n);
    const ids = await Promise.all(acks);
    await s.mgr.close();
    expect(reader(dir).prepare("SELECT count(*) FROM jobs").pluck().get()).toBe(BigInt(ids.length));
  });

  it("a reader sees a batch in flight exactly once, before and after the writer has written it", async () => {
    const dir = statedir();
    const store = new SqliteStore(join(dir, "jobtap.db"));
    cleanups.push(() => store.close());
    await store.ready();
    const old = 1000n as JobId;
    await store.commitAsync!(newJob(emptyBatch(), old, line("submit", 1)));
    const fresh = 1001n as JobId;
    const b = newJob(emptyBatch(), fresh, line("submit", 2));
    b.appends.set(old, line("validate", 3));
    const file = reader(dir);
    const written = file.prepare("SELECT count(*) FROM jobs WHERE id = ?").pluck();
    const done = store.commitAsync!(b);
    // In flight, and perhaps not yet written.
    expect(store.load(fresh)).toEqual({ id: fresh, jobspec: "{}", eventlog: line("submit", 2) });
    expect(store.load(old)?.eventlog).toBe(line("submit", 1) + line("validate", 3));
    // Written by the writer, its reply not yet read (this thread has not yielded).
    spinUntil(() => written.get(row(fresh)) === 1n);
    expect(store.load(fresh)?.eventlog).toBe(line("submit", 2));
    expect(store.load(old)?.eventlog).toBe(line("submit", 1) + line("validate", 3));
    // A purge in flight hides the job at once.
    const purge = emptyBatch();
    purge.purged.push(old);
    const purged = store.commitAsync!(purge);
    expect(store.load(old)).toBeUndefined();
    await Promise.all([done, purged]);
    expect(store.load(fresh)?.eventlog).toBe(line("submit", 2));
    expect(store.load(old)).toBeUndefined();
  });

  it("close writes the last batch and acknowledges it", async () => {
    const dir = statedir();
    const s = await simManager({ statedir: dir, store: "sqlite" });
    const acks = Array.from({ length: 50 }, () => s.mgr.submit(testJob(0), { urgency: 0 }));
    await s.mgr.close(); // the batch window has not passed on the simulated clock
    const ids = await Promise.all(acks);
    const file = reader(dir);
    const stored = (file.prepare("SELECT id FROM jobs ORDER BY id").pluck().all() as bigint[]).map((v) => BigInt.asUintN(64, v));
    expect(stored).toEqual([...ids].sort((x, y) => (x < y ? -1 : 1)));
  });

  it("a commit the writer cannot make stops the manager with STORE_WRITE naming the file; nothing after it is written", async () => {
    const dir = statedir();
    const path = join(dir, "jobtap.db");
    const store = new SqliteStore(path, { maxPages: 12 });
    const s = await simManager({ statedir: dir, store });
    const acked: JobId[] = [];
    let failure: unknown;
    for (let i = 0; i < 500 && failure === undefined; i++) {
      try {
        acked.push(await submitNow(s, testJob(60, { note: "z".repeat(2000) }), { urgency: 0 }));
      } catch (e) {
        failure = e;
      }
    }
    expect(failure).toMatchObject({ code: ErrorCode.STORE_WRITE, message: expect.stringMatching(new RegExp(`^cannot write job store ${path}: database or disk is full`)) });
    expect(() => s.mgr.jobs({})).not.toThrow(); // reads go on
    await expect(s.mgr.submit(testJob(0))).rejects.toMatchObject({ code: ErrorCode.STORE_WRITE });
    // A small batch that would fit is refused by the writer too: no eventlog with a hole.
    await expect(store.commitAsync!(newJob(emptyBatch(), 7n as JobId, line("submit", 1)))).rejects.toMatchObject({ code: ErrorCode.STORE_WRITE });
    await s.mgr.close();
    const stored = (reader(dir).prepare("SELECT id FROM jobs").pluck().all() as bigint[]).map((v) => BigInt.asUintN(64, v));
    expect(stored.sort()).toEqual([...acked].sort());
  });

  it("batches already handed over after the one that failed are refused by the writer, not written", async () => {
    const dir = statedir();
    const store = new SqliteStore(join(dir, "jobtap.db"), { maxPages: 12 });
    cleanups.push(() => store.close());
    await store.ready();
    const big = emptyBatch();
    for (let i = 1; i <= 40; i++) newJob(big, BigInt(i) as JobId, line("submit", i).repeat(100));
    const small = newJob(emptyBatch(), 100n as JobId, line("submit", 100));
    const results = await Promise.allSettled([store.commitAsync!(big), store.commitAsync!(small)]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(reader(dir).prepare("SELECT count(*) FROM jobs").pluck().get()).toBe(0n);
  });

  it("a writer thread that dies fails its batches with STORE_WRITE; the manager stays up and refuses work", async () => {
    const dir = statedir();
    const path = join(dir, "jobtap.db");
    const store = new SqliteStore(path);
    const s = await simManager({ statedir: dir, store });
    await submitNow(s, testJob(60), { urgency: 0 });
    const worker = (store as unknown as { thread: { worker: { terminate(): Promise<number> } } }).thread.worker;
    await worker.terminate();
    await expect(submitNow(s, testJob(0))).rejects.toMatchObject({
      code: ErrorCode.STORE_WRITE,
      message: expect.stringContaining(`cannot write job store ${path}: its writer thread`),
    });
    expect(s.logs.some((l) => l.includes("job store commit failed, job manager stopped"))).toBe(true);
    await s.mgr.close();
  });

  it("plugin state written on the manager's connection waits for the writer's transactions, never fails busy", async () => {
    const dir = statedir();
    const store = new SqliteStore(join(dir, "jobtap.db"));
    cleanups.push(() => store.close());
    await store.ready();
    const commits: Array<Promise<void>> = [];
    for (let i = 0; i < 300; i++) {
      const b = emptyBatch();
      for (let j = 0; j < 50; j++) newJob(b, BigInt(i * 50 + j + 1) as JobId, line("submit", i).repeat(20));
      commits.push(store.commitAsync!(b));
      store.pluginSet("p", `k${i}`, JSON.stringify(i)); // while batches are being written
      if (i % 10 === 0) await new Promise((r) => setImmediate(r));
    }
    await Promise.all(commits);
    expect(store.pluginKeys("p")).toHaveLength(300);
    expect(reader(dir).prepare("SELECT count(*) FROM jobs").pluck().get()).toBe(15000n);
  });
});

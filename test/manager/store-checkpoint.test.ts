/**
 * The store's WAL is checkpointed every 10,000 pages, not SQLite's default 1,000
 * (docs/manager.md, the writer thread): the WAL file, which SQLite reuses from its start
 * after a checkpoint without shrinking it, grows past the default's size while jobs are
 * written, every job stays readable, and a clean close leaves no WAL behind. Each
 * connection's page cache is SQLite's own 2 MB (a restart of a million jobs filled two
 * caches of better-sqlite3's 16 MB and kept them).
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJobManager } from "../../src/manager/manager.js";
import { SqliteStore } from "../../src/manager/store/sqlite.js";
import { tempDir, testJob } from "./helpers.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const PAGE = 4096;
const DEFAULT_CHECKPOINT_PAGES = 1000;

describe("the store's WAL checkpoints", () => {
  it("grows the WAL past SQLite's default checkpoint size, and a clean close removes it", async () => {
    const { dir, cleanup } = tempDir("jobtap-ckpt-");
    cleanups.push(cleanup);
    const mgr = await createJobManager({ statedir: dir, store: "sqlite" });
    cleanups.push(() => mgr.close());
    const wal = join(dir, "jobtap.db-wal");
    let ids: bigint[] = [];
    // Rounds of jobs run to the end, each round many batches, until the WAL passes 1.5x
    // the default's mark (bounded: the test fails rather than loops).
    for (let round = 0; round < 20 && statSync(wal).size <= 1.5 * DEFAULT_CHECKPOINT_PAGES * PAGE; round++) {
      const batch = await Promise.all(Array.from({ length: 500 }, () => mgr.submit(testJob())));
      await Promise.all(batch.map((id) => mgr.wait(id)));
      ids = ids.concat(batch);
    }
    expect(statSync(wal).size).toBeGreaterThan(1.5 * DEFAULT_CHECKPOINT_PAGES * PAGE);
    expect(mgr.eventlog(ids[0]! as never).map((e) => e.name)).toContain("clean");
    await mgr.close();
    expect(existsSync(wal)).toBe(false);
  }, 60_000);

  it("keeps SQLite's own 2 MB page cache per connection, not better-sqlite3's 16 MB", () => {
    const { dir, cleanup } = tempDir("jobtap-cache-");
    cleanups.push(cleanup);
    const store = new SqliteStore(join(dir, "jobtap.db"), { commits: "main" });
    cleanups.push(() => store.close());
    const db = (store as unknown as { db: { pragma(s: string, o: { simple: true }): unknown } }).db;
    expect(db.pragma("cache_size", { simple: true })).toBe(-2000);
  });
});

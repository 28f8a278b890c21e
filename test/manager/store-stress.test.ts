/**
 * The job store under stress (issue 21): a damaged, truncated or newer-layout file is
 * refused at start with a clear code and left as it was; a store that fills up while
 * running stops the manager taking work, and every job acknowledged before is still there.
 */
import { createHash } from "node:crypto";
import { readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { SqliteStore, STORE_SCHEMA_VERSION } from "../../src/manager/store/sqlite.js";
import { simManager, submitNow, tempDir, testJob } from "./helpers.js";

const digest = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

/** A statedir holding a store with `n` held jobs, closed cleanly. */
async function storeWith(dir: string, n: number): Promise<JobId[]> {
  const s = await simManager({ statedir: dir, store: "sqlite" });
  const ids: JobId[] = [];
  for (let i = 0; i < n; i++) ids.push(await submitNow(s, testJob(60, { note: "x".repeat(200) }), { urgency: 0 }));
  await s.mgr.close();
  return ids;
}

describe("the job store under stress", () => {
  it("a store written by a newer version is refused at start, untouched", async () => {
    const { dir, cleanup } = tempDir();
    try {
      await storeWith(dir, 3);
      const db = join(dir, "jobtap.db");
      const raw = new Database(db);
      expect(raw.pragma("user_version", { simple: true })).toBe(STORE_SCHEMA_VERSION);
      raw.pragma(`user_version = ${STORE_SCHEMA_VERSION + 1}`);
      raw.close();
      const before = digest(db);
      await expect(simManager({ statedir: dir, store: "sqlite" })).rejects.toMatchObject({
        code: ErrorCode.STORE_OPEN,
        message: `job store ${db} was written by a newer jobtap (store layout ${STORE_SCHEMA_VERSION + 1}; this version reads up to ${STORE_SCHEMA_VERSION}): refusing to open it; run the newer version, or move the file away to start empty`,
      });
      expect(digest(db)).toBe(before);
    } finally {
      cleanup();
    }
  });

  it("a file that is not a database is STORE_CORRUPT, untouched", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const db = join(dir, "jobtap.db");
      writeFileSync(db, Buffer.alloc(16384, 0x5a), { mode: 0o600 });
      const before = digest(db);
      await expect(simManager({ statedir: dir, store: "sqlite" })).rejects.toMatchObject({
        code: ErrorCode.STORE_CORRUPT,
        message: expect.stringMatching(new RegExp(`^job store ${db} is damaged \\(.+\\): refusing to start on it`)),
      });
      expect(digest(db)).toBe(before);
    } finally {
      cleanup();
    }
  });

  it("a truncated store is STORE_CORRUPT at start, not a partial queue", async () => {
    const { dir, cleanup } = tempDir();
    try {
      await storeWith(dir, 200);
      const db = join(dir, "jobtap.db");
      truncateSync(db, Math.floor(statSync(db).size / 2 / 4096) * 4096);
      await expect(simManager({ statedir: dir, store: "sqlite" })).rejects.toMatchObject({ code: ErrorCode.STORE_CORRUPT });
    } finally {
      cleanup();
    }
  });

  it("a store that fills up stops the manager taking work; every acknowledged job survives", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "jobtap.db");
      const s = await simManager({ statedir: dir, store: new SqliteStore(path, { maxPages: 24 }) });
      const acked: JobId[] = [];
      let failure: unknown;
      for (let i = 0; i < 2000 && failure === undefined; i++) {
        try {
          acked.push(await submitNow(s, testJob(60, { note: "y".repeat(500) }), { urgency: 0 }));
        } catch (e) {
          failure = e;
        }
      }
      expect(failure).toMatchObject({ code: ErrorCode.STORE_WRITE, message: expect.stringContaining(`cannot write job store ${path}`) });
      expect(acked.length).toBeGreaterThan(5);
      // Stopped: nothing more is taken, even a job that would fit.
      await expect(submitNow(s, testJob(0), { urgency: 0 })).rejects.toMatchObject({ code: ErrorCode.STORE_WRITE });
      expect(s.logs.some((l) => l.includes("job store commit failed, job manager stopped"))).toBe(true);
      await s.mgr.close().catch(() => undefined);
      // Room again (the cap lifted): every acknowledged job is there, no other.
      const b = await simManager({ statedir: dir, store: "sqlite" });
      expect(b.mgr.jobs({}).map((j) => j.id).sort()).toEqual([...acked].sort());
      await b.mgr.close();
    } finally {
      cleanup();
    }
  });
});

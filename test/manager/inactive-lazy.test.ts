/**
 * A million inactive jobs (issue 41): jobs already inactive when the manager opens its store
 * sit in the stored tier (src/manager/engine/inactive-stored.ts), id, user and clean time
 * only; everything else about them is read from the store when asked. These tests reopen a
 * real SQLite store and ask for jobs nothing has read since the restart.
 */
import Database from "better-sqlite3";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import { simManager, submitNow, tempDir, testJob } from "./helpers.js";

/** `between` runs on the closed store before the reopen. */
async function fillAndReopen(dir: string, n: number, between?: () => void) {
  const a = await simManager({ statedir: dir, store: "sqlite", resources: { cores: 4 } });
  const ids: JobId[] = [];
  for (let i = 0; i < n; i++) {
    const spec = { ...testJob(0, { wait_status: i % 3 === 0 ? 256 : 0 }), attributes: { system: { duration: 0, job: { name: `job${i}` }, exec: { test: { run_duration: "0s", wait_status: i % 3 === 0 ? 256 : 0 } } } } };
    ids.push(await submitNow(a, spec, { userid: 1000 + (i % 2) }));
  }
  await a.clock.advance(1000);
  const before = new Map(ids.map((id) => [id, { info: a.mgr.job(id), eventlog: a.mgr.eventlog(id), jobspec: a.mgr.jobspec(id) }]));
  const listed = a.mgr.jobs({ states: ["INACTIVE"] }).map((j) => j.id);
  await a.mgr.close();
  between?.();
  const b = await simManager({ statedir: dir, store: "sqlite", resources: { cores: 4 }, clock: a.clock });
  return { ids, before, listed, b };
}

describe("inactive jobs read on demand after a restart", () => {
  it("a job not read since the restart gives its record, eventlog and jobspec; counts and listings are complete", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const { ids, before, listed, b } = await fillAndReopen(dir, 40);
      // The oldest first, then the rest: each is its first read since the restart.
      for (const id of ids) {
        expect(b.mgr.job(id)).toEqual(before.get(id)!.info);
        expect(b.mgr.eventlog(id)).toEqual(before.get(id)!.eventlog);
        expect(b.mgr.jobspec(id)).toEqual(before.get(id)!.jobspec);
      }
      expect(b.mgr.jobs({ states: ["INACTIVE"] }).map((j) => j.id)).toEqual(listed);
      expect(b.mgr.jobCount()).toBe(ids.length);
      expect(b.mgr.jobs({ states: ["INACTIVE"], userid: 1001 }).map((j) => j.id)).toEqual(listed.filter((id) => before.get(id)!.info.userid === 1001));
      // A listing's lazy order (most recently cleaned first), stopped early or read whole.
      const newest = [...b.mgr.inactiveNewest()].map((j) => j.id);
      expect([...newest].sort()).toEqual([...listed].sort());
      const cleaned = newest.map((id) => before.get(id)!.info.t_clean ?? 0);
      expect(cleaned).toEqual([...cleaned].sort((x, y) => y - x));
      expect([...b.mgr.inactiveNewest(1001)].map((j) => j.id)).toEqual(newest.filter((id) => before.get(id)!.info.userid === 1001));
      expect((await b.mgr.wait(ids[0]!)).result).toBe("FAILED");
      await b.mgr.close();
    } finally {
      cleanup();
    }
  });

  it("more stored jobs than one page of the restart pass, damaged summaries on both sides of a page's end, are all back", async () => {
    const { dir, cleanup } = tempDir();
    try {
      // The pass reads 256 summaries a page (restart.ts SUMMARY_PAGE); a damaged one is
      // replayed in full and merged back in id order.
      const damaged = [0, 254, 255, 256, 257, 299];
      const { ids, before, listed, b } = await fillAndReopen(dir, 300, () => {
        const db = new Database(join(dir, "jobtap.db"));
        const rows = db.prepare("SELECT id FROM inactive ORDER BY id").pluck().safeIntegers(true).all() as bigint[];
        expect(rows.length).toBe(300);
        const bad = db.prepare("UPDATE inactive SET summary = 'not json' WHERE id = ?");
        for (const k of damaged) bad.run(rows[k]!);
        db.close();
      });
      expect(b.mgr.jobCount()).toBe(ids.length);
      expect(b.mgr.jobs({ states: ["INACTIVE"] }).map((j) => j.id)).toEqual(listed);
      for (const k of [...damaged, 1, 128, 253, 258, 298]) expect(b.mgr.job(ids[k]!)).toEqual(before.get(ids[k]!)!.info);
      expect(b.mgr.purgeJobs({ numLimit: ids.length - 2, force: true })).toEqual(ids.slice(0, 2));
      await b.mgr.close();
    } finally {
      cleanup();
    }
  });

  it("a stored job purged by id, by count and by a new job's arrival leaves the store and the listing", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const { ids, b } = await fillAndReopen(dir, 12);
      expect(b.mgr.purge(ids[5]!)).toBe(true);
      expect(() => b.mgr.job(ids[5]!)).toThrow(/unknown job/);
      expect(b.mgr.purgeJobs({ numLimit: 8, force: true })).toEqual(ids.slice(0, 3));
      const fresh = await submitNow(b, testJob(0));
      await b.clock.advance(1000);
      const left = b.mgr.jobs({ states: ["INACTIVE"] }).map((j) => j.id);
      expect(left).toEqual([fresh, ...ids.slice(3).filter((id) => id !== ids[5]).reverse()]);
      await b.mgr.close();
      const c = await simManager({ statedir: dir, store: "sqlite", resources: { cores: 4 }, clock: b.clock });
      expect(c.mgr.jobs({ states: ["INACTIVE"] }).map((j) => j.id)).toEqual(left);
      await c.mgr.close();
    } finally {
      cleanup();
    }
  });
});

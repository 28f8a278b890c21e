/**
 * Restart reads one summary row per inactive job (src/manager/engine/summary.ts) instead of its
 * eventlog: what plugins and listings see must equal what a full replay gives, the
 * eventlog is read only when asked for, and a store without summaries (or with a damaged
 * one) is replayed in full and summarized.
 */
import Database from "better-sqlite3";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import type { JobId } from "../../src/manager/base/ids.js";
import type { JobArgs } from "../../src/manager/port/records.js";
import { SqliteStore } from "../../src/manager/store/sqlite.js";
import type { JobStore } from "../../src/manager/store/types.js";
import { fakePort } from "./fake-port.js";
import { simManager, submitNow, tempDir, testJob, type SimManager } from "./helpers.js";

/** Every key of the args, getters read (what a plugin reading everything sees). */
const seen = (a: JobArgs) => ({ ...a, jobspec: a.jobspec, ...("R" in a ? { R: a.R } : {}) });

/** A SQLite store that counts reads of whole jobs (eventlog and jobspec). */
function countingStore(path: string): { store: JobStore; loads: () => number } {
  const inner = new SqliteStore(path);
  let n = 0;
  const store = Object.create(inner) as JobStore;
  store.load = (id: JobId) => {
    n++;
    return inner.load(id);
  };
  return { store, loads: () => n };
}

/** Jobs ending every way, with a memo (stored) and plugin annotations (not stored). */
async function fill(dir: string): Promise<{ clock: SimulatedClock; ids: JobId[] }> {
  const a = await simManager({
    statedir: dir,
    store: "sqlite",
    resources: { cores: 2 },
    plugins: fakePort({ "job.state.run": () => ({ annotations: { sched: { note: "plugin-only" } } }) }),
  });
  const ids: JobId[] = [];
  const memo = await submitNow(a, testJob("5s"), { urgency: 20 });
  a.mgr.port.postEvent(memo, "memo", { tag: "kept" });
  ids.push(memo);
  ids.push(await submitNow(a, testJob(0, { wait_status: 256 })));
  ids.push(await submitNow(a, { ...testJob("1h"), attributes: { system: { duration: 0, job: { name: "named" }, exec: { test: { run_duration: "1h" } } } } }));
  const held = await submitNow(a, testJob(0), { urgency: 0 });
  ids.push(held);
  await a.clock.advance(6000);
  a.mgr.cancel(ids[2]!);
  a.mgr.cancel(held);
  await a.clock.advance(1000);
  for (const id of ids) expect(a.mgr.job(id).state).toBe("INACTIVE");
  await a.mgr.close();
  return { clock: a.clock, ids };
}

/** Reopens with a plugin recording job.inactive-add args (reading them all if `read`). */
async function reopen(dir: string, clock: SimulatedClock, read: boolean, store?: JobStore): Promise<{ s: SimManager; args: Map<JobId, unknown> }> {
  const args = new Map<JobId, unknown>();
  const s = await simManager({
    statedir: dir,
    store: store ?? "sqlite",
    resources: { cores: 2 },
    clock: new SimulatedClock(clock.now()),
    plugins: fakePort({ "job.inactive-add": (a) => void args.set(a.id, read ? seen(a) : a.userid) }),
  });
  return { s, args };
}

const summaryRows = (dir: string) => {
  const db = new Database(join(dir, "jobtap.db"), { readonly: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM inactive").get() as { n: number }).n;
  } finally {
    db.close();
  }
};

/** A store whose summaries are missing is one from before them: it has no marks in `meta` either. */
const dropSummaries = (dir: string, sql = "DELETE FROM inactive") => {
  const db = new Database(join(dir, "jobtap.db"));
  db.exec(sql);
  db.exec("DELETE FROM meta WHERE key IN ('summary_floor', 'batch_seq')");
  db.close();
};

describe("restart from inactive-job summaries", () => {
  it("plugins and listings see what a full replay of the eventlogs gives", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const { clock, ids } = await fill(dir);
      expect(summaryRows(dir)).toBe(ids.length);
      const fast = await reopen(dir, clock, true);
      const fastJobs = ids.map((id) => fast.s.mgr.job(id));
      await fast.s.mgr.close();

      dropSummaries(dir);
      const full = await reopen(dir, clock, true);
      const fullJobs = ids.map((id) => full.s.mgr.job(id));
      await full.s.mgr.close();

      expect(fast.args.size).toBe(ids.length);
      for (const id of ids) expect(fast.args.get(id), String(id)).toEqual(full.args.get(id));
      expect(fastJobs).toEqual(fullJobs);
      // The memo survives; the plugin's annotation was never stored, in either path.
      const memo = fast.args.get(ids[0]!) as JobArgs;
      expect(memo.annotations).toEqual({ user: { tag: "kept" } });
      expect(memo.R).toBeDefined();
      expect(fastJobs.map((j) => j.result)).toEqual(["COMPLETED", "FAILED", "CANCELED", "CANCELED"]);
      expect("R" in (fast.args.get(ids[3]!) as object)).toBe(false);
      // The full replay wrote the summaries back.
      expect(summaryRows(dir)).toBe(ids.length);
    } finally {
      cleanup();
    }
  });

  it("reads no eventlog at start unless a plugin reads the jobspec", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const { clock, ids } = await fill(dir);
      const lazy = countingStore(join(dir, "jobtap.db"));
      const a = await reopen(dir, clock, false, lazy.store);
      expect(a.args.size).toBe(ids.length);
      expect(lazy.loads()).toBe(0);
      await a.s.mgr.close();
      const eager = countingStore(join(dir, "jobtap.db"));
      const b = await reopen(dir, clock, true, eager.store);
      expect(eager.loads()).toBe(ids.length);
      await b.s.mgr.close();
    } finally {
      cleanup();
    }
  });

  it("a damaged summary is not trusted: that job is replayed in full and summarized again", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const { clock, ids } = await fill(dir);
      const before = await reopen(dir, clock, true);
      await before.s.mgr.close();
      dropSummaries(dir, `UPDATE inactive SET summary = '{"userid":"x"}'; DELETE FROM inactive WHERE rowid = (SELECT min(rowid) FROM inactive)`);
      const after = await reopen(dir, clock, true);
      for (const id of ids) expect(after.args.get(id)).toEqual(before.args.get(id));
      expect(after.s.mgr.jobs({ states: ["INACTIVE"] }).map((j) => j.id)).toEqual([...ids].reverse());
      await after.s.mgr.close();
      const db = new Database(join(dir, "jobtap.db"), { readonly: true });
      const bad = db.prepare(`SELECT count(*) AS n FROM inactive WHERE summary LIKE '%"x"%'`).get() as { n: number };
      db.close();
      expect(bad.n).toBe(0);
      expect(summaryRows(dir)).toBe(ids.length);
    } finally {
      cleanup();
    }
  });

  it("a purged job's summary goes with it", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const { clock, ids } = await fill(dir);
      const a = await reopen(dir, clock, false);
      expect(a.s.mgr.purge(ids[0]!)).toBe(true);
      await a.s.mgr.close();
      expect(summaryRows(dir)).toBe(ids.length - 1);
      const b = await reopen(dir, clock, false);
      expect(() => b.s.mgr.job(ids[0]!)).toThrow(/unknown job/);
      expect(b.args.size).toBe(ids.length - 1);
      await b.s.mgr.close();
    } finally {
      cleanup();
    }
  });
});

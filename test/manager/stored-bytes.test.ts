/**
 * [limits] jobspec-bytes-per-user: the jobspec bytes one user's stored jobs hold (active
 * and inactive: an inactive job's jobspec stays in the store until purged) are bounded;
 * a purge, explicit or automatic, makes room, and a restart counts them again from the store.
 */
import Database from "better-sqlite3";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import type { JobId } from "../../src/manager/base/ids.js";
import type { JobManagerOptions } from "../../src/manager/manager.js";
import { jobspec, simManager, submitNow, tempDir, type SimManager } from "./helpers.js";

/** About 10 KB of jobspec each: two fit under LIMIT, a third does not. */
const LIMIT = 25_000;
const big = (run = 0) => jobspec(["true"], { environment: { PAD: "p".repeat(10_000) }, exec: { test: { run_duration: run } } });

/** The refusal of user `userid`'s next job: its stored bytes and the job's, read from the message. */
async function refused(s: SimManager, userid: number, spec = big()): Promise<{ stored: number; bytes: number }> {
  const err = await submitNow(s, spec, { userid }).then(
    () => undefined,
    (e: unknown) => e as { code: string; message: string; details: unknown },
  );
  expect(err).toMatchObject({ code: ErrorCode.LIMIT_EXCEEDED, details: { limit: "[limits] jobspec-bytes-per-user", userid } });
  const m = /^\[limits\] jobspec-bytes-per-user: user (\d+) stores ([\d,]+) bytes of jobspecs; this job's ([\d,]+) would pass the limit of 25,000; purge inactive jobs \(jobtap job purge --force\) to make room$/.exec(err!.message);
  expect(m, err!.message).not.toBeNull();
  expect(Number(m![1])).toBe(userid);
  const n = (t: string) => Number(t.replace(/,/g, ""));
  return { stored: n(m![2]!), bytes: n(m![3]!) };
}

async function settle(s: SimManager, ids: JobId[]): Promise<void> {
  for (let i = 0; i < 50 && ids.some((id) => s.mgr.job(id).state !== "INACTIVE"); i++) await s.clock.advance(100);
  for (const id of ids) expect(s.mgr.job(id).state).toBe("INACTIVE");
}

const limited = (o: JobManagerOptions = {}) => simManager({ limits: { jobspecBytesPerUser: LIMIT }, ...o });

describe("[limits] jobspec-bytes-per-user", () => {
  it("counts active and inactive jobs per user, owner and guests alike; a purge makes room", async () => {
    const s = await limited();
    for (const userid of [2000, 1000]) {
      const a = await submitNow(s, big(), { userid });
      const b = await submitNow(s, big(), { userid });
      const r = await refused(s, userid);
      expect(r.stored).toBe(2 * r.bytes);
      await settle(s, [a, b]);
      // Inactive jobs keep their jobspecs in the store: still no room.
      await refused(s, userid);
      expect(s.mgr.purgeJobs({ ids: [a], force: true, userid })).toEqual([a]);
      await expect(submitNow(s, big(), { userid })).resolves.toBeDefined();
    }
    // A small job still fits where a big one does not; other users have room of their own.
    await expect(submitNow(s, jobspec(["true"], { exec: { test: {} } }), { userid: 2000 })).resolves.toBeDefined();
    await expect(submitNow(s, big(), { userid: 3000 })).resolves.toBeDefined();
    await s.mgr.close();
  });

  it("the automatic purge of inactive jobs makes room; 0 means no limit", async () => {
    const s = await limited({ inactiveNumLimit: 1 });
    for (let i = 0; i < 5; i++) await settle(s, [await submitNow(s, big(), { userid: 2000 })]);
    await s.mgr.close();
    const free = await simManager({ limits: { jobspecBytesPerUser: 0 } });
    for (let i = 0; i < 5; i++) await submitNow(free, big(), { userid: 2000 });
    await free.mgr.close();
  });

  it("a rejected job gives its bytes back", async () => {
    const s = await limited();
    await submitNow(s, big(), { userid: 2000 });
    // An unknown dependency scheme is rejected after the job entered admission.
    const rejected = { ...big(), attributes: { system: { ...big().attributes!.system, dependencies: [{ scheme: "nosuch", value: "1" }] } } };
    for (let i = 0; i < 3; i++) await expect(submitNow(s, rejected, { userid: 2000 })).rejects.toMatchObject({ code: ErrorCode.JOB_REJECTED });
    await expect(submitNow(s, big(), { userid: 2000 })).resolves.toBeDefined();
    await s.mgr.close();
  });

  it("a restart counts the stored jobs again from a real SQLite store, summarized or not", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const opts = { statedir: dir, store: "sqlite" as const };
      const first = await limited(opts);
      const done = await submitNow(first, big(), { userid: 2000 });
      await settle(first, [done]);
      await submitNow(first, big(), { userid: 2000, urgency: 0 });
      await first.mgr.close();

      const again = await limited({ ...opts, clock: new SimulatedClock(first.clock.now()) });
      const r = await refused(again, 2000);
      expect(r.stored).toBe(2 * r.bytes);
      await again.mgr.close();

      // A summary written before the byte count was kept: that job is replayed in full.
      const db = new Database(join(dir, "jobtap.db"));
      expect(db.prepare("UPDATE inactive SET summary = json_remove(summary, '$.jobspecBytes')").run().changes).toBe(1);
      db.close();
      const third = await limited({ ...opts, clock: new SimulatedClock(first.clock.now()) });
      expect((await refused(third, 2000)).stored).toBe(r.stored);
      expect(third.mgr.purgeJobs({ ids: [done], force: true })).toEqual([done]);
      await expect(submitNow(third, big(), { userid: 2000 })).resolves.toBeDefined();
      await refused(third, 2000);
      await third.mgr.close();
    } finally {
      cleanup();
    }
  });
});

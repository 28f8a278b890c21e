import { describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { asJobId, type JobId } from "../../src/manager/base/ids.js";
import { InactiveCache, type InactiveRecord } from "../../src/manager/engine/inactive.js";
import { simManager, submitNow, tempDir, testJob } from "./helpers.js";

/** A record whose every field depends on `i`, with values at the edges of their ranges. */
function record(i: number, id: JobId = asJobId(1000n + BigInt(i))): InactiveRecord {
  return {
    id,
    userid: i % 3 === 0 ? 4294967295 : 1000 + (i % 5),
    urgency: i % 32,
    priority: i % 7 === 0 ? -1 : 4294967295 - i,
    t_submit: 1.7e9 + i / 7,
    t_clean: 1.7e9 + i + 0.125,
    result: i % 4,
    name: i % 10 === 0 ? `job-${i}` : "sleep",
    waitStatus: i % 11 === 0 ? -1 : i * 256 + 2 ** 31,
    annotations: i % 13 === 0 ? { user: { i } } : null,
    jobspecBytes: i % 17 === 0 ? 4294967295 : 200 + i,
  };
}

function cache(limits = {}, clock = new SimulatedClock(0)) {
  const purged: InactiveRecord[] = [];
  return { c: new InactiveCache(clock, limits, (r) => purged.push(r)), purged, clock };
}

describe("InactiveCache (columns)", () => {
  it("gives back every field of thousands of records (three pages), in inactivation order both ways", () => {
    const { c } = cache();
    const ids = [];
    // Ids out of inactivation order, as when a long job ends after later ones.
    for (let i = 0; i < 9000; i++) ids.push(asJobId(1000n + BigInt((i * 7919) % 9000)));
    ids.forEach((id, i) => expect(c.add(record(i, id))).toBe(true));
    expect(c.add(record(5, ids[5]))).toBe(false);
    expect(c.size).toBe(9000);
    ids.forEach((id, i) => expect(c.get(id)).toEqual(record(i, id)));
    expect(c.oldestFirst()).toEqual(ids.map((id, i) => record(i, id)));
    expect(c.newestFirst().map((r) => r.id)).toEqual([...ids].reverse());
    const mine = ids.map((id, i) => record(i, id)).filter((r) => r.userid === 1002).reverse();
    expect(c.newestFirst(1002)).toEqual(mine);
    expect(c.userid(ids[3]!)).toBe(4294967295);
    expect(c.get(asJobId(1n))).toBeUndefined();
  });

  it("purges the oldest past the count limit with the full record, and reuses freed slots", () => {
    const { c, purged } = cache({ numLimit: 100 });
    for (let i = 0; i < 250; i++) c.add(record(i));
    expect(purged).toEqual(Array.from({ length: 150 }, (_, i) => record(i)));
    expect(c.remove(record(195).id)).toBe(true);
    expect(c.remove(record(195).id)).toBe(false);
    expect(purged.at(-1)).toEqual(record(195));
    c.add(record(250));
    // The freed slot holds the newest record, which still lists last.
    expect(c.oldestFirst().map((r) => r.name)).toEqual([...Array.from({ length: 100 }, (_, k) => 150 + k).filter((i) => i !== 195), 250].map((i) => record(i).name));
    expect(c.get(record(250).id)).toEqual(record(250));
    expect(c.get(record(195).id)).toBeUndefined();
  });

  it("purges past the age limit, oldest first, when the clock reaches each one", async () => {
    const clock = new SimulatedClock(0);
    const { c, purged } = cache({ ageLimit: 10 }, clock);
    for (let i = 0; i < 5; i++) c.add({ ...record(i), t_clean: 100 + i });
    await clock.advance(111_000); // now 111 s: cutoff 101, t_clean 100 and 101 are out
    expect(purged.map((r) => r.t_clean)).toEqual([100, 101]);
    await clock.advance(2_000);
    expect(purged.map((r) => r.t_clean)).toEqual([100, 101, 102, 103]);
    c.close();
  });

  it("restore replaces a record of the same id and sortById puts the cache in id order", () => {
    const { c, purged } = cache({ numLimit: 2 });
    for (const i of [5, 3, 9, 1]) c.restore(record(i));
    c.restore({ ...record(3), name: "again" });
    expect(c.size).toBe(4); // restore does not enforce the limits
    c.sortById();
    expect([...c.ids()]).toEqual([1, 3, 5, 9].map((i) => record(i).id));
    expect(c.get(record(3).id)?.name).toBe("again");
    c.enforce();
    expect(purged.map((r) => r.id)).toEqual([record(1).id, record(3).id]);
  });
});

describe("inactive jobs across a restart", () => {
  it("a thousand inactive jobs list the same, newest first, after a restart", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const a = await simManager({ statedir: dir, store: "sqlite" });
      for (let i = 0; i < 1000; i++) void a.mgr.submit(testJob(0), { userid: 1000 + (i % 3), urgency: 1 + (i % 16) });
      await a.clock.advance(5000);
      await submitNow(a, testJob(0), { userid: 1001 });
      await a.clock.advance(1000);
      const before = a.mgr.jobs({ states: ["INACTIVE"] });
      expect(before).toHaveLength(1001);
      expect(a.mgr.jobs({ states: ["INACTIVE"], userid: 1001 })[0]).toEqual(before[0]);
      await a.mgr.close();
      const b = await simManager({ statedir: dir, store: "sqlite" });
      // A restarted manager lists in id (submit) order, newest first: here the same order.
      expect(b.mgr.jobs({ states: ["INACTIVE"] })).toEqual([...before].sort((x, y) => (x.id < y.id ? 1 : -1)));
      await b.mgr.close();
    } finally {
      cleanup();
    }
  });
});

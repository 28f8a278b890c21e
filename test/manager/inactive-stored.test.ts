/**
 * The stored tier's user column (issue 41): 32 bits a job while every user id is a Unix
 * uid, turned to 64-bit floats, values kept, when another number comes (the library API
 * takes any number as a userid). Its listing order (most recently cleaned first, the
 * newest id first among ties) is a sort's, kept as an array only when the jobs were not
 * cleaned in id order. Its columns start at the size the store's last clean shutdown
 * counted, so a restart of a million jobs does not leave outgrown columns behind.
 */
import { describe, expect, it } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import { StoredInactive } from "../../src/manager/engine/inactive-stored.js";
import { createJobManager, JobManager } from "../../src/manager/manager.js";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { tempDir, testJob } from "./helpers.js";

const filled = (userids: number[]) => {
  const tier = new StoredInactive<never>(() => undefined);
  userids.forEach((u, i) => tier.append(BigInt(i + 1) as JobId, u, 1000 + i));
  return tier;
};

describe("the stored tier's user column", () => {
  it("keeps uids up to 2^32-1 exactly, across the columns' growth", () => {
    const uids = Array.from({ length: 3000 }, (_, i) => (i % 3 === 0 ? 0 : i % 3 === 1 ? 1000 + i : 2 ** 32 - 1 - i));
    const tier = filled(uids);
    tier.seal();
    expect(uids.map((_, i) => tier.userid(BigInt(i + 1) as JobId))).toEqual(uids);
    expect((tier as unknown as { userids: unknown }).userids).toBeInstanceOf(Uint32Array);
    expect([...tier.newestIds(4294967293)]).toEqual([3n]);
  });

  it("turns to floats for a user id that is not a uid, keeping the ones before", () => {
    const odd = [-1, 2 ** 32, 2 ** 40 + 5, 1.5];
    const uids = [...Array.from({ length: 1500 }, (_, i) => 500 + i), ...odd, ...Array.from({ length: 1500 }, (_, i) => i)];
    const tier = filled(uids);
    tier.seal();
    expect(uids.map((_, i) => tier.userid(BigInt(i + 1) as JobId))).toEqual(uids);
    expect([...tier.newestIds(-1)]).toEqual([1501n]);
    expect([...tier.newestIds(2 ** 32)]).toEqual([1502n]);
    const seen: number[] = [];
    tier.eachOldest((_id, u) => void seen.push(u));
    expect(seen).toEqual(uids);
  });
});

describe("the stored tier's listing order", () => {
  /** A tier of jobs 1..n with these clean times and users (user = id % 3). */
  const tier = (cleaned: number[]) => {
    const t = new StoredInactive<never>(() => undefined);
    cleaned.forEach((c, i) => t.append(BigInt(i + 1) as JobId, (i + 1) % 3, c));
    t.seal();
    return t;
  };
  /** The listing's order: most recently cleaned first, the newest id first among ties. */
  const oracle = (cleaned: number[], keep: (id: number) => boolean) =>
    cleaned
      .map((c, i) => ({ c, id: i + 1 }))
      .filter((j) => keep(j.id))
      .sort((a, b) => b.c - a.c || b.id - a.id)
      .map((j) => BigInt(j.id));

  const cases: Record<string, number[]> = {
    "cleaned in id order, with ties": Array.from({ length: 2000 }, (_, i) => 1000 + Math.floor(i / 3)),
    "cleaned out of id order": Array.from({ length: 2000 }, (_, i) => 1000 + ((i * 7919) % 997) / 10),
    "in order but the last": [...Array.from({ length: 50 }, (_, i) => i), 3],
  };
  for (const [name, cleaned] of Object.entries(cases)) {
    it(`lists ${name} as a sort would, per user and after purges`, () => {
      const t = tier(cleaned);
      expect([...t.newestCleaned()]).toEqual(oracle(cleaned, () => true));
      expect([...t.newestCleaned(1)]).toEqual(oracle(cleaned, (id) => id % 3 === 1));
      for (let id = 1; id <= cleaned.length; id += 5) t.delete(BigInt(id) as JobId);
      expect([...t.newestCleaned()]).toEqual(oracle(cleaned, (id) => (id - 1) % 5 !== 0));
    });
  }

  it("keeps no order array when jobs were cleaned in id order", () => {
    const inOrder = tier(cases["cleaned in id order, with ties"]!);
    const outOfOrder = tier(cases["cleaned out of id order"]!);
    void [...inOrder.newestCleaned(), ...outOfOrder.newestCleaned()];
    expect((inOrder as unknown as { byClean: unknown }).byClean).toBeNull();
    expect((outOfOrder as unknown as { byClean: unknown }).byClean).toBeInstanceOf(Uint32Array);
  });
});

describe("the stored tier's size", () => {
  it("starts at the expected count and grows only past it; a hint out of bounds is ignored", () => {
    const tier = new StoredInactive<never>(() => undefined, 3000);
    expect(tier.capacity).toBe(3000);
    for (let i = 1; i <= 3000; i++) tier.append(BigInt(i) as JobId, 0, i);
    expect(tier.capacity).toBe(3000);
    tier.append(3001n as JobId, 0, 3001);
    expect(tier.capacity).toBe(6000);
    for (const bad of [undefined, -5, 10, 2 ** 40]) expect(new StoredInactive<never>(() => undefined, bad).capacity).toBe(1024);
  });

  it("is the number of inactive jobs the last clean shutdown counted", async () => {
    const { dir, cleanup } = tempDir();
    const clock = new SimulatedClock();
    const open = () => createJobManager({ statedir: dir, store: "sqlite", clock, resources: { cores: 4 }, log: () => undefined });
    try {
      const first = await open();
      const n = 2100;
      const outcomes = first.submitMany(Array.from({ length: n }, () => ({ jobspec: testJob(0) })));
      for (let i = 0; i < 200 && first.jobs({ states: ["INACTIVE"] }).length < n; i++) await clock.advance(50);
      expect((await outcomes).every((o) => "id" in o)).toBe(true);
      expect(first.jobs({ states: ["INACTIVE"] })).toHaveLength(n);
      await first.close();
      const again = await open();
      try {
        const tier = (JobManager.internals(again).inactive as unknown as { stored: StoredInactive<never> }).stored;
        expect(tier.capacity).toBe(n);
        expect(again.jobs({ states: ["INACTIVE"] })).toHaveLength(n);
      } finally {
        await again.close();
      }
    } finally {
      cleanup();
    }
  }, 60_000);
});

import { describe, expect, it } from "vitest";
import { UserHistory, type HistoryEntry } from "../../plugins-builtin/history/list.js";
import type { JobId } from "../../src/manager/base/ids.js";

const entry = (id: number, t: number): HistoryEntry => ({ id: BigInt(id) as JobId, t_submit: t });

/** A probe that counts the entries the list reads. */
function counted(): { probe: () => void; reads: () => number } {
  let n = 0;
  return { probe: () => void n++, reads: () => n };
}

/** A deterministic pseudo-random sequence (no Math.random in tests). */
function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

describe(".history list", () => {
  it("in-order arrivals append: reads stay linear in the number of jobs, not quadratic", () => {
    const { probe, reads } = counted();
    const h = new UserHistory(probe);
    const n = 3000;
    for (let i = 1; i <= n; i++) h.add(entry(i, 1000 + i));
    expect(h.size).toBe(n);
    // A scan per insert would read ~n²/2 = 4.5 million elements.
    expect(reads()).toBeLessThanOrEqual(2 * n);
  });

  it("an out-of-order arrival binary-searches its place", () => {
    const { probe, reads } = counted();
    const h = new UserHistory(probe);
    for (let i = 1; i <= 1024; i++) h.add(entry(2 * i, 2 * i));
    const before = reads();
    h.add(entry(2047, 2047));
    // One check against the newest and ~11 binary-search probes.
    expect(reads() - before).toBeLessThan(20);
    expect(h.newestFirst().slice(0, 3).map((e) => Number(e.id))).toEqual([2048, 2047, 2046]);
    h.add(entry(3, 3));
    expect(h.newestFirst().slice(-3).map((e) => Number(e.id))).toEqual([4, 3, 2]);
  });

  it.each([["one growing chunk", 16], ["chunks of 8 entries", 3]])("keeps newest first by (t_submit, id), without duplicates, through adds and removes (%s)", (_, bits) => {
    const rnd = lcg(42);
    const h = new UserHistory(undefined, bits);
    const ref = new Map<number, HistoryEntry>();
    // A job's submit time never changes: mostly increasing with the id, some ties, some
    // out of order; jobs arrive in random order, most of them more than once.
    const tOf = (id: number) => (id % 7 === 0 ? id - 1 : id % 11 === 0 ? (id * 37) % 400 : id);
    for (let step = 0; step < 2000; step++) {
      const id = 1 + Math.floor(rnd() * 400);
      const t = tOf(id);
      if (rnd() < 0.25) {
        const had = ref.get(id);
        expect(h.remove(had ?? entry(id, t))).toBe(had !== undefined);
        ref.delete(id);
      } else {
        const added = h.add(entry(id, t));
        expect(added).toBe(!ref.has(id));
        if (added) ref.set(id, entry(id, t));
      }
    }
    const expected = [...ref.values()].sort((a, b) => b.t_submit - a.t_submit || Number(b.id - a.id));
    expect(h.newestFirst()).toEqual(expected);
  });

  it("a job added again is found where it sorts, newest or not", () => {
    const { probe, reads } = counted();
    const h = new UserHistory(probe);
    for (let i = 1; i <= 1024; i++) h.add(entry(2 * i, 2 * i));
    const before = reads();
    expect(h.add(entry(2048, 2048))).toBe(false);
    expect(h.add(entry(1000, 1000))).toBe(false);
    expect(h.add(entry(2, 2))).toBe(false);
    // A binary search each, no scan.
    expect(reads() - before).toBeLessThan(40);
    expect(h.size).toBe(1024);
    expect(h.add(entry(1001, 1000))).toBe(true);
    expect(h.newestFirst().slice(1023 - 500, 1023 - 497).map((e) => Number(e.id))).toEqual([1002, 1001, 1000]);
  });

  it("removes a job even if the caller's t_submit does not match the stored one", () => {
    const h = new UserHistory();
    h.add(entry(1, 10));
    h.add(entry(2, 20));
    expect(h.remove(entry(1, 99))).toBe(true);
    expect(h.newestFirst().map((e) => Number(e.id))).toEqual([2]);
  });

  it("grows by whole chunks past the first, never copying them", () => {
    const h = new UserHistory(undefined, 4); // chunks of 16
    for (let i = 1; i <= 40; i++) h.add(entry(i, i));
    expect(h.capacity).toBe(48);
    h.add(entry(0, 0)); // before all: every chunk shifts by one
    h.remove(entry(17, 17)); // across a chunk boundary
    expect(h.newestFirst().map((e) => Number(e.id))).toEqual([...Array.from({ length: 40 }, (_, i) => 40 - i).filter((i) => i !== 17), 0]);
    h.trim(); // several chunks: nothing to give back
    expect(h.capacity).toBe(48);
  });

  it("trim gives back the room grown past its jobs, keeping them, and still takes adds in order", () => {
    const h = new UserHistory();
    for (let i = 1; i <= 1100; i++) h.add(entry(i, i));
    expect(h.capacity).toBe(2048);
    h.trim();
    expect(h.capacity).toBe(1100 + (1100 >> 3));
    expect(h.newestFirst().map((e) => Number(e.id))).toEqual(Array.from({ length: 1100 }, (_, i) => 1100 - i));
    h.add(entry(5000, 5000));
    h.add(entry(7, 7.5)); // out of order: after 7, before 8
    expect(h.newestFirst().slice(0, 2).map((e) => Number(e.id))).toEqual([5000, 1100]);
    expect(h.newestFirst().slice(-9, -6).map((e) => Number(e.id))).toEqual([8, 7, 7]);
  });
});

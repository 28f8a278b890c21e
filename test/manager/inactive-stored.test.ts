/**
 * The stored tier's user column (issue 41): 32 bits a job while every user id is a Unix
 * uid, turned to 64-bit floats, values kept, when another number comes (the library API
 * takes any number as a userid).
 */
import { describe, expect, it } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import { StoredInactive } from "../../src/manager/engine/inactive-stored.js";

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

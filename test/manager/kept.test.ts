/**
 * Kept (src/manager/engine/kept.ts): the last `limit` members keep what they hold; past
 * that the oldest are offered for release, a refused one stays and is offered again, and
 * the member being added is never offered.
 */
import { describe, expect, it } from "vitest";
import { Kept } from "../../src/manager/engine/kept.js";

describe("Kept", () => {
  it("releases the oldest members past its limit, in the order they were last added", () => {
    const released: number[] = [];
    const kept = new Kept<number>(3, (m) => (released.push(m), true));
    for (const m of [1, 2, 3]) kept.add(m);
    expect(released).toEqual([]);
    kept.add(1); // 1 is the newest again
    kept.add(4);
    expect(released).toEqual([2]);
    kept.add(5);
    kept.add(6);
    expect(released).toEqual([2, 3, 1]);
  });

  it("keeps a member it may not release yet and offers it again at the next trim", () => {
    const busy = new Set([1]);
    const released: number[] = [];
    const kept = new Kept<number>(2, (m) => (busy.has(m) ? false : (released.push(m), true)));
    kept.add(1);
    kept.add(2);
    kept.add(3);
    expect(released).toEqual([2]);
    busy.delete(1);
    kept.add(4);
    expect(released).toEqual([2, 1]);
    kept.add(5);
    expect(released).toEqual([2, 1, 3]);
  });

  it("never offers the member being added, even when every older one refuses", () => {
    const offered: number[] = [];
    const kept = new Kept<number>(1, (m) => (offered.push(m), false));
    kept.add(1);
    kept.add(2);
    kept.add(3);
    expect(offered).not.toContain(3);
    expect(offered.every((m) => m === 1 || m === 2)).toBe(true);
  });
});

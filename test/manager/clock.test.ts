import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_NODE_TIMER_MS, RealClock } from "../../src/manager/base/clock.js";

const DAY = 86_400_000;

// vitest's fake timers behave as Node's do past 2^31-1 ms (the timer fires after 1 ms),
// so these tests see exactly the overflow a real daemon would.
describe("RealClock: delays of any length", () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate", "clearImmediate", "Date"] }));
  afterEach(() => vi.useRealTimers());

  it("a 25-day timer fires after 25 days, not at once", () => {
    const clock = new RealClock();
    const fired: number[] = [];
    const start = clock.now();
    clock.setTimeout(() => fired.push(clock.now() - start), 25 * DAY);
    vi.advanceTimersByTime(1000);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(25 * DAY - 1001);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([25 * DAY]);
  });

  it("a 100-day timer can be cleared between its pieces", () => {
    const clock = new RealClock();
    let fired = false;
    const h = clock.setTimeout(() => (fired = true), 100 * DAY);
    vi.advanceTimersByTime(MAX_NODE_TIMER_MS + 10);
    clock.clearTimeout(h);
    vi.advanceTimersByTime(100 * DAY);
    expect(fired).toBe(false);
  });

  it("a zero-delay timer runs after the current task unless cleared; clearing it twice or after it ran is harmless", () => {
    const clock = new RealClock();
    const fired: string[] = [];
    const kept = clock.setTimeout(() => fired.push("kept"), 0);
    const cleared = clock.setTimeout(() => fired.push("cleared"), 0);
    const long = clock.setTimeout(() => fired.push("long"), 5);
    clock.clearTimeout(cleared);
    clock.clearTimeout(cleared);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(0);
    expect(fired).toEqual(["kept"]);
    clock.clearTimeout(kept);
    clock.clearTimeout(long);
    vi.advanceTimersByTime(10);
    expect(fired).toEqual(["kept"]);
  });

  it("an infinite delay never fires; a delay just under the limit fires on time", () => {
    const clock = new RealClock();
    const fired: string[] = [];
    clock.setTimeout(() => fired.push("inf"), Infinity);
    clock.setTimeout(() => fired.push("max"), MAX_NODE_TIMER_MS);
    vi.advanceTimersByTime(MAX_NODE_TIMER_MS - 1);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(["max"]);
    vi.advanceTimersByTime(1000 * DAY);
    expect(fired).toEqual(["max"]);
  });
});

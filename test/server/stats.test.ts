/** The dashboard's last-hour statistics on a simulated clock. */
import { describe, expect, it } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import type { JournalEntry } from "../../src/manager/engine/engine.js";
import { BUCKET_MS, statsRecorder } from "../../src/server/http/stats.js";

const T0 = 1_800_000_000_000;
const entry = (name: string, prev: string, state: string) => ({ id: 1n as JobId, entry: { timestamp: 0, name }, prev_state: prev, state }) as JournalEntry;

describe("stats recorder", () => {
  it("counts submissions, inactive jobs and queue depth per 10-second bucket", () => {
    let now = T0;
    const rec = statsRecorder(() => now, { RUN: 2 });
    rec.event(entry("submit", "NEW", "DEPEND"));
    rec.event(entry("depend", "DEPEND", "PRIORITY"));
    rec.event(entry("priority", "PRIORITY", "SCHED"));
    now += BUCKET_MS;
    rec.event(entry("alloc", "SCHED", "RUN"));
    rec.event(entry("clean", "CLEANUP", "INACTIVE"));
    // Two quiet buckets: their depth is what it was.
    now += 3 * BUCKET_MS;
    const v = rec.view();
    expect(v.bucket_seconds).toBe(10);
    expect(v.buckets.map((b) => [b.submitted, b.inactive])).toEqual([[1, 0], [0, 1], [0, 0], [0, 0], [0, 0]]);
    expect(v.buckets[0]!.depth).toEqual({ DEPEND: 0, PRIORITY: 0, SCHED: 1, RUN: 2, CLEANUP: 0 });
    expect(v.buckets.slice(1).map((b) => b.depth.RUN)).toEqual([3, 3, 3, 3]);
    expect(v.buckets[1]!.t - v.buckets[0]!.t).toBe(10);
  });

  it("gives p50 and p95 of callback and hook times per bucket", () => {
    let now = T0;
    const rec = statsRecorder(() => now, {});
    for (let i = 0; i < 90; i++) rec.callback(0.1);
    for (let i = 0; i < 10; i++) rec.callback(100);
    rec.hook(20);
    now += BUCKET_MS;
    rec.hook(2000);
    const [a, b] = rec.view().buckets;
    expect(a!.callbacks.count).toBe(100);
    expect(a!.callbacks.p50).toBeGreaterThanOrEqual(0.0001);
    expect(a!.callbacks.p50).toBeLessThan(0.0001 * 1.2);
    expect(a!.callbacks.p95).toBeGreaterThanOrEqual(0.1);
    expect(a!.callbacks.p95).toBeLessThan(0.1 * 1.2);
    expect(a!.hooks).toMatchObject({ count: 1 });
    expect(b!.hooks.p50).toBeGreaterThanOrEqual(2);
    expect(b!.callbacks).toEqual({ count: 0, p50: null, p95: null });
  });

  it("keeps one hour: after it, the oldest buckets are gone, the memory the same", () => {
    let now = T0;
    const rec = statsRecorder(() => now, {});
    rec.event(entry("submit", "NEW", "DEPEND"));
    now += 359 * BUCKET_MS;
    expect(rec.view().buckets).toHaveLength(360);
    expect(rec.view().buckets[0]!.submitted).toBe(1);
    now += BUCKET_MS;
    const v = rec.view();
    expect(v.buckets).toHaveLength(360);
    expect(v.buckets.reduce((s, b) => s + b.submitted, 0)).toBe(0);
    now += 10 * 360 * BUCKET_MS;
    rec.event(entry("submit", "NEW", "DEPEND"));
    expect(rec.view().buckets.reduce((s, b) => s + b.submitted, 0)).toBe(1);
  });
});

/**
 * LastRejMatchTime kept lazily: a pass stamps the scheduler's queue entries, and once the
 * pool is full it passes over the rest of the queue at once (a sweep) instead of touching
 * each job. The job ad must still read as if every passed-over job had been stamped: before
 * and after the job leaves the queue (placed, held), and never for a job queued later.
 */
import { describe, expect, it } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import { carveSlots } from "../../src/manager/scheduler/slots.js";
import { slotPolicies } from "../../src/manager/policy/slot-policy.js";
import { simManager, submitNow, testJob, type SimManager } from "./helpers.js";

const GiB = 2 ** 30;
const POOL = { cores: 2, gpus: 0, memory: 2 * GiB };
const LAYOUT = [{ count: 2, cores: 1 }];

function times(s: SimManager, id: JobId): { rej: unknown; match: unknown } {
  const ad = s.mgr.jobAd(id);
  const read = (name: string) => (ad.has(name) ? ad.evaluate(name) : "none");
  return { rej: read("LastRejMatchTime"), match: read("LastMatchTime") };
}

describe("LastRejMatchTime with a full pool", () => {
  it("is set on every job a pass passed over, and kept once the job is placed or held", async () => {
    const slotPolicy = slotPolicies(carveSlots(POOL, LAYOUT), { start: 'TARGET.Owner =!= "nobody"' });
    const s = await simManager({ resources: POOL, slots: LAYOUT, slotPolicy, queueDepth: 100 });
    s.mgr.pauseScheduling();
    const running = [await submitNow(s, testJob("1h")), await submitNow(s, testJob("1h"))];
    const a = await submitNow(s, testJob("1h"));
    const a2 = await submitNow(s, testJob("1h"));
    const b = await submitNow(s, testJob("1h"));
    /** Resumes scheduling 5 s on, for one pass; returns the second the pass ran at. */
    const pass = async (): Promise<bigint> => {
      await s.clock.advance(5000);
      s.mgr.resumeScheduling();
      await s.clock.advance(1);
      s.mgr.pauseScheduling();
      return BigInt(Math.floor((s.clock.now() - 1) / 1000));
    };
    // No ad is read until the end: reading one takes the time into the job (keepRejected).
    const t1 = await pass();
    // Held: out of the queue, it keeps the time of the pass that passed it over.
    s.mgr.setUrgency(b, 0);
    const c = await submitNow(s, testJob("1h"));
    const t2 = await pass();
    // Two slots free: a and a2 are placed and keep when they were last passed over (a2 is
    // in a's match group: the pass reads a's ad, not a2's); c is passed over again.
    s.mgr.cancel(running[0]!);
    s.mgr.cancel(running[1]!);
    const t3 = await pass();
    const d = await submitNow(s, testJob("1h"));
    expect(times(s, a)).toEqual({ rej: t2, match: t3 });
    expect(times(s, a2)).toEqual({ rej: t2, match: t3 });
    expect([times(s, b).rej, times(s, c).rej]).toEqual([t1, t3]);
    // A job queued after the last pass has none yet.
    expect(times(s, d).rej).toBe("none");
    await s.mgr.close();
  });

  it("the periodic policy sees the time of a sweep no one has read into the job yet", async () => {
    const slotPolicy = slotPolicies(carveSlots(POOL, LAYOUT), { start: 'TARGET.Owner =!= "nobody"' });
    const s = await simManager({ resources: POOL, slots: LAYOUT, slotPolicy, queueDepth: 100 });
    for (let i = 0; i < 2; i++) await submitNow(s, testJob("1h"));
    // Passed over on a full pool: only the scheduler's sweep knows it. The policy-only ad
    // must take that time in, as the whole ad does (keepRejected), or it never holds.
    const js = testJob("1h");
    js.attributes.user = { classad: { PeriodicHold: "LastRejMatchTime =!= undefined" } };
    const waiting = await submitNow(s, js);
    await s.clock.advance(61_000);
    expect(s.mgr.job(waiting).urgency).toBe(0);
    expect(s.mgr.jobAd(waiting).evaluate("HoldReasonCode")).toBe(3n);
    await s.mgr.close();
  });
});

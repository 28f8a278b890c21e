import { describe, expect, it } from "vitest";
import { ClassAd } from "../../src/classad/index.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { carveSlots } from "../../src/manager/scheduler/slots.js";
import { slotPolicies } from "../../src/manager/policy/slot-policy.js";
import type { Jobspec } from "../../src/manager/port/records.js";
import { simManager, submitNow, testJob, type SimManager } from "./helpers.js";

const GiB = 2 ** 30;
const POOL = { cores: 4, gpus: 0, memory: 4 * GiB };
const LAYOUT = [{ count: 4, cores: 1 }];

/** A test-executor job (1 h) with ClassAd attributes. */
function adJob(classad: Record<string, string>): Jobspec {
  const js = testJob("1h");
  js.attributes.user = { classad };
  return js;
}

/** The SlotID a running job got (slots are one core each: core i is slot i + 1). */
function slotOf(s: SimManager, id: JobId): number | undefined {
  const R = s.mgr.jobR(id) as { execution: { R_lite: Array<{ children: { core: string } }> } } | undefined;
  return R === undefined ? undefined : Number(R.execution.R_lite[0]!.children.core) + 1;
}

async function manager(policy: Record<string, unknown> = {}, perType: Array<Record<string, unknown>> = [], queueDepth = 8) {
  const slotPolicy = slotPolicies(carveSlots(POOL, LAYOUT), policy, perType);
  return simManager({ resources: POOL, slots: LAYOUT, slotPolicy, queueDepth });
}

describe("matchmaking in the scheduler", () => {
  it("places a job only where its Requirements hold (MY = job, TARGET = slot)", async () => {
    const s = await manager();
    const a = await submitNow(s, adJob({ Requirements: "TARGET.SlotID == 3" }));
    const b = await submitNow(s, adJob({ Requirements: "TARGET.SlotID >= 2 && MY.Wanted == TARGET.SlotID", Wanted: "4" }));
    await s.clock.advance(1);
    expect([slotOf(s, a), slotOf(s, b)]).toEqual([3, 4]);
  });

  it("the slot's START is evaluated with MY = slot, TARGET = job", async () => {
    const s = await manager({}, [{ start: 'TARGET.Kind =!= "big" || MY.SlotID == 4' }]);
    const big = await submitNow(s, adJob({ Kind: '"big"' }));
    const small = await submitNow(s, testJob("1h"));
    await s.clock.advance(1);
    expect([slotOf(s, big), slotOf(s, small)]).toEqual([4, 1]);
  });

  it("undefined is no match; a job matching no slot does not block the queue behind it", async () => {
    const s = await manager({}, [], 1);
    const never = await submitNow(s, adJob({ Requirements: "TARGET.NoSuchAttribute > 1" }));
    const next = await submitNow(s, testJob("1h"));
    await s.clock.advance(1);
    expect(slotOf(s, never)).toBeUndefined();
    expect(slotOf(s, next)).toBe(1);
    const ad = s.mgr.jobAd(never);
    expect(ad.evaluate("LastRejMatchTime")).toBe(BigInt(Math.floor(s.clock.now() / 1000)));
    expect(ad.evaluate("JobStatus")).toBe(1n);
    expect(s.mgr.jobAd(next).evaluate("LastMatchTime")).toBe(BigInt(Math.floor(s.clock.now() / 1000)));
  });

  it("chooses by the job's Rank, then the slot's Rank, then slot order", async () => {
    const s = await manager({ rank: "MY.SlotID == 2" });
    const ranked = await submitNow(s, adJob({ Rank: "TARGET.SlotID * 10" }));
    const bySlotRank = await submitNow(s, testJob("1h"));
    const bySlotOrder = await submitNow(s, adJob({ Rank: "1" }));
    await s.clock.advance(1);
    expect([slotOf(s, ranked), slotOf(s, bySlotRank), slotOf(s, bySlotOrder)]).toEqual([4, 2, 1]);
  });

  it("a publication turning START false stops placements there; true again resumes", async () => {
    const s = await manager({ start: "NODE_IS_HEALTHY =!= false" });
    const unhealthy = new ClassAd().set("NODE_IS_HEALTHY", false);
    s.mgr.hostAds.publish("health", unhealthy);
    const job = await submitNow(s, testJob("1h"));
    await s.clock.advance(1);
    expect(slotOf(s, job)).toBeUndefined();
    s.mgr.hostAds.publish("health", new ClassAd().set("NODE_IS_HEALTHY", true));
    await s.clock.advance(1);
    expect(slotOf(s, job)).toBe(1);
  });

  it("a Requirements that evaluates to error is no match, logged once", async () => {
    const s = await manager();
    const bad = await submitNow(s, adJob({ Requirements: 'TARGET.SlotID + "x"' }));
    await s.clock.advance(1);
    await submitNow(s, testJob("1h"));
    await s.clock.advance(1);
    expect(slotOf(s, bad)).toBeUndefined();
    expect(s.logs.filter((l) => l.includes("evaluates to error"))).toHaveLength(1);
  });
});

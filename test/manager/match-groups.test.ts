/**
 * The matchmaker's groups (HTCondor's autoclusters): jobs whose match reads the same things
 * are matched once per pass, even when submitted apart (separate jobspec objects); a job
 * with other Requirements is matched on its own.
 */
import { describe, expect, it } from "vitest";
import { ClassAd } from "../../src/classad/index.js";
import { Evaluator } from "../../src/classad/evaluator.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { JobManager } from "../../src/manager/manager.js";
import { Matchmaker } from "../../src/manager/policy/matchmaker.js";
import { slotPolicies } from "../../src/manager/policy/slot-policy.js";
import { carveSlots } from "../../src/manager/scheduler/slots.js";
import type { Jobspec } from "../../src/manager/port/records.js";
import { simManager, submitNow, testJob, type SimManager } from "./helpers.js";

const GiB = 2 ** 30;
const POOL = { cores: 4, gpus: 0, memory: 4 * GiB };

function adJob(classad: Record<string, string>): Jobspec {
  const js = testJob("1h");
  js.attributes.user = { classad };
  return js;
}

/** A matchmaker over `s`'s slots counting the Requirements evaluated with MY = a job / a slot. */
function countingMatchmaker(s: SimManager): { m: Matchmaker; counts: { job: number; slot: number } } {
  const { engine } = JobManager.internals(s.mgr);
  const evaluator = new Evaluator({ sealed: true });
  const counts = { job: 0, slot: 0 };
  const evaluateAttr = evaluator.evaluateAttr.bind(evaluator);
  evaluator.evaluateAttr = (ad: ClassAd, name: string, target?: ClassAd | null) => {
    if (name === "Requirements" && ad.has("JobId")) counts.job++;
    if (name === "Requirements" && ad.has("SlotID")) counts.slot++;
    return evaluateAttr(ad, name, target ?? null);
  };
  const m = new Matchmaker({
    hostAds: s.mgr.hostAds,
    active: (id: JobId) => engine.active.get(id),
    jobAd: (job) => s.mgr.jobAds.of(job),
    evaluator,
    log: () => undefined,
  });
  return { m, counts };
}

describe("matchmaker groups", () => {
  it("evaluates the slots' START once per pass for jobs that differ only in what START does not read", async () => {
    const slots = [{ count: 4, cores: 1 }];
    const slotPolicy = slotPolicies(carveSlots(POOL, slots), { start: 'TARGET.Owner =!= "nobody"' });
    const s = await simManager({ resources: POOL, slots, slotPolicy });
    s.mgr.pauseScheduling();
    const a = await submitNow(s, adJob({ Requirements: "TARGET.SlotID >= MY.Low", Low: "2" }));
    const b = await submitNow(s, adJob({ Requirements: "TARGET.SlotID >= MY.Low", Low: "3" }));
    const { m, counts } = countingMatchmaker(s);
    for (let pass = 1; pass <= 2; pass++) {
      m.beginPass(s.clock.now());
      expect([a, b].map((id) => m.candidates(id, undefined))).toEqual([[1, 2, 3], [2, 3]]);
      // Four slots once per pass: START reads the job's Owner only, which a and b share
      // (eight if the slot side were keyed by the jobs' own Requirements and Low).
      expect(counts.slot).toBe(4 * pass);
      expect(counts.job).toBe(8 * pass);
    }
    await s.mgr.close();
  });

  it("evaluates two jobs with one key once per pass, and a job with other Requirements apart", async () => {
    const s = await simManager({ resources: POOL, slots: [{ count: 4, cores: 1 }] });
    s.mgr.pauseScheduling();
    const a = await submitNow(s, adJob({ Requirements: "TARGET.SlotID >= 2" }));
    const b = await submitNow(s, adJob({ Requirements: "TARGET.SlotID >= 2" }));
    const c = await submitNow(s, adJob({ Requirements: "TARGET.SlotID >= 3" }));
    const { engine } = JobManager.internals(s.mgr);
    // Counts the job side of each match: Requirements evaluated with MY = a job ad.
    const evaluator = new Evaluator({ sealed: true });
    let jobSide = 0;
    const evaluateAttr = evaluator.evaluateAttr.bind(evaluator);
    evaluator.evaluateAttr = (ad: ClassAd, name: string, target?: ClassAd | null) => {
      if (name === "Requirements" && ad.has("JobId")) jobSide++;
      return evaluateAttr(ad, name, target ?? null);
    };
    const m = new Matchmaker({
      hostAds: s.mgr.hostAds,
      active: (id: JobId) => engine.active.get(id),
      jobAd: (job) => s.mgr.jobAds.of(job),
      evaluator,
      log: () => undefined,
    });
    for (let pass = 1; pass <= 2; pass++) {
      m.beginPass(s.clock.now());
      expect([a, b, c].map((id) => m.candidates(id, undefined))).toEqual([[1, 2, 3], [1, 2, 3], [2, 3]]);
      // Two groups × four slots, once per pass (twelve if a and b were matched apart).
      expect(jobSide).toBe(8 * pass);
    }
    await s.mgr.close();
  });

  it("keys jobs by what slot expressions read of them, through any slot attribute", async () => {
    const s = await simManager({ resources: POOL, slots: [{ count: 4, cores: 1 }] });
    s.mgr.pauseScheduling();
    // The jobs' Requirements read the slot's Fits, which reads each job's Size back.
    s.mgr.hostAds.publish("fits", new ClassAd().setExpr("Fits", "TARGET.Size < 10"));
    const small = await submitNow(s, adJob({ Requirements: "TARGET.Fits", Size: "1" }));
    const big = await submitNow(s, adJob({ Requirements: "TARGET.Fits", Size: "100" }));
    const { m } = countingMatchmaker(s);
    m.beginPass(s.clock.now());
    expect([small, big].map((id) => m.candidates(id, undefined))).toEqual([[0, 1, 2, 3], []]);
    await s.mgr.close();
  });
});

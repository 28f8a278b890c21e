/**
 * The matchmaker's groups (HTCondor's autoclusters): jobs whose match reads the same things
 * are matched once per pass, even when submitted apart (separate jobspec objects); a job
 * with other Requirements is matched on its own.
 */
import { describe, expect, it } from "vitest";
import type { ClassAd } from "../../src/classad/index.js";
import { Evaluator } from "../../src/classad/evaluator.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { JobManager } from "../../src/manager/manager.js";
import { Matchmaker } from "../../src/manager/policy/matchmaker.js";
import type { Jobspec } from "../../src/manager/port/records.js";
import { simManager, submitNow, testJob } from "./helpers.js";

const GiB = 2 ** 30;
const POOL = { cores: 4, gpus: 0, memory: 4 * GiB };

function adJob(classad: Record<string, string>): Jobspec {
  const js = testJob("1h");
  js.attributes.user = { classad };
  return js;
}

describe("matchmaker groups", () => {
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
});

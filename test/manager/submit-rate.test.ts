/**
 * [limits] submit-rate and submit-burst: a token bucket per user, owner and guests alike, on
 * the manager's (simulated) clock; a refusal names the limit and when to retry.
 */
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { DEFAULT_JOB_LIMITS } from "../../src/manager/core/limits.js";
import { simManager, submitNow, testJob } from "./helpers.js";

describe("[limits] submit-rate", () => {
  it("each user gets the burst, then the rate; the refusal names the retry time; time refills it", async () => {
    const s = await simManager({ limits: { ...DEFAULT_JOB_LIMITS, submitRate: 1, submitBurst: 3 } });
    for (const userid of [1000, 2000]) {
      for (let i = 0; i < 3; i++) await expect(submitNow(s, testJob(0), { userid })).resolves.toBeDefined();
      const refused = submitNow(s, testJob(0), { userid });
      await expect(refused).rejects.toMatchObject({ code: ErrorCode.LIMIT_EXCEEDED });
      await expect(refused).rejects.toThrow(new RegExp(`^user ${userid} submits faster than \\[limits\\] submit-rate = 1 jobs/s \\(burst 3\\); retry in 0\\.9\\ds$`));
    }
    await s.clock.advance(1000);
    await expect(submitNow(s, testJob(0), { userid: 2000 })).resolves.toBeDefined();
    await expect(submitNow(s, testJob(0), { userid: 2000 })).rejects.toThrow("submits faster than");
    await s.mgr.close();
  });

  it("no limit by default: a thousand jobs at once are accepted", async () => {
    const s = await simManager();
    const ids = await Promise.all(Array.from({ length: 1000 }, () => s.mgr.submit(testJob(0), { userid: 2000 })).map((p) => (s.clock.advance(10), p)));
    expect(ids.length).toBe(1000);
    await s.mgr.close();
  });
});

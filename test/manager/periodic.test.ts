import { describe, expect, it } from "vitest";
import type { Jobspec } from "../../src/manager/port/records.js";
import { simManager, submitNow, testJob } from "./helpers.js";

function adJob(classad: Record<string, string>, runDuration = "1h"): Jobspec {
  const js = testJob(runDuration);
  js.attributes.user = { classad };
  return js;
}

describe("periodic job policy (every PERIODIC_EXPR_INTERVAL on the manager clock)", () => {
  it("PeriodicHold holds a pending job with HoldReasonCode 3 and its reason and subcode", async () => {
    const s = await simManager();
    const id = await submitNow(s, adJob({ Requirements: "false", PeriodicHold: "true", PeriodicHoldReason: '"waited too long"', PeriodicHoldSubCode: "7" }));
    await s.clock.advance(59_000);
    expect(s.mgr.jobAd(id).evaluate("JobStatus")).toBe(1n);
    await s.clock.advance(1_000);
    const ad = s.mgr.jobAd(id);
    expect([ad.evaluate("JobStatus"), ad.evaluate("HoldReasonCode"), ad.evaluate("HoldReason"), ad.evaluate("HoldReasonSubCode")]).toEqual([5n, 3n, "waited too long", 7n]);
  });

  it("PeriodicRelease releases a held job, which then runs", async () => {
    const s = await simManager();
    const id = await submitNow(s, adJob({ PeriodicRelease: "HoldReasonCode == 15" }), { urgency: 0 });
    await s.clock.advance(1_000);
    expect(s.mgr.jobAd(id).evaluate("JobStatus")).toBe(5n);
    await s.clock.advance(60_000);
    expect(s.mgr.job(id).state).toBe("RUN");
  });

  it("PeriodicRemove removes a running job; the router manual's held-job idiom removes a held one", async () => {
    const s = await simManager();
    const running = await submitNow(s, adJob({ PeriodicRemove: "JobStatus == 2 && time() - EnteredCurrentStatus > 100" }));
    const held = await submitNow(s, adJob({ PeriodicRemove: "JobStatus == 5 || (JobStatus == 1 && time() - QDate > 3600)" }), { urgency: 0 });
    await s.clock.advance(60_000);
    expect(s.mgr.job(running).state).toBe("RUN");
    await s.clock.advance(60_000);
    for (let i = 0; i < 20 && s.mgr.job(running).state !== "INACTIVE"; i++) await s.clock.advance(1_000);
    expect(s.mgr.jobAd(running).evaluate("JobStatus")).toBe(3n);
    expect(s.mgr.jobAd(held).evaluate("JobStatus")).toBe(3n);
    expect(s.mgr.eventlog(running).find((e) => e.name === "exception")?.context).toMatchObject({ type: "cancel", note: expect.stringMatching(/PeriodicRemove expression .* evaluated to TRUE/) });
  });

  it("an expression that is undefined does nothing; one that errors does nothing and is logged once", async () => {
    const s = await simManager();
    const a = await submitNow(s, adJob({ PeriodicRemove: "NoSuchAttribute == 1" }));
    const b = await submitNow(s, adJob({ PeriodicRemove: '"x" + 1' }));
    await s.clock.advance(180_000);
    expect([s.mgr.job(a).state, s.mgr.job(b).state]).toEqual(["RUN", "RUN"]);
    expect(s.logs.filter((l) => l.includes("periodic policy"))).toHaveLength(1);
  });
});

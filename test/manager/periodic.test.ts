import { describe, expect, it } from "vitest";
import type { Jobspec } from "../../src/manager/port/records.js";
import { formatJobId, parseJobId, type JobId } from "../../src/manager/base/ids.js";
import { simManager, submitNow, testJob, type SimManager } from "./helpers.js";

function adJob(classad: Record<string, string>, runDuration = "1h"): Jobspec {
  const js = testJob(runDuration);
  js.attributes.user = { classad };
  return js;
}

/** The copy named in the original's `hold` exception note ("... (held again as ƒ...)"). */
async function copyOf(s: SimManager, id: JobId): Promise<JobId> {
  // The policy's note (not the `requeued_as` memo posted with the copy).
  const noted = (x: { name: string; context?: Record<string, unknown> }) => x.name === "exception" || (x.name === "memo" && x.context?.policy !== undefined);
  for (let i = 0; i < 50 && !s.mgr.eventlog(id).some(noted); i++) await s.clock.advance(10);
  const e = s.mgr.eventlog(id).find(noted)!;
  const text = String(e.context?.note ?? e.context?.policy);
  return parseJobId(/again as (\S+)\)/.exec(text)![1]!);
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

  it("PeriodicHold of a running job ends it with a hold exception and holds a copy (HoldReasonCode 3)", async () => {
    const s = await simManager();
    const id = await submitNow(s, adJob({ PeriodicHold: "JobStatus == 2 && NumJobStarts >= 1 && RequeuedFromJobId =?= undefined", PeriodicHoldReason: '"ran too long"', PeriodicHoldSubCode: "42" }));
    await s.clock.advance(1_000);
    expect(s.mgr.job(id).state).toBe("RUN");
    await s.clock.advance(59_000);
    const copy = await copyOf(s, id);
    for (let i = 0; i < 20 && s.mgr.job(id).state !== "INACTIVE"; i++) await s.clock.advance(1_000);
    expect(s.mgr.eventlog(id).find((e) => e.name === "exception")?.context).toMatchObject({ type: "hold", severity: 0, note: expect.stringMatching(/^ran too long \(held again as /) });
    expect(s.mgr.jobAd(id).evaluate("JobStatus")).toBe(3n);
    const ad = s.mgr.jobAd(copy);
    expect([ad.evaluate("JobStatus"), ad.evaluate("HoldReasonCode"), ad.evaluate("HoldReasonSubCode"), ad.evaluate("HoldReason")]).toEqual([5n, 3n, 42n, "ran too long"]);
    expect(ad.evaluate("RequeuedFromJobId")).toBe(formatJobId(id));
    // Only one copy: the killed original's exit is not a second occasion to hold.
    await s.clock.advance(120_000);
    expect(s.logs.filter((l) => l.includes("again as"))).toHaveLength(1);
    // Released, the copy runs (its PeriodicHold no longer holds: it is a copy).
    s.mgr.setUrgency(copy, 16);
    await s.clock.advance(1_000);
    expect(s.mgr.job(copy).state).toBe("RUN");
  });

  it("an update of a running job's ad (classad-update) is evaluated at once, as HTCondor's shadow does on each update", async () => {
    const s = await simManager();
    const t0 = s.clock.now();
    const id = await submitNow(s, testJob("1h"));
    const other = await submitNow(s, adJob({ PeriodicRemove: "Stop =?= true" }));
    await s.clock.advance(1_000);
    s.mgr.port.postEvent(id, "classad-update", { attributes: { PeriodicRemove: "RemoteWallClockTime >= 0" } });
    s.mgr.port.postEvent(other, "classad-update", { attributes: { Stop: "true" } });
    for (let i = 0; i < 20 && s.mgr.job(other).state !== "INACTIVE"; i++) await s.clock.advance(500);
    expect(s.clock.now() - t0).toBeLessThan(60_000);
    expect([s.mgr.jobAd(id).evaluate("JobStatus"), s.mgr.jobAd(other).evaluate("JobStatus")]).toEqual([3n, 3n]);
  });

  it("PeriodicRelease leaves a job its user held (HoldReasonCode 1)", async () => {
    const s = await simManager();
    const id = await submitNow(s, adJob({ PeriodicRelease: "true" }), { urgency: 0 });
    s.mgr.setUrgency(id, 0);
    await s.clock.advance(120_000);
    expect([s.mgr.jobAd(id).evaluate("JobStatus"), s.mgr.jobAd(id).evaluate("HoldReasonCode")]).toEqual([5n, 1n]);
  });
});

/**
 * The periodic policy evaluates a policy-only ad per job (ads/policy-ad.ts), kept between
 * passes: what it holds must follow the job (an update seen by the next pass) and equal the
 * whole ad for every attribute an evaluation can reach.
 */
import { describe, expect, it } from "vitest";
import type { Jobspec } from "../../src/manager/port/records.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { simManager, submitNow, testJob, type SimManager } from "./helpers.js";

function adJob(classad: Record<string, string>, runDuration = "1h"): Jobspec {
  const js = testJob(runDuration);
  js.attributes.user = { classad };
  return js;
}

const LIMITED = { PeriodicRemove: "time() - QDate > Limit", Limit: "1000000" };

async function until(s: SimManager, id: JobId, state: string, ms: number): Promise<void> {
  for (let t = 0; t < ms && s.mgr.job(id).state !== state; t += 1_000) await s.clock.advance(1_000);
}

describe("periodic policy: the policy-only ad between passes", () => {
  it("an attribute changed by a jobspec update (qedit) of a pending job is seen by the next pass", async () => {
    const s = await simManager();
    const id = await submitNow(s, adJob({ ...LIMITED, Requirements: "false" }));
    await s.clock.advance(60_000);
    expect(s.mgr.job(id).state).toBe("SCHED");
    s.mgr.port.jobspecUpdate(id, { "attributes.user.classad.Limit": "100" });
    await s.clock.advance(1_000);
    expect(s.mgr.job(id).state).toBe("SCHED");
    await until(s, id, "INACTIVE", 70_000);
    expect(s.mgr.jobAd(id).evaluate("JobStatus")).toBe(3n);
  });

  it("an attribute changed by a classad-update of a running job is seen by the next pass", async () => {
    const s = await simManager();
    const id = await submitNow(s, adJob(LIMITED));
    await s.clock.advance(60_000);
    expect(s.mgr.job(id).state).toBe("RUN");
    // Evaluated at once (70 s < 100 s: nothing), then at the next interval (120 s: removed).
    s.mgr.port.postEvent(id, "classad-update", { attributes: { Limit: "100" } });
    await s.clock.advance(1_000);
    expect(s.mgr.job(id).state).toBe("RUN");
    await until(s, id, "INACTIVE", 70_000);
    expect(s.mgr.jobAd(id).evaluate("JobStatus")).toBe(3n);
  });

  it("a state change (held by its user) is seen by the next pass", async () => {
    const s = await simManager();
    const id = await submitNow(s, adJob({ PeriodicRemove: "JobStatus == 5 && NumJobStarts == 0", Requirements: "false" }));
    await s.clock.advance(60_000);
    s.mgr.setUrgency(id, 0);
    await until(s, id, "INACTIVE", 70_000);
    expect(s.mgr.jobAd(id).evaluate("JobStatus")).toBe(3n);
  });

  it("attributes read only through eval(), and submit-time ones (Owner, Out), act as in the whole ad", async () => {
    const s = await simManager();
    const byEval = await submitNow(s, adJob({ PeriodicRemove: 'eval("Mark") == 1', Mark: "1" }));
    const bySubmit = await submitNow(s, adJob({ PeriodicRemove: 'Owner =!= undefined && size(Out) > 0 && Cmd =!= ""' }));
    const byChain = await submitNow(s, adJob({ PeriodicRemove: "Over", Over: "NumJobStarts >= Starts", Starts: "1" }));
    const none = await submitNow(s, adJob({ PeriodicRemove: 'eval("Mark") == 1', Mark: "2" }));
    await s.clock.advance(60_000);
    for (const id of [byEval, bySubmit, byChain]) await until(s, id, "INACTIVE", 10_000);
    expect([byEval, bySubmit, byChain, none].map((id) => s.mgr.job(id).state)).toEqual(["INACTIVE", "INACTIVE", "INACTIVE", "RUN"]);
  });
});

describe("periodic policy: jobs with equal policy-only ads", () => {
  it("are decided once per pass, except when random() is read: each job draws its own", async () => {
    const s = await simManager({ resources: { cores: 1, gpus: 0, memory: 1 << 30 } });
    const spec = adJob({ PeriodicRemove: "random(2) == 0", Requirements: "false" });
    const ids: JobId[] = [];
    for (let i = 0; i < 40; i++) ids.push(await submitNow(s, spec));
    await s.clock.advance(60_000);
    await s.clock.advance(1_000);
    const removed = ids.filter((id) => s.mgr.job(id).state === "INACTIVE").length;
    // All 40 alike has odds 2^-39.
    expect(removed).toBeGreaterThan(0);
    expect(removed).toBeLessThan(40);
  });
});

import { describe, expect, it } from "vitest";
import { isJobtapError } from "../../src/errors.js";
import { simManager, submitNow, testJob } from "./helpers.js";

describe("JobManager.purgeJobs (flux job purge)", () => {
  it("by age and by count, oldest first; a dry run unless forced; guests see only their own", async () => {
    const s = await simManager({ owner: 0 });
    const ids = [];
    for (const userid of [0, 0, 5000, 5000]) {
      ids.push(await submitNow(s, testJob(0), { userid }));
      await s.clock.advance(60_000); // each job ends a minute after the one before
    }
    const inactive = () => s.mgr.jobs({ states: ["INACTIVE"] }).map((j) => j.id);
    expect(inactive()).toHaveLength(4);
    // Inactive for more than 150 s: the two oldest. Nothing purged without force.
    expect(s.mgr.purgeJobs({ ageLimit: 150 })).toEqual(ids.slice(0, 2));
    expect(inactive()).toHaveLength(4);
    // A guest's count limit counts only the guest's own jobs.
    expect(s.mgr.purgeJobs({ numLimit: 1, userid: 5000, force: true })).toEqual([ids[2]]);
    expect(s.mgr.purgeJobs({ ageLimit: 150, numLimit: 0, force: true })).toEqual([ids[0], ids[1], ids[3]]);
    expect(inactive()).toEqual([]);
    await s.mgr.close();
  });

  it("refuses an active job, another user's job for a guest, and an empty request", async () => {
    const s = await simManager({ owner: 0 });
    const done = await submitNow(s, testJob(0));
    await s.clock.advance(1000);
    const pending = await submitNow(s, testJob(0), { urgency: 0 });
    const code = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return isJobtapError(e) ? `${e.code}: ${e.message}` : String(e);
      }
      return "ok";
    };
    expect(code(() => s.mgr.purgeJobs({ ids: [done, pending], force: true }))).toMatch(/^BAD_STATE: .*cannot purge an active job \(SCHED\)$/);
    expect(s.mgr.jobs({ states: ["INACTIVE"] })).toHaveLength(1); // nothing purged
    expect(code(() => s.mgr.purgeJobs({ ids: [done], userid: 5000, force: true }))).toMatch(/^PERMISSION_DENIED: /);
    expect(code(() => s.mgr.purgeJobs({}))).toMatch(/^INVALID_ARGUMENT: purge: give job ids/);
    expect(s.mgr.purgeJobs({ ids: [done], force: true })).toEqual([done]);
    await s.mgr.close();
  });
});

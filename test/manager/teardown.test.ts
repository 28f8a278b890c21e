/** Job teardown topics (spec §2.3 INACTIVE, §4.3 job.validate / job.destroy). */
import { describe, expect, it } from "vitest";
import { fakePort } from "./fake-port.js";
import { simManager, submitNow, testJob } from "./helpers.js";
import { JobManager } from "../../src/manager/manager.js";

describe("teardown topics", () => {
  it("a finished job: job.state.inactive, then job.inactive-add, then job.destroy", async () => {
    const calls: string[] = [];
    const rec = (tag: string) => (a: { state: string }) => void calls.push(`${tag} ${a.state}`);
    const s = await simManager({
      plugins: fakePort({
        "job.state.inactive": rec("state.inactive"),
        "job.inactive-add": rec("inactive-add"),
        "job.destroy": rec("destroy"),
      }),
    });
    const id = await submitNow(s, testJob(0));
    await s.clock.advance(1);
    expect(s.mgr.job(id).state).toBe("INACTIVE");
    expect(calls).toEqual(["state.inactive INACTIVE", "inactive-add INACTIVE", "destroy INACTIVE"]);
  });

  it("a rejected job: invalidate, then job.destroy in NEW; no inactive-add, never listed or stored", async () => {
    const calls: string[] = [];
    const journalled: string[] = [];
    const s = await simManager({
      plugins: fakePort({
        "job.validate": () => ({ error: "x", out: { errmsg: "no" } }),
        "job.inactive-add": (a) => void calls.push(`inactive-add ${a.state}`),
        "job.destroy": (a) => void calls.push(`destroy ${a.state}`),
      }),
    });
    s.mgr.on("event", (j) => void journalled.push(j.entry.name));
    await expect(submitNow(s, testJob(0))).rejects.toMatchObject({ code: "JOB_REJECTED", message: "no" });
    expect(calls).toEqual(["destroy NEW"]);
    expect(journalled).toEqual(["submit", "invalidate"]);
    await s.clock.advance(100);
    expect(s.mgr.jobs()).toEqual([]);
    expect([...JobManager.internals(s.mgr).store.loadAll()]).toEqual([]);
  });
});

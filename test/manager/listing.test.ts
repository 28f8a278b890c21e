/** jobs() filters and the configurable batch window. */
import { describe, expect, it } from "vitest";
import { simManager, submitNow, testJob } from "./helpers.js";
import { JobManager } from "../../src/manager/manager.js";

describe("jobs() listing", () => {
  it("filters by state and by user; inactive jobs are listed newest first", async () => {
    const s = await simManager({ resources: { cores: 1 } });
    const done1 = await submitNow(s, testJob(0), { userid: 2001 });
    const done2 = await submitNow(s, testJob(0), { userid: 2002 });
    await s.clock.advance(1);
    const running = await submitNow(s, testJob("1h"), { userid: 2001 });
    const waiting = await submitNow(s, testJob("1h"), { userid: 2002 });
    await s.clock.advance(1);
    const ids = (f: Parameters<typeof s.mgr.jobs>[0]) => s.mgr.jobs(f).map((j) => j.id);
    expect(ids({ states: ["RUN"] })).toEqual([running]);
    expect(ids({ states: ["SCHED", "RUN"] }).sort()).toEqual([running, waiting].sort());
    expect(ids({ states: ["INACTIVE"] })).toEqual([done2, done1]);
    expect(ids({ userid: 2001 }).sort()).toEqual([done1, running].sort());
    expect(ids({ userid: 2002, states: ["INACTIVE"] })).toEqual([done2]);
    expect(ids({ userid: 9999 })).toEqual([]);
    expect(ids({}).length).toBe(4);
  });
});

describe("batch window", () => {
  it("is configurable: a submission waits for its own window's commit", async () => {
    const s = await simManager({ batchWindowMs: 50 });
    let acked = false;
    const p = s.mgr.submit(testJob(0)).then((id) => ((acked = true), id));
    await s.clock.advance(49);
    expect(acked).toBe(false);
    await s.clock.advance(1);
    const id = await p;
    expect(acked).toBe(true);
    expect(JobManager.internals(s.mgr).store.load(id)?.eventlog).toMatch(/"name":"submit"/);
  });
});

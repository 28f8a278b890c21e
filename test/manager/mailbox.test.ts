import { describe, expect, it } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import { fakePort, type FakePort } from "./fake-port.js";
import { names, simManager, submitNow, testJob } from "./helpers.js";
import { JobManager } from "../../src/manager/manager.js";

describe("per-job mailbox", () => {
  it("events posted during a callback run after it, in FIFO order", async () => {
    const order: string[] = [];
    const s = await simManager({
      plugins: fakePort({
        "job.state.sched": (a, m) => {
          m.postEvent(a.id, "mark-1");
          order.push(`sched sees ${m.lookup(a.id)?.state}`);
          m.postEvent(a.id, "mark-2");
          expect(m.eventPosted(a.id, "mark-1")).toBe(false); // not processed yet
        },
      }),
    });
    const id = await submitNow(s, testJob("1h"));
    const log = names(s, id);
    expect(log.slice(0, 6)).toEqual(["submit", "validate", "depend", "priority", "mark-1", "mark-2"]);
    expect(order).toEqual(["sched sees SCHED"]);
  });

  it("dependency-remove on an idle job cascades to SCHED before it returns", async () => {
    let port!: FakePort;
    const s = await simManager({
      plugins: (m) => (port = fakePort({ "job.state.depend": (a, mm) => mm.dependencyAdd(a.id, "gate") })(m)),
    });
    const id = await submitNow(s, testJob("1h"));
    expect(s.mgr.job(id).state).toBe("DEPEND");
    expect(s.mgr.job(id).dependencies).toEqual(["gate"]);
    port.mgr!.dependencyRemove(id, "gate");
    // Synchronous cascade: in SCHED without advancing the clock (the alloc pass is a timer).
    expect(s.mgr.job(id).state).toBe("SCHED");
    expect(names(s, id).slice(0, 6)).toEqual(["submit", "validate", "dependency-add", "dependency-remove", "depend", "priority"]);
  });

  it("an async handler holds only its job; other jobs keep moving; per-job order is kept", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let slowId: JobId | undefined;
    const s = await simManager({
      plugins: fakePort({
        "job.state.depend": async (a, m) => {
          if (slowId === undefined) {
            slowId = a.id;
            m.postEvent(a.id, "during-async");
            await gate;
          }
        },
      }),
    });
    const slow = s.mgr.submit(testJob("10s"));
    const fast = s.mgr.submit(testJob("10s"));
    await s.clock.advance(10);
    const [slowJob, fastJob] = await Promise.all([slow, fast]);
    await s.clock.advance(0);
    expect(s.mgr.job(fastJob).state).toBe("RUN");
    expect(s.mgr.job(slowJob).state).toBe("DEPEND");
    release();
    await s.clock.advance(0);
    expect(s.mgr.job(slowJob).state).toBe("RUN");
    expect(names(s, slowJob).slice(0, 5)).toEqual(["submit", "validate", "during-async", "depend", "priority"]);
  });

  it("submission is acknowledged only after its batch is written", async () => {
    const s = await simManager({ batchWindowMs: 10 });
    let acked = false;
    const p = s.mgr.submit(testJob(0)).then((id) => ((acked = true), id));
    await s.clock.advance(9);
    expect(acked).toBe(false);
    expect(s.mgr.jobs()).toEqual([]); // held in NEW, not listed
    await s.clock.advance(1);
    const id = await p;
    expect(acked).toBe(true);
    expect(JobManager.internals(s.mgr).store.load(id)?.eventlog).toMatch(/"name":"submit"/);
  });
});

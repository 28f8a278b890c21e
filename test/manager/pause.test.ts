import { describe, expect, it } from "vitest";
import { jobspec, names, simManager, submitNow } from "./helpers.js";
import { JobManager } from "../../src/manager/manager.js";

const job = (seconds: number) => jobspec(["true"], { exec: { test: { run_duration: seconds } } });

describe("pauseScheduling / resumeScheduling", () => {
  it("no allocations while paused; pending requests kept in order; running jobs untouched; resume runs them", async () => {
    const s = await simManager({ resources: { cores: 1 } });
    const running = await submitNow(s, job(5));
    await s.clock.advance(1);
    expect(s.mgr.job(running).state).toBe("RUN");
    const queued = await submitNow(s, job(1));
    s.mgr.pauseScheduling();
    const late = await submitNow(s, job(1), { urgency: 20 });
    await s.clock.advance(10_000);
    expect(s.mgr.job(running).result).toBe("COMPLETED");
    for (const id of [queued, late]) {
      expect(s.mgr.job(id).state).toBe("SCHED");
      expect(names(s, id)).not.toContain("alloc");
    }
    expect(JobManager.internals(s.mgr).scheduler.pending()).toEqual([late, queued]);
    s.mgr.resumeScheduling();
    for (let i = 0; i < 5; i++) await s.clock.advance(1000);
    expect(s.mgr.job(late).result).toBe("COMPLETED");
    expect(s.mgr.job(queued).result).toBe("COMPLETED");
    await s.mgr.close();
  });
});

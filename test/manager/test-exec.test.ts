/**
 * The test executor's `override` (Flux's `flux job-exec-override start|finish`) and
 * `reattach_finish`, checked against flux-core's t2400-job-exec-test.t and testexec.c.
 */
import { describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { jobspec, names, simManager, submitNow, tempDir, testJob } from "./helpers.js";
import { fakePort } from "./fake-port.js";

describe("test executor: override", () => {
  it("start waits for the start request; an unlimited run then waits for finish", async () => {
    const s = await simManager();
    const id = await submitNow(s, jobspec(["true"], { exec: { test: { override: 1 } } }));
    await s.clock.advance(1000);
    expect(s.mgr.job(id).state).toBe("RUN");
    expect(names(s, id)).not.toContain("start");
    expect(() => s.mgr.execOverride(id, "finish", { status: 0 })).toThrow(/exec-override finish: job not running/);
    s.mgr.execOverride(id, "start");
    expect(names(s, id)).toContain("start");
    expect(() => s.mgr.execOverride(id, "start")).toThrow(/job already running/);
    await s.clock.advance(3_600_000);
    expect(names(s, id)).not.toContain("finish");
    s.mgr.execOverride(id, "finish", { status: 256 });
    expect(await s.mgr.wait(id)).toMatchObject({ result: "FAILED", errstr: "task(s) exited with exit code 1" });
    await s.mgr.close();
  });

  it("with a run_duration the job finishes by itself once started", async () => {
    const s = await simManager();
    const id = await submitNow(s, testJob("2s", { override: 1, wait_status: 512 }));
    await s.clock.advance(10_000);
    expect(s.mgr.job(id).state).toBe("RUN");
    s.mgr.execOverride(id, "start");
    await s.clock.advance(2000);
    expect(await s.mgr.wait(id)).toMatchObject({ result: "FAILED" });
    expect(s.mgr.job(id).waitstatus).toBe(512);
    await s.mgr.close();
  });

  it("refuses jobs not in override mode, other users, unknown jobs and events; cancel ends a job never started", async () => {
    const s = await simManager();
    const plain = await submitNow(s, testJob("1h"));
    expect(() => s.mgr.execOverride(plain, "start")).toThrow(/job not in exec override mode/);
    const mine = await submitNow(s, jobspec(["true"], { exec: { test: { override: 1 } } }), { userid: 1000 });
    expect(() => s.mgr.execOverride(mine, "start", { userid: 2000 })).toThrow(expect.objectContaining({ code: "PERMISSION_DENIED" }));
    expect(() => s.mgr.execOverride(mine, "foo")).toThrow(/invalid event "foo"/);
    expect(() => s.mgr.execOverride(12345n as never, "start")).toThrow(expect.objectContaining({ code: "UNKNOWN_JOB" }));
    s.mgr.cancel(mine);
    await s.clock.advance(1);
    expect(await s.mgr.wait(mine)).toMatchObject({ result: "CANCELED" });
    expect(names(s, mine)).not.toContain("start");
    expect(names(s, mine)).not.toContain("finish");
    await s.mgr.close();
  });
});

describe("test executor: reattach", () => {
  it("reattach_finish ends a reattached job at once with its wait status; without it the run goes on", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const clock = new SimulatedClock();
      const a = await simManager({ statedir: dir, store: "sqlite", clock });
      const quick = await submitNow(a, testJob("1h", { reattach_finish: 1, wait_status: 256 }));
      const rest = await submitNow(a, testJob("1h"));
      await clock.advance(600_000);
      await a.mgr.close();

      const b = await simManager({ statedir: dir, store: "sqlite", clock });
      await clock.advance(1);
      expect(await b.mgr.wait(quick)).toMatchObject({ result: "FAILED" });
      expect(b.mgr.job(quick).waitstatus).toBe(256);
      expect(b.mgr.job(rest).state).toBe("RUN");
      const startedMs = b.mgr.eventlog(rest).find((e) => e.name === "start")!.timestamp * 1000;
      await clock.advance(startedMs + 3_600_000 - 1 - clock.now());
      expect(b.mgr.job(rest).state).toBe("RUN");
      await clock.advance(1);
      expect(await b.mgr.wait(rest)).toMatchObject({ result: "COMPLETED" });
      for (const id of [quick, rest]) expect(names(b, id).filter((n) => n === "start")).toHaveLength(1);
      await b.mgr.close();
    } finally {
      cleanup();
    }
  });
});

describe("a finish with status 0", () => {
  it("has one frozen context for every job: a plugin writing to it fails and no job's finish changes", async () => {
    const s = await simManager({
      resources: { cores: 1 },
      plugins: fakePort({
        "job.event.finish": (a) => {
          (a.entry!.context as Record<string, unknown>).status = 256;
        },
      }),
    });
    const ids = [await submitNow(s, testJob(1))];
    await s.clock.advance(2000);
    ids.push(await submitNow(s, testJob(1)));
    await s.clock.advance(2000);
    const failed = await submitNow(s, testJob(1, { wait_status: 512 }));
    await s.clock.advance(2000);
    const finishOf = (id: (typeof ids)[number]) => s.mgr.eventlog(id).find((e) => e.name === "finish")?.context;
    for (const id of ids) {
      expect(s.mgr.job(id).result).toBe("COMPLETED");
      expect(finishOf(id)).toEqual({ status: 0 });
    }
    // A nonzero status has a context of its own: the plugin's write to it raises no error
    // (the job's eventlog was written before the plugin ran).
    expect(finishOf(failed)).toEqual({ status: 512 });
    expect(s.mgr.job(failed).result).toBe("FAILED");
    expect(s.logs.filter((l) => l.includes("event.finish callback failed") && l.includes("read only"))).toHaveLength(2);
  });
});

describe("the final release", () => {
  it("has one frozen context for every job: a plugin writing to it fails and no job's release changes", async () => {
    const s = await simManager({
      resources: { cores: 1 },
      plugins: fakePort({
        "job.event.release": (a) => {
          (a.entry!.context as Record<string, unknown>).ranks = "0";
        },
      }),
    });
    const ids = [await submitNow(s, testJob(1))];
    await s.clock.advance(2000);
    ids.push(await submitNow(s, testJob(1)));
    await s.clock.advance(2000);
    for (const id of ids) {
      expect(s.mgr.job(id).result).toBe("COMPLETED");
      expect(s.mgr.eventlog(id).find((e) => e.name === "release")?.context).toEqual({ ranks: "all", final: true });
    }
    expect(s.logs.filter((l) => l.includes("event.release callback failed") && l.includes("read only"))).toHaveLength(2);
  });
});

import { describe, expect, it } from "vitest";
import { isJobtapError } from "../../src/errors.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { PRIORITY_UNAVAILABLE } from "../../src/manager/port/port.js";
import { fakePort, type FakePort } from "./fake-port.js";
import { names, simManager, submitNow, testJob } from "./helpers.js";
import { JobManager } from "../../src/manager/manager.js";

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return isJobtapError(e) ? e.code : "not a JobtapError";
  }
  return undefined;
}

describe("exceptions in every state", () => {
  it("NEW: fatal refused during admission, non-fatal recorded", async () => {
    let refused: string | undefined;
    const s = await simManager({
      plugins: fakePort({
        "job.new": (a, m) => {
          refused = codeOf(() => m.raiseException(a.id, "test", 0, "too early"));
          m.raiseException(a.id, "test", 5, "just saying");
        },
      }),
    });
    const id = await submitNow(s, testJob("1h"));
    expect(refused).toBe("BAD_STATE");
    expect(names(s, id)).toContain("exception");
    expect(s.mgr.job(id).state).toBe("RUN");
  });

  it("NEW in the batch window: a fatal exception lands after validate (Flux checks at processing)", async () => {
    let id: JobId | undefined;
    const s = await simManager({ plugins: fakePort({ "job.new": (a) => void (id = a.id) }) });
    const p = s.mgr.submit(testJob("1h"));
    await s.clock.advance(0);
    expect(s.mgr.job(id!).state).toBe("NEW");
    s.mgr.raise(id!, { type: "test", severity: 0, note: "early" });
    await s.clock.advance(10);
    await p;
    expect(names(s, id!)).toEqual(["submit", "validate", "exception", "clean"]);
    expect(s.mgr.job(id!).state).toBe("INACTIVE");
  });

  it("DEPEND: cancel goes to CLEANUP and INACTIVE without resources", async () => {
    const s = await simManager({ plugins: fakePort({ "job.state.depend": (a, m) => m.dependencyAdd(a.id, "never") }) });
    const id = await submitNow(s, testJob("1h"));
    expect(s.mgr.job(id).state).toBe("DEPEND");
    s.mgr.cancel(id, { note: "bye" });
    expect(s.mgr.job(id).state).toBe("INACTIVE");
    expect(s.mgr.job(id).result).toBe("CANCELED");
    await s.clock.advance(10);
    expect(names(s, id).slice(-2)).toEqual(["exception", "clean"]);
  });

  it("PRIORITY (priority unavailable): cancel ends the job", async () => {
    const s = await simManager({ plugins: fakePort({ "job.state.priority": () => ({ priority: PRIORITY_UNAVAILABLE }) }) });
    const id = await submitNow(s, testJob("1h"));
    expect(s.mgr.job(id).state).toBe("PRIORITY");
    s.mgr.cancel(id);
    expect(s.mgr.job(id).result).toBe("CANCELED");
  });

  it("SCHED (held): cancel dequeues the alloc request", async () => {
    const s = await simManager();
    const id = await submitNow(s, testJob("1h"), { urgency: 0 });
    await s.clock.advance(1);
    expect([s.mgr.job(id).state, s.mgr.job(id).priority]).toEqual(["SCHED", 0]);
    s.mgr.cancel(id);
    await s.clock.advance(10);
    expect(s.mgr.job(id).state).toBe("INACTIVE");
    expect(names(s, id)).not.toContain("alloc");
    expect(JobManager.internals(s.mgr).scheduler.pending()).toEqual([]);
  });

  it("SCHED (waiting for resources): cancel withdraws its alloc request", async () => {
    const s = await simManager({ resources: { cores: 1 } });
    const busy = await submitNow(s, testJob("10s"));
    const waiting = await submitNow(s, testJob("10s"));
    await s.clock.advance(1);
    expect(s.mgr.job(waiting).state).toBe("SCHED");
    expect(JobManager.internals(s.mgr).scheduler.pending()).toEqual([waiting]);
    s.mgr.cancel(waiting);
    expect(JobManager.internals(s.mgr).scheduler.pending()).toEqual([]);
    await s.clock.advance(20_000);
    expect(s.mgr.job(busy).result).toBe("COMPLETED");
    expect(s.mgr.job(waiting).result).toBe("CANCELED");
    expect(names(s, waiting)).not.toContain("alloc");
  });

  it("RUN: cancel kills, then finish, release, free, clean", async () => {
    const s = await simManager();
    const id = await submitNow(s, testJob("1h"));
    s.mgr.cancel(id);
    expect(s.mgr.job(id).state).toBe("CLEANUP");
    await s.clock.advance(1);
    expect(s.mgr.job(id).state).toBe("INACTIVE");
    await s.clock.advance(10);
    expect(names(s, id).slice(-6)).toEqual(["start", "exception", "finish", "release", "free", "clean"]);
    expect(s.mgr.job(id).result).toBe("CANCELED");
    expect(s.mgr.job(id).waitstatus).toBe(15);
  });

  it("RUN: a non-fatal exception is only recorded", async () => {
    const s = await simManager();
    const id = await submitNow(s, testJob("1h"));
    s.mgr.raise(id, { type: "warn", severity: 4, note: "disk almost full" });
    expect(s.mgr.job(id).state).toBe("RUN");
    expect(s.mgr.eventlog(id).at(-1)?.context).toMatchObject({ type: "warn", severity: 4, note: "disk almost full" });
  });

  it("CLEANUP: a fatal exception changes nothing; the first end event stays", async () => {
    let port!: FakePort;
    const s = await simManager({
      plugins: (m) => (port = fakePort({ "job.state.cleanup": (a, mm) => mm.epilogStart(a.id, "epi") })(m)),
    });
    const id = await submitNow(s, testJob("1s"));
    await s.clock.advance(1000);
    expect(s.mgr.job(id).state).toBe("CLEANUP");
    s.mgr.raise(id, { type: "late", severity: 0 });
    expect(s.mgr.job(id).state).toBe("CLEANUP");
    port.mgr!.epilogFinish(id, "epi", 0);
    expect(s.mgr.job(id).state).toBe("INACTIVE");
    expect(s.mgr.job(id).result).toBe("COMPLETED");
  });

  it("INACTIVE and unknown jobs are refused with their codes; bad type/severity too", async () => {
    const s = await simManager();
    const id = await submitNow(s, testJob(0));
    await s.clock.advance(1);
    expect(s.mgr.job(id).state).toBe("INACTIVE");
    expect(codeOf(() => s.mgr.cancel(id))).toBe("JOB_INACTIVE");
    expect(codeOf(() => s.mgr.cancel((id + 1n) as JobId))).toBe("UNKNOWN_JOB");
    const live = await submitNow(s, testJob("1h"));
    expect(codeOf(() => s.mgr.raise(live, { type: "has space", severity: 0 }))).toBe("BAD_EXCEPTION");
    expect(codeOf(() => s.mgr.raise(live, { type: "x", severity: 8 }))).toBe("BAD_EXCEPTION");
    expect(codeOf(() => s.mgr.cancel(live, { userid: 4242 }))).toBe("PERMISSION_DENIED");
  });
});

describe("results", () => {
  it("TIMEOUT when the duration runs out first", async () => {
    const s = await simManager();
    const id = await submitNow(s, testJob("10s", {}, { duration: 2 }));
    await s.clock.advance(2000);
    await s.clock.advance(1);
    expect(s.mgr.job(id).result).toBe("TIMEOUT");
    const ex = s.mgr.eventlog(id).find((e) => e.name === "exception");
    expect(ex?.context).toMatchObject({ type: "timeout", severity: 0, note: "resource allocation expired" });
  });

  it("FAILED from a nonzero wait status, and from mock exceptions", async () => {
    const s = await simManager();
    const failed = await submitNow(s, testJob("1s", { wait_status: 256 }));
    const init = await submitNow(s, testJob("1s", { mock_exception: "init" }));
    const run = await submitNow(s, testJob("1s", { mock_exception: "run" }));
    await s.clock.advance(1000);
    expect(s.mgr.job(failed).result).toBe("FAILED");
    expect(s.mgr.job(failed).waitstatus).toBe(256);
    expect(s.mgr.job(init).result).toBe("FAILED");
    expect(names(s, init)).not.toContain("start");
    expect(s.mgr.job(run).result).toBe("FAILED");
    expect(names(s, run)).toContain("start");
    expect((await s.mgr.wait(failed)).errstr).toBe("task(s) exited with exit code 1");
    expect((await s.mgr.wait(init)).errstr).toMatch(/type=exec mock initialization exception generated/);
  });
});

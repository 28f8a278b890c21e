import { describe, expect, it } from "vitest";
import { isJobtapError } from "../../src/errors.js";
import { PRIORITY_MAX } from "../../src/manager/base/states.js";
import { names, simManager, submitNow, testJob } from "./helpers.js";
import { JobManager } from "../../src/manager/manager.js";

function errorOf(fn: () => unknown): { code?: string; message?: string } {
  try {
    fn();
  } catch (e) {
    return isJobtapError(e) ? { code: e.code, message: e.message } : { code: "?" };
  }
  return {};
}

describe("urgency", () => {
  it("validates range, job and state with Flux's messages", async () => {
    const s = await simManager({ resources: { cores: 1 } });
    const running = await submitNow(s, testJob("1h"));
    const waiting = await submitNow(s, testJob("1h"));
    await s.clock.advance(1);
    expect(errorOf(() => s.mgr.setUrgency(waiting, 32))).toMatchObject({ code: "BAD_URGENCY", message: expect.stringMatching(/32 is out of range/) });
    expect(errorOf(() => s.mgr.setUrgency(running, 20))).toMatchObject({
      code: "BAD_STATE",
      message: expect.stringMatching(/urgency cannot be changed once resources are allocated/),
    });
    expect(errorOf(() => s.mgr.setUrgency((waiting + 7n) as typeof waiting, 3)).code).toBe("UNKNOWN_JOB");
    s.mgr.cancel(waiting);
    await s.clock.advance(1);
    expect(s.mgr.job(waiting).state).toBe("INACTIVE");
    expect(errorOf(() => s.mgr.setUrgency(waiting, 3))).toMatchObject({ code: "JOB_INACTIVE", message: expect.stringMatching(/job is inactive/) });
  });

  it("guests: only their own jobs, and only up to max(default, current)", async () => {
    const s = await simManager({ resources: { cores: 1 } });
    await submitNow(s, testJob("1h"));
    const guestJob = await submitNow(s, testJob("1h"), { userid: 2000, urgency: 10 });
    expect(errorOf(() => s.mgr.setUrgency(guestJob, 5, { userid: 3000 })).code).toBe("PERMISSION_DENIED");
    expect(errorOf(() => s.mgr.setUrgency(guestJob, 17, { userid: 2000 }))).toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringMatching(/guests can only adjust urgency <= default/),
    });
    expect(s.mgr.setUrgency(guestJob, 16, { userid: 2000 })).toBe(10);
    expect(s.mgr.setUrgency(guestJob, 31)).toBe(16); // the owner may expedite
    // Above the default, a guest may go up to the job's current urgency, not beyond.
    expect(s.mgr.setUrgency(guestJob, 25)).toBe(31);
    expect(s.mgr.setUrgency(guestJob, 20, { userid: 2000 })).toBe(25);
    expect(errorOf(() => s.mgr.setUrgency(guestJob, 21, { userid: 2000 })).code).toBe("PERMISSION_DENIED");
    expect(s.mgr.job(guestJob).urgency).toBe(20);
  });

  it("guests cannot submit above the default urgency, nor waitable or novalidate jobs", async () => {
    const s = await simManager();
    await expect(s.mgr.submit(testJob(0), { userid: 2000, urgency: 17 })).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
      message: "urgency 17: only the instance owner can submit with urgency >16",
    });
    await expect(s.mgr.submit(testJob(0), { userid: 2000, flags: ["waitable"] })).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    await expect(s.mgr.submit(testJob(0), { userid: 2000, flags: ["novalidate"] })).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    const guest = await submitNow(s, testJob(0), { userid: 2000, urgency: 16 });
    expect(s.mgr.job(guest)).toMatchObject({ userid: 2000, urgency: 16 });
    const owners = await submitNow(s, testJob(0), { urgency: 31, flags: ["waitable"] }); // the owner may
    expect(s.mgr.job(owners)).toMatchObject({ userid: 1000, urgency: 31 });
    expect(s.mgr.eventlog(owners)[0]?.context).toMatchObject({ flags: 4 });
  });

  it("a change in SCHED goes back through PRIORITY; hold and expedite override the priority", async () => {
    const s = await simManager({ resources: { cores: 1 } });
    await submitNow(s, testJob("1h"));
    const id = await submitNow(s, testJob("1h"));
    await s.clock.advance(1);
    expect([s.mgr.job(id).state, s.mgr.job(id).priority]).toEqual(["SCHED", 16]);
    s.mgr.setUrgency(id, 0);
    expect([s.mgr.job(id).state, s.mgr.job(id).priority]).toEqual(["SCHED", 0]);
    expect(JobManager.internals(s.mgr).scheduler.pending()).toEqual([]); // held: no alloc request
    s.mgr.setUrgency(id, 31);
    expect(s.mgr.job(id).priority).toBe(PRIORITY_MAX);
    expect(JobManager.internals(s.mgr).scheduler.pending()).toEqual([id]);
    expect(names(s, id).slice(4)).toEqual(["urgency", "priority", "urgency", "priority"]);
  });

  it("in DEPEND or PRIORITY only the value changes", async () => {
    const s = await simManager({
      plugins: (await import("./fake-port.js")).fakePort({ "job.state.depend": (a, m) => m.dependencyAdd(a.id, "x") }),
    });
    const id = await submitNow(s, testJob("1h"));
    s.mgr.setUrgency(id, 3);
    expect([s.mgr.job(id).state, s.mgr.job(id).urgency, s.mgr.job(id).priority]).toEqual(["DEPEND", 3, -1]);
  });
});

describe("hold and expedite overrides", () => {
  it("urgency 0 and 31 override whatever priority a plugin returns", async () => {
    const { fakePort } = await import("./fake-port.js");
    const s = await simManager({
      resources: { cores: 1 },
      plugins: fakePort({ "job.state.priority": () => ({ priority: 1000 }), "job.priority.get": () => ({ priority: 1000 }) }),
    });
    await submitNow(s, testJob("1h"));
    const held = await submitNow(s, testJob("1h"), { urgency: 0 });
    const normal = await submitNow(s, testJob("1h"));
    const expedited = await submitNow(s, testJob("1h"), { urgency: 31 });
    expect([held, normal, expedited].map((id) => s.mgr.job(id).priority)).toEqual([0, 1000, PRIORITY_MAX]);
    expect(JobManager.internals(s.mgr).scheduler.pending()).toEqual([expedited, normal]);
  });
});

describe("a priority event's context", () => {
  it("is one frozen object per value: a plugin writing to it fails and no job's priority changes", async () => {
    const { fakePort } = await import("./fake-port.js");
    const s = await simManager({
      resources: { cores: 1 },
      plugins: fakePort({
        "job.event.priority": (a) => {
          (a.entry!.context as Record<string, unknown>).priority = 1;
        },
      }),
    });
    const a = await submitNow(s, testJob(1));
    const b = await submitNow(s, testJob(1));
    const c = await submitNow(s, testJob(1), { urgency: 20 });
    const priorityOf = (id: typeof a) => s.mgr.eventlog(id).find((e) => e.name === "priority")?.context;
    expect(priorityOf(a)).toBe(priorityOf(b));
    expect(priorityOf(a)).toEqual({ priority: 16 });
    expect(priorityOf(c)).toEqual({ priority: 20 });
    for (const id of [a, b, c]) expect(s.mgr.job(id).priority).toBe(id === c ? 20 : 16);
    expect(s.logs.filter((l) => l.includes("event.priority callback failed") && l.includes("read only"))).toHaveLength(3);
  });
});

import { describe, expect, it } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import { jobspec, simManager, submitNow } from "./helpers.js";
import { JobManager } from "../../src/manager/manager.js";
import { PRIORITY_UNAVAILABLE } from "../../src/manager/port/port.js";
import { fakePort } from "./fake-port.js";

const job = (seconds: number, cores = 1) => jobspec(["true"], { exec: { test: { run_duration: seconds } } }, { cores });

/** Ids in the order they received `alloc`. */
function allocOrder(s: Awaited<ReturnType<typeof simManager>>): JobId[] {
  const order: JobId[] = [];
  s.mgr.on("event", (j) => {
    if (j.entry.name === "alloc") order.push(j.id);
  });
  return order;
}

describe("scheduler", () => {
  it("allocates by priority descending, then id ascending", async () => {
    const s = await simManager({ resources: { cores: 1 } });
    const order = allocOrder(s);
    const first = await submitNow(s, job(10));
    const a = await submitNow(s, job(10));
    const b = await submitNow(s, job(10), { urgency: 20 });
    const c = await submitNow(s, job(10));
    const d = await submitNow(s, job(10), { urgency: 20 });
    expect(JobManager.internals(s.mgr).scheduler.pending()).toEqual([b, d, a, c]);
    for (let i = 0; i < 5; i++) await s.clock.advance(10_000);
    expect(order).toEqual([first, b, d, a, c]);
  });

  it("a job moved in the queue by a priority change, then cancelled, is never allocated", async () => {
    // A queued job holds its queue entry; a priority change in SCHED (no state change)
    // moves it, replacing the entry, and a cancel must withdraw the entry it holds now.
    const s = await simManager({ resources: { cores: 1 } });
    const order = allocOrder(s);
    const { engine, scheduler } = JobManager.internals(s.mgr);
    const reprioritize = (id: JobId, p: number) => engine.reprioritize(engine.activeJob(id), p);
    const first = await submitNow(s, job(10));
    const a = await submitNow(s, job(10));
    const b = await submitNow(s, job(10));
    const c = await submitNow(s, job(10));
    reprioritize(c, 20);
    reprioritize(b, 25);
    await s.clock.advance(1);
    expect([b, c].map((id) => s.mgr.eventlog(id).filter((e) => e.name === "priority").length)).toEqual([2, 2]);
    expect(scheduler.pending()).toEqual([b, c, a]);
    s.mgr.cancel(b);
    reprioritize(c, 16); // back behind a (same priority, later id)
    await s.clock.advance(1);
    expect(scheduler.pending()).toEqual([a, c]);
    s.mgr.cancel(a);
    await s.clock.advance(1);
    expect(scheduler.pending()).toEqual([c]);
    for (let i = 0; i < 4; i++) await s.clock.advance(10_000);
    expect(order).toEqual([first, c]);
    expect([a, b, c].map((id) => s.mgr.job(id).state)).toEqual(["INACTIVE", "INACTIVE", "INACTIVE"]);
    expect(scheduler.pending()).toEqual([]);
  });

  it("records R with the allocated cores and releases them on free", async () => {
    const s = await simManager({ resources: { cores: 4 } });
    const id = await submitNow(s, job(10, 3));
    const alloc = s.mgr.eventlog(id).find((e) => e.name === "alloc");
    expect(alloc?.context?.R).toMatchObject({ version: 1, execution: { R_lite: [{ rank: "0", children: { core: "0-2" } }] } });
    const next = await submitNow(s, job(10, 2)); // must wait: only 1 core free
    expect(s.mgr.job(next).state).toBe("SCHED");
    await s.clock.advance(10_000);
    await s.clock.advance(1);
    expect(s.mgr.job(next).state).toBe("RUN");
  });

  it("queue-depth 1 is strict first-come; a larger depth lets a small job past a blocked one", async () => {
    for (const [depth, smallRuns] of [[1, false], [4, true]] as const) {
      const s = await simManager({ resources: { cores: 2 }, queueDepth: depth });
      await submitNow(s, job(100, 1));
      const big = await submitNow(s, job(10, 2));
      const small = await submitNow(s, job(10, 1));
      await s.clock.advance(1);
      expect(s.mgr.job(big).state).toBe("SCHED");
      expect(s.mgr.job(small).state === "RUN", `depth ${depth}`).toBe(smallRuns);
    }
  });

  it("a freed low core is found again: allocations always take the lowest free cores", async () => {
    const s = await simManager({ resources: { cores: 4 } });
    const coresOf = (id: JobId) =>
      (s.mgr.eventlog(id).find((e) => e.name === "alloc")?.context?.R as { execution: { R_lite: Array<{ children: { core: string } }> } })
        .execution.R_lite[0]!.children.core;
    const long = await submitNow(s, job(100));
    const short = await submitNow(s, job(1));
    const other = await submitNow(s, job(100));
    expect([coresOf(long), coresOf(short), coresOf(other)]).toEqual(["0", "1", "2"]);
    await s.clock.advance(2000);
    expect(s.mgr.job(short).result).toBe("COMPLETED");
    const two = await submitNow(s, job(10, 2));
    expect(coresOf(two)).toBe("1,3");
  });

  it("a one-core R_lite is shared frozen: a plugin's write to it fails, the next job on that core sees core 0", async () => {
    type Lite = Array<{ children: { core: string } }>;
    const s = await simManager({
      resources: { cores: 1 },
      plugins: fakePort({
        "job.state.run": (a) => {
          ((a.R as { execution: { R_lite: Lite } }).execution.R_lite[0]!.children.core = "7");
        },
      }),
    });
    const rOf = (id: JobId) => s.mgr.eventlog(id).find((e) => e.name === "alloc")?.context?.R as { execution: { R_lite: Lite; starttime: number } };
    const a = await submitNow(s, job(1));
    await s.clock.advance(2000);
    const b = await submitNow(s, job(1));
    expect(s.mgr.job(b).state).toBe("RUN");
    expect([rOf(a).execution.R_lite[0]!.children.core, rOf(b).execution.R_lite[0]!.children.core]).toEqual(["0", "0"]);
    expect(s.logs.filter((l) => l.includes("job.state.run") && l.includes("read only"))).toHaveLength(2);
    // Each job has its own R and execution (its own starttime); only R_lite is shared.
    expect(rOf(a)).not.toBe(rOf(b));
    expect(rOf(b).execution.starttime).toBeGreaterThan(rOf(a).execution.starttime);
  });

  it("an unsatisfiable request is refused at submit (Flux's feasibility check)", async () => {
    const s = await simManager({ resources: { cores: 2 } });
    await expect(submitNow(s, job(1, 3))).rejects.toMatchObject({
      code: "JOB_REJECTED",
      message: "unsatisfiable request: 3 cores requested, 2 available",
    });
    expect(s.mgr.jobs({})).toEqual([]);
  });
});

describe("scheduler at scale", () => {
  it("one pass allocates every queued job that fits, even past queue compaction", async () => {
    const s = await simManager({ resources: { cores: 3000 } });
    const p = s.mgr.submitMany(Array.from({ length: 2500 }, () => ({ jobspec: job(3600) })));
    await s.clock.advance(10);
    await p;
    await s.clock.advance(0);
    expect(s.mgr.jobs({ states: ["RUN"] })).toHaveLength(2500);
    expect(JobManager.internals(s.mgr).scheduler.pending()).toEqual([]);
  });
});

describe("reprioritize-all", () => {
  it("leaves the queue in priority order, jobs entering SCHED during the call included", async () => {
    // Priorities by a rule known to the test; 300 jobs wait behind one running job.
    const rule = new Map<JobId, number>();
    let round = 0;
    // Before the reprioritize: the first 200 submitted get 1000, the rest wait unavailable.
    let seen = 0;
    const priorityOf = (id: JobId) => {
      if (round === 0 && !rule.has(id)) rule.set(id, seen++ < 200 ? 1000 : PRIORITY_UNAVAILABLE);
      return rule.get(id)!;
    };
    let port!: ReturnType<ReturnType<typeof fakePort>>;
    const s = await simManager({
      resources: { cores: 1 },
      plugins: (m) =>
        (port = fakePort({
          "job.state.priority": (a) => ({ priority: priorityOf(a.id) }),
          "job.priority.get": (a) => ({ priority: priorityOf(a.id) }),
        })(m)),
    });
    const submitted = s.mgr.submitMany(Array.from({ length: 300 }, () => ({ jobspec: job(3600) })));
    await s.clock.advance(10);
    const ids = (await submitted) as Array<{ id: JobId }>;
    const running = ids[0]!.id;
    expect(s.mgr.job(running).state).toBe("RUN");
    // The last 100 wait in PRIORITY (priority unavailable) until the reprioritize below.
    expect(ids.slice(200).every(({ id }) => s.mgr.job(id).state === "PRIORITY")).toBe(true);
    round = 1;
    ids.forEach(({ id }, i) => rule.set(id, 1 + ((i * 7919) % 997)));
    port.mgr!.reprioritizeAll();
    const expected = ids
      .map(({ id }) => id)
      .filter((id) => id !== running)
      .sort((a, b) => priorityOf(b) - priorityOf(a) || (a < b ? -1 : 1));
    expect(JobManager.internals(s.mgr).scheduler.pending()).toEqual(expected);
    expect(expected.every((id) => s.mgr.job(id).priority === priorityOf(id))).toBe(true);
    // And the next job to run is the head of that order.
    s.mgr.cancel(running);
    await s.clock.advance(10);
    await s.clock.advance(0);
    expect(s.mgr.job(expected[0]!).state).toBe("RUN");
  });
});

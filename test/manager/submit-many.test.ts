import { describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { createJobManager } from "../../src/manager/manager.js";
import { jobspec, tempDir } from "./helpers.js";

describe("submitMany with one shared jobspec object (the daemon's --cc)", () => {
  it("every job is stored with that jobspec, and an updated job keeps its own", async () => {
    const t = tempDir();
    try {
      const clock = new SimulatedClock(Date.now());
      const open = (c: SimulatedClock) =>
        createJobManager({ statedir: t.dir, store: "sqlite", clock: c, resources: { cores: 1 }, log: () => undefined });
      const m = await open(clock);
      const shared = jobspec(["true"], { exec: { test: { run_duration: 3600 } }, job: { name: "cc" } });
      const p = m.submitMany(Array.from({ length: 3 }, () => ({ jobspec: shared, opts: { urgency: 0 } })));
      await clock.advance(20);
      const ids = (await p).map((o) => ("id" in o ? o.id : undefined)!);
      const other = await (async () => {
        const q = m.submitMany([{ jobspec: jobspec(["false"], { exec: { test: {} } }) }]);
        await clock.advance(20);
        return (await q)[0]!;
      })();
      await m.close();
      const again = await open(new SimulatedClock(Date.now() + 10_000));
      for (const id of ids) expect(again.jobspec(id)).toEqual(shared);
      expect("id" in other && again.jobspec(other.id).tasks).toEqual([{ command: ["false"], slot: "task", count: { per_slot: 1 } }]);
      await again.close();
    } finally {
      t.cleanup();
    }
  });
});

describe("jobs sharing one jobspec object with an environment", () => {
  it("plugins see it redacted; an update of one job changes only that job's view", async () => {
    const { createTestHost, testJobspec } = await import("../../src/testhost.js");
    const h = await createTestHost({ config: {} });
    try {
      const shared = testJobspec({ runDuration: 10, system: { duration: 100, environment: { SECRET: "x" } } });
      const p = h.manager.submitMany([{ jobspec: shared, opts: { urgency: 0 } }, { jobspec: shared, opts: { urgency: 0 } }]);
      await h.advance(20);
      const [a, b] = (await p).map((o) => ("id" in o ? o.id : undefined)!);
      const seen = (id: typeof a) => h.manager.port.lookup(id!)!.jobspec.attributes.system!;
      expect(seen(a)).not.toHaveProperty("environment");
      expect(seen(b)).not.toHaveProperty("environment");
      await h.manager.update(a!, { "attributes.system.duration": 50 });
      expect(seen(a).duration).toBe(50);
      expect(seen(b).duration).toBe(100);
      expect(h.manager.jobspec(b!).attributes.system?.environment).toEqual({ SECRET: "x" });
    } finally {
      await h.close();
    }
  });
});

describe("submitMany with dependencies and synchronous handlers", () => {
  it("admits the jobs one after another: a job's job.new runs before the next one's dependency callback", async () => {
    const { fakePort } = await import("./fake-port.js");
    const { simManager } = await import("./helpers.js");
    const calls: string[] = [];
    const ids = new Map<unknown, number>();
    const tag = (id: unknown) => {
      if (!ids.has(id)) ids.set(id, ids.size + 1);
      return ids.get(id);
    };
    const s = await simManager({
      plugins: fakePort({
        "job.dependency.x": (a) => void calls.push(`dependency ${tag(a.id)}`),
        "job.new": (a) => void calls.push(`new ${tag(a.id)}`),
      }),
    });
    const spec = jobspec(["true"], { exec: { test: {} }, dependencies: [{ scheme: "x", value: 1 }] });
    const p = s.mgr.submitMany([{ jobspec: spec }, { jobspec: spec }, { jobspec: spec }]);
    expect(calls).toEqual(["dependency 1", "new 1", "dependency 2", "new 2", "dependency 3", "new 3"]);
    await s.clock.advance(20);
    expect((await p).every((o) => "id" in o)).toBe(true);
  });
});

describe("submitMany outcomes, however each job ends", () => {
  it("come back in order: bad input, a synchronous rejection, an asynchronous rejection, an asynchronous acceptance, a plain acceptance", async () => {
    const { fakePort } = await import("./fake-port.js");
    const { simManager } = await import("./helpers.js");
    const s = await simManager({
      plugins: fakePort({
        "job.validate": async (a) => {
          if (a.urgency === 3) return { error: "sync no", out: { errmsg: "urgency 3 refused at once" } } as never;
          if (a.urgency === 4) {
            await Promise.resolve();
            return { error: "async no", out: { errmsg: "urgency 4 refused later" } } as never;
          }
          if (a.urgency === 5) await Promise.resolve();
          return {};
        },
      }),
    });
    const spec = jobspec(["true"], { exec: { test: {} } });
    const p = s.mgr.submitMany([
      { jobspec: { version: 2 } },
      { jobspec: spec, opts: { urgency: 3 } },
      { jobspec: spec, opts: { urgency: 4 } },
      { jobspec: spec, opts: { urgency: 5 } },
      { jobspec: spec },
    ]);
    let done = false;
    void p.then(() => (done = true));
    for (let i = 0; i < 5 && !done; i++) await s.clock.advance(10);
    const out = await p;
    expect(out.map((o) => ("id" in o ? "id" : o.error.code))).toEqual(["BAD_JOBSPEC", "JOB_REJECTED", "JOB_REJECTED", "id", "id"]);
    expect(out.map((o) => ("error" in o ? o.error.message : ""))).toEqual([
      expect.stringMatching(/version: expected 1, got 2/),
      "urgency 3 refused at once",
      "urgency 4 refused later",
      "",
      "",
    ]);
    // The outcome swap of two jobs, or one lost, would show above; the accepted ones are stored.
    const ids = out.flatMap((o) => ("id" in o ? [o.id] : []));
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect((s.mgr.jobspec(id).tasks[0] as { command: string[] }).command).toEqual(["true"]);
    expect(await s.mgr.submitMany([])).toEqual([]);
  });
});

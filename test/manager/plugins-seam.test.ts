import { describe, expect, it } from "vitest";
import { isJobtapError } from "../../src/errors.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { PRIORITY_UNAVAILABLE } from "../../src/manager/port/port.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { fakePort, type FakePort } from "./fake-port.js";
import { jobspec, names, simManager, submitNow, testJob, tempDir } from "./helpers.js";
import { JobManager } from "../../src/manager/manager.js";

async function rejection(p: Promise<unknown>): Promise<{ code?: string; message?: string }> {
  try {
    await p;
  } catch (e) {
    return isJobtapError(e) ? { code: e.code, message: e.message } : { code: "?", message: String(e) };
  }
  return {};
}

describe("submission", () => {
  it("calls job.create, job.validate, job.dependency.*, job.new in order, then job.state.depend after the commit", async () => {
    let port!: FakePort;
    const seen = (a: { state: string }) => void a;
    const s = await simManager({
      plugins: (m) =>
        (port = fakePort({
          "job.create": seen,
          "job.validate": seen,
          "job.dependency.after": seen,
          "job.new": seen,
          "job.state.depend": seen,
        })(m)),
    });
    await submitNow(s, jobspec(["true"], { exec: { test: {} }, dependencies: [{ scheme: "after", value: "x" }] }));
    expect(port.calls.map((c) => `${c.topic}:${c.state}`).slice(0, 5)).toEqual([
      "job.create:NEW",
      "job.validate:NEW",
      "job.dependency.after:NEW",
      "job.new:NEW",
      "job.state.depend:DEPEND",
    ]);
  });

  it("a job.validate rejection carries the plugin's errmsg; the job never exists", async () => {
    const s = await simManager({ plugins: fakePort({ "job.validate": () => ({ error: "x", out: { errmsg: "too many cores" } }) }) });
    const r = await rejection(submitNow(s, testJob(0)));
    expect(r).toEqual({ code: "JOB_REJECTED", message: "too many cores" });
    expect(s.mgr.jobs()).toEqual([]);
    await s.clock.advance(100);
    expect([...JobManager.internals(s.mgr).store.loadAll()]).toEqual([]);
  });

  it("an unhandled dependency scheme is rejected with Flux's message", async () => {
    const s = await simManager();
    const r = await rejection(submitNow(s, jobspec(["true"], { dependencies: [{ scheme: "afterok", value: "f1" }] })));
    expect(r).toEqual({ code: "JOB_REJECTED", message: 'dependency scheme "afterok" not supported' });
    const r2 = await rejection(submitNow(s, jobspec(["true"], { dependencies: { scheme: "x" } })));
    expect(r2.message).toBe("dependencies object must be an array");
  });

  it("bad jobspecs and urgencies are refused with codes naming the problem", async () => {
    const s = await simManager();
    expect(await rejection(s.mgr.submit({ version: 2 }))).toMatchObject({ code: "BAD_JOBSPEC", message: expect.stringMatching(/version: expected 1, got 2/) });
    const noCmd = { ...jobspec(), tasks: [{ command: [] }] };
    expect(await rejection(s.mgr.submit(noCmd))).toMatchObject({ code: "BAD_JOBSPEC", message: expect.stringMatching(/tasks\[0\]\.command/) });
    expect(await rejection(s.mgr.submit(testJob(0), { urgency: 40 }))).toMatchObject({ code: "BAD_URGENCY", message: expect.stringMatching(/40/) });
  });

  it("submitMany gives each job its own outcome", async () => {
    const s = await simManager({ plugins: fakePort({ "job.validate": (a) => (a.urgency === 3 ? { error: "no", out: { errmsg: "urgency 3 is unlucky" } } : {}) }) });
    const p = s.mgr.submitMany([{ jobspec: testJob(0) }, { jobspec: testJob(0), opts: { urgency: 3 } }, { jobspec: testJob(0) }]);
    await s.clock.advance(10);
    const out = await p;
    expect("id" in out[0]!).toBe(true);
    expect("error" in out[1]! && out[1].error.message).toBe("urgency 3 is unlucky");
    expect("id" in out[2]!).toBe(true);
  });
});

describe("OUT values and callbacks", () => {
  it("job.state.* gets entry and prev_state; annotations merge and null deletes", async () => {
    const prevs: string[] = [];
    const s = await simManager({
      plugins: fakePort({
        "job.state.sched": (a) => {
          prevs.push(`${a.prev_state}->${a.state} by ${a.entry?.name}`);
          return { annotations: { sched: { reason: "waiting", queue: "batch" } } };
        },
        "job.state.run": () => ({ annotations: { sched: { reason: null } } }),
      }),
    });
    const id = await submitNow(s, testJob("1h"));
    await s.clock.advance(1);
    expect(prevs).toEqual(["PRIORITY->SCHED by priority"]);
    expect(s.mgr.job(id).annotations).toEqual({ sched: { queue: "batch" } });
    expect(names(s, id)).not.toContain("annotations"); // not committed to the eventlog
  });

  it("job.new annotations are stored but not published; later ones are journalled", async () => {
    const s = await simManager({
      plugins: fakePort({
        "job.new": () => ({ annotations: { acct: "physics" } }),
        "job.state.sched": () => ({ annotations: { sched: "waiting" } }),
      }),
    });
    const journalled: string[] = [];
    s.mgr.on("event", (j) => void journalled.push(j.entry.name));
    const id = await submitNow(s, testJob("1h"));
    await s.clock.advance(1);
    expect(s.mgr.job(id).annotations).toEqual({ acct: "physics", sched: "waiting" });
    expect(journalled.filter((n) => n === "annotations")).toHaveLength(1);
  });

  it("a priority equal to the current one in SCHED posts no event; a different one does", async () => {
    let port!: FakePort;
    const s = await simManager({ resources: { cores: 1 }, plugins: (m) => (port = fakePort({})(m)) });
    await submitNow(s, testJob("1h"));
    const id = await submitNow(s, testJob("1h"));
    await s.clock.advance(1);
    expect([s.mgr.job(id).state, s.mgr.job(id).priority]).toEqual(["SCHED", 16]);
    const count = () => names(s, id).filter((n) => n === "priority").length;
    expect(count()).toBe(1);
    port.mgr!.reprioritizeJob(id, 16);
    port.mgr!.reprioritizeAll(); // job.priority.get answers 16 again
    expect(count()).toBe(1);
    port.mgr!.reprioritizeJob(id, 17);
    expect([count(), s.mgr.job(id).priority]).toEqual([2, 17]);
  });

  it("R from job.state.sched is honoured, and alloc-bypass skips the scheduler", async () => {
    const R = { version: 1, execution: { R_lite: [{ rank: "0", children: { core: "7" } }] } };
    const s = await simManager({
      plugins: fakePort({
        "job.create": (a, m) => m.setFlag(a.id, "alloc-bypass"),
        "job.state.sched": (a, m) => {
          m.postEvent(a.id, "alloc");
          return { R };
        },
      }),
    });
    const id = await submitNow(s, testJob("1s"));
    expect(s.mgr.eventlog(id).find((e) => e.name === "alloc")?.context?.R).toEqual(R);
    await s.clock.advance(1000);
    expect(s.mgr.job(id).result).toBe("COMPLETED");
  });

  it("the host's OUT checks reach the job: a non-integer priority raises a severity-4 exception", async () => {
    const s = await simManager({
      plugins: async (m) => {
        const host = await jobtapPlugins({ builtins: [], pluginPath: [], log: () => undefined })(m);
        await host.loadDefinition("odd", (p) => p.on("job.state.priority", () => ({ priority: "high" }) as never), {}, { replay: false });
        return host;
      },
    });
    const odd = await submitNow(s, testJob("1h"));
    expect(s.mgr.job(odd).state).toBe("PRIORITY");
    expect(s.mgr.eventlog(odd).at(-1)).toMatchObject({ name: "exception", context: { type: "job.state.priority", severity: 4 } });
  });

  it("a priority unavailable waits for reprioritize", async () => {
    let port!: FakePort;
    let ready = false;
    const s = await simManager({
      plugins: (m) =>
        (port = fakePort({
          "job.state.priority": () => ({ priority: ready ? 9 : PRIORITY_UNAVAILABLE }),
          "job.priority.get": () => ({ priority: ready ? 9 : PRIORITY_UNAVAILABLE }),
        })(m)),
    });
    const id = await submitNow(s, testJob("1h"));
    expect(s.mgr.job(id).state).toBe("PRIORITY");
    ready = true;
    port.mgr!.reprioritizeAll();
    expect([s.mgr.job(id).state, s.mgr.job(id).priority]).toEqual(["SCHED", 9]);
  });

  it("job.event.* reaches subscribers for every event, before job.state.*", async () => {
    const order: string[] = [];
    const s = await simManager({
      plugins: fakePort({
        "job.event.*": (a) => void order.push(`event.${a.entry?.name}`),
        "job.state.*": (a) => {
          order.push(`state.${a.state.toLowerCase()}`);
          return a.state === "PRIORITY" ? { priority: a.urgency } : {};
        },
      }, { priorityDefault: false }),
    });
    await submitNow(s, testJob(0));
    await s.clock.advance(1);
    expect(order.slice(0, 6)).toEqual(["event.submit", "event.validate", "state.depend", "event.depend", "state.priority", "event.priority"]);
    expect(order).toContain("event.free");
  });
});

describe("inactive jobs", () => {
  it("are purged past the count limit with job.inactive-remove, oldest first", async () => {
    const removed: bigint[] = [];
    const s = await simManager({ inactiveNumLimit: 2, plugins: fakePort({ "job.inactive-remove": (a) => void removed.push(a.id) }) });
    const ids: JobId[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(await submitNow(s, testJob(0)));
      await s.clock.advance(1);
    }
    expect(removed).toEqual([ids[0], ids[1]]);
    expect(() => s.mgr.job(ids[0]!)).toThrow(/unknown job/);
    await s.clock.advance(10);
    expect(JobManager.internals(s.mgr).store.load(ids[0]!)).toBeUndefined();
    expect(s.mgr.job(ids[3]!).state).toBe("INACTIVE");
  });

  it("are purged past the age limit; their eventlog is read back from the store until then", async () => {
    const s = await simManager({ inactiveAgeLimit: 60 });
    const id = await submitNow(s, testJob(0));
    await s.clock.advance(1000);
    expect(s.mgr.eventlog(id).map((e) => e.name).at(-1)).toBe("clean");
    await s.clock.advance(61_000);
    expect(() => s.mgr.job(id)).toThrow(/unknown job/);
  });
});

describe("plugin state in the store", () => {
  it("survives a restart of a SQLite-backed manager", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const a = await simManager({ statedir: dir, store: "sqlite" });
      a.mgr.port.pluginState!.set("my-plugin", "counter", { n: 3 });
      a.mgr.port.pluginState!.set("other", "counter", 1);
      await a.mgr.close();
      const b = await simManager({ statedir: dir, store: "sqlite" });
      expect(b.mgr.port.pluginState!.get("my-plugin", "counter")).toEqual({ n: 3 });
      expect(b.mgr.port.pluginState!.keys("my-plugin")).toEqual(["counter"]);
      b.mgr.port.pluginState!.delete("my-plugin", "counter");
      expect(b.mgr.port.pluginState!.get("my-plugin", "counter")).toBeUndefined();
      expect(b.mgr.port.pluginState!.get("other", "counter")).toBe(1);
      await b.mgr.close();
    } finally {
      cleanup();
    }
  });
});

describe("a misbehaving host", () => {
  it("a throwing stack call is logged and the job keeps moving", async () => {
    const s = await simManager({
      plugins: fakePort({
        "job.state.sched": () => {
          throw new Error("host bug");
        },
      }),
    });
    const id = await submitNow(s, testJob(0));
    await s.clock.advance(1);
    expect(s.mgr.job(id).result).toBe("COMPLETED");
    expect(s.logs.some((l) => l.includes("job.state.sched: host bug"))).toBe(true);
  });
});

describe("jobspec updates", () => {
  it("job.update fires before the SCHED→PRIORITY kick-back re-runs job.state.priority", async () => {
    let port!: FakePort;
    const order: string[] = [];
    const s = await simManager({
      resources: { cores: 1 },
      plugins: (m) =>
        (port = fakePort({
          "job.update": (a) => void order.push(`update ${JSON.stringify(a.updates)}`),
          "job.state.priority": (a) => {
            order.push(`priority ${a.jobspec.attributes.system?.duration}`);
            return { priority: a.urgency };
          },
        })(m)),
    });
    await submitNow(s, testJob("1h"));
    const id = await submitNow(s, testJob("1h"));
    await s.clock.advance(1);
    expect(s.mgr.job(id).state).toBe("SCHED");
    port.mgr!.jobspecUpdate(id, { "attributes.system.duration": 120 });
    expect(order.slice(-3)).toEqual(["priority 0", 'update {"attributes.system.duration":120}', "priority 120"]);
    expect(s.mgr.jobspec(id).attributes.system?.duration).toBe(120);
    expect(() => port.mgr!.jobspecUpdate(id, { "name": "x" })).toThrow(/invalid jobspec update key "name"/);
  });

  it("memo events merge into annotations.user and are kept in the eventlog", async () => {
    let port!: FakePort;
    const s = await simManager({ plugins: (m) => (port = fakePort({})(m)) });
    const id = await submitNow(s, testJob("1h"));
    port.mgr!.postEvent(id, "memo", { note: "hi", tmp: 1 });
    port.mgr!.postEvent(id, "memo", { tmp: null });
    expect(s.mgr.job(id).annotations).toEqual({ user: { note: "hi" } });
    expect(names(s, id).filter((n) => n === "memo")).toHaveLength(2);
    expect(port.mgr!.eventPosted(id, "memo")).toBe(true);
    expect(port.mgr!.eventPosted(id, "finish")).toBe(false);
  });
});

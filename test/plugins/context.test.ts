import type { PluginContext } from "jobtap/plugin";
import { describe, expect, it } from "vitest";
import { isJobtapError } from "../../src/errors.js";
import type { JobArgs } from "../../src/manager/port/records.js";
import { fixture, makeHost } from "./helpers.js";

const owner = { userid: 0, owner: true };

function eventArgs(job: JobArgs, name: string): JobArgs {
  return { ...job, entry: { timestamp: 2, name } };
}

describe("plugin context", () => {
  it("delivers job.event.* to subscribers only, until they unsubscribe", async () => {
    const { host, mgr } = makeHost();
    const log: string[] = [];
    await host.load(fixture("subscriber.ts"), { log });
    await host.load(fixture("recorder.js"), { topic: "job.event.*", log });
    const a = mgr.lookup(mgr.add("NEW", 1))!;
    const b = mgr.lookup(mgr.add("NEW", 2))!;
    host.callJob("job.new", a); // subscribes a only
    host.notifyEvent(eventArgs(a, "validate"));
    host.notifyEvent(eventArgs(b, "validate"));
    host.notifyEvent(eventArgs(a, "stop"));
    host.notifyEvent(eventArgs(a, "depend"));
    expect(log).toEqual(["job.event.validate validate", "job.event.stop stop"]);
  });

  it("tells the manager whether a job's subscribers handle an event, before it builds the args", async () => {
    const { host, mgr } = makeHost();
    await host.loadDefinition("subscriber", (p) => {
      p.on("job.new", (job) => p.subscribe(job.id));
      p.on("job.event.alloc", () => undefined);
    });
    // Handles job.event.start, but never subscribes: the start event reaches nobody.
    await host.loadDefinition("bystander", (p) => p.on("job.event.start", () => undefined));
    const a = mgr.lookup(mgr.add("NEW", 1))!;
    expect(host.hasSubscribers(a.id, "alloc")).toBe(false);
    host.callJob("job.new", a);
    expect(host.hasSubscribers(a.id)).toBe(true);
    expect(host.hasSubscribers(a.id, "alloc")).toBe(true);
    expect(host.hasSubscribers(a.id, "start")).toBe(false);
    expect(host.hasSubscribers(a.id, "free")).toBe(false);
  });

  it("drops subscriptions and runs aux destructors when the job is gone", async () => {
    const { host, mgr } = makeHost();
    const log: string[] = [];
    await host.load(fixture("aux-destructor.ts"), { log });
    await host.load(fixture("subscriber.ts"), { log });
    const a = mgr.lookup(mgr.add("NEW", 1))!;
    host.callJob("job.new", a);
    expect(log).toEqual([]);
    host.jobGone(a.id);
    expect(log).toEqual(["destroy 1"]);
    host.notifyEvent(eventArgs(a, "clean"));
    expect(log).toEqual(["destroy 1"]);
  });

  it("runs aux destructors and drops subscriptions when the plugin is removed", async () => {
    const { host, mgr } = makeHost();
    const log: string[] = [];
    await host.load(fixture("aux-destructor.ts"), { log });
    for (const n of [1, 2]) host.callJob("job.new", mgr.lookup(mgr.add("SCHED", n))!);
    expect(host.remove("aux-*")).toEqual(["aux-destructor.ts"]);
    expect(log.sort()).toEqual(["destroy 1", "destroy 2"]);
    host.jobGone(1n as never);
    expect(log).toHaveLength(2);
  });

  it("starts prologs only for the current job and epilogs only in CLEANUP", async () => {
    const { host, mgr } = makeHost();
    await host.load(fixture("perilog.ts"));
    mgr.calls.length = 0;
    const id = mgr.add("RUN", 1);
    const run = host.callJob("job.state.run", mgr.lookup(id)!);
    expect(run).toMatchObject({ handled: 1 });
    await host.callService("perilog", "finish", { id: "1", which: "prolog" }, owner);
    // epilog-start from job.state.run's sibling topic while not in CLEANUP fails, labelled.
    const bad = host.callJob("job.state.cleanup", mgr.lookup(id)!);
    expect(bad).toMatchObject({ error: { plugin: "perilog.ts" } });
    expect((bad as { error: { message: string } }).error.message).toMatch(
      /plugin perilog\.ts: job\.state\.cleanup: job ƒ\S+: epilogStart: .*outside CLEANUP/,
    );
    mgr.jobs.get(id)!.state = "CLEANUP";
    host.callJob("job.state.cleanup", mgr.lookup(id)!);
    await host.callService("perilog", "finish", { id: "1", which: "epilog" }, owner);
    expect(mgr.calls).toEqual([
      "prolog-start 1 fixture-prolog",
      "prolog-finish 1 fixture-prolog 0",
      "epilog-start 1 fixture-epilog",
      "epilog-finish 1 fixture-epilog 0",
    ]);
  });

  it("refuses prologStart outside a callback for that job (PLUGIN_PHASE)", async () => {
    const { host, mgr } = makeHost();
    const box: { p?: PluginContext } = {};
    await host.load(fixture("keep-context.js"), { box });
    mgr.add("RUN", 1);
    const other = mgr.lookup(mgr.add("RUN", 2))!;
    // No callback is running for job 1, so it is not current for the plugin.
    const p = box.p!;
    let caught: unknown;
    try {
      p.prologStart(1n as never, "x");
    } catch (e) {
      caught = e;
    }
    expect(isJobtapError(caught, "PLUGIN_PHASE")).toBe(true);
    expect((caught as Error).message).toMatch(/keep-context\.js: \(outside a callback\): job ƒ\S+: prologStart/);
    expect(mgr.calls).not.toContain("prolog-start 1 x");
    expect(other.state).toBe("RUN");
  });

  it("refuses setup-only calls after setup, and every call after removal", async () => {
    const { host } = makeHost();
    const box: { p?: PluginContext } = {};
    await host.load(fixture("keep-context.js"), { box });
    const p = box.p!;
    expect(() => p.on("job.new", () => undefined)).toThrow(/on: allowed only during setup/);
    host.remove("keep-context.js");
    expect(() => p.reprioritizeAll()).toThrow(/has been removed/);
  });

  it("calls custom topics on the other plugins", async () => {
    const { host, mgr } = makeHost();
    await host.load(fixture("callee.ts"));
    await host.load(fixture("caller.ts"));
    const r = host.callJob("job.state.priority", mgr.lookup(mgr.add("PRIORITY", 1))!);
    expect(r).toMatchObject({ handled: 1, out: { priority: 1000 - 2000 } });
  });

  it("keeps services owner-only by default and drops them on removal", async () => {
    const { host, mgr } = makeHost();
    await host.load(fixture("priority-wait.ts"));
    const id = mgr.add("PRIORITY", 3);
    const r = host.callJob("job.state.priority", mgr.lookup(id)!);
    expect(r).toMatchObject({ out: { priority: -2 } });
    await expect(
      host.callService("prioritywait", "release", { id: "3", priority: 8 }, { userid: 5, owner: false }),
    ).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    await host.callService("prioritywait", "release", { id: "3", priority: 8 }, owner);
    expect(mgr.calls).toContain("reprioritize 3 8");
    host.remove("prioritywait");
    await expect(host.callService("prioritywait", "release", {}, owner)).rejects.toMatchObject({
      code: "PLUGIN_NOT_FOUND",
    });
  });

  it("labels manager errors with plugin, topic and job, keeping their code", async () => {
    const { host, mgr } = makeHost();
    await host.load(fixture("sort-order.ts"), { log: [] });
    const id = mgr.add("SCHED", 4, {
      jobspec: { version: 1, resources: [], tasks: [], attributes: { system: {} } },
    });
    const args = { ...mgr.lookup(id)!, dependency: { scheme: "x", value: 1 } };
    const r = host.callJob("job.dependency.x", args);
    expect(r).toMatchObject({ error: { plugin: "sort-order.ts" } });
    expect((r as { error: { message: string } }).error.message).toMatch(
      /^plugin sort-order\.ts: job\.dependency\.x: job ƒ\S+: dependencyAdd: job 4: dependencyAdd in SCHED$/,
    );
  });

  it("keeps plugin state across a remove and reload of the plugin", async () => {
    const { host, mgr } = makeHost();
    await host.load(fixture("state-counter.js"));
    for (const n of [1, 2]) host.callJob("job.new", mgr.lookup(mgr.add("NEW", n))!);
    for (const job of mgr.jobs.values()) job.state = "INACTIVE"; // no replay on reload
    host.remove("state-counter.js");
    await host.load(fixture("state-counter.js"));
    expect(await host.query("state-counter.js")).toMatchObject({ count: 2, keys: ["count"] });
  });

  it("runs the old destructor when an aux key is replaced or deleted", async () => {
    const { host, mgr } = makeHost();
    const log: string[] = [];
    const id = mgr.add("SCHED", 1);
    await host.loadDefinition("aux-replace", (p) => {
      p.serviceRegister("go", () => {
        p.auxSet(id, "k", "first", (v) => log.push(`destroy ${v}`));
        p.auxSet(id, "k", "second", (v) => log.push(`destroy ${v}`));
        log.push(`get ${p.auxGet<string>(id, "k")}`);
        p.auxDelete(id, "k");
        log.push(`after delete ${String(p.auxGet(id, "k"))}`);
        return null;
      });
    });
    await host.callService("aux-replace", "go", null, owner);
    expect(log).toEqual(["destroy first", "get second", "destroy second", "after delete undefined"]);
  });

  it("logs a plugin timer callback that throws or rejects instead of crashing", async () => {
    const { host, mgr, logged } = makeHost();
    await host.loadDefinition("timers", (p) => {
      p.clock.setTimeout(() => {
        throw new Error("tick failed");
      }, 10);
      p.clock.setTimeout(async () => {
        throw new Error("async tick failed");
      }, 20);
    });
    await mgr.clock.advance(30);
    expect(logged.filter((l) => l.includes("timer callback failed"))).toEqual([
      "warn: plugin timers: timer callback failed: tick failed",
      "warn: plugin timers: timer callback failed: async tick failed",
    ]);
  });
});

import type { PluginContext } from "jobtap/plugin";
import { describe, expect, it } from "vitest";
import type { StackResult } from "../../src/manager/port/port.js";
import { fixture, makeHost } from "./helpers.js";

/** Tracks whether a stack call's Promise has settled, and its value. */
function track(r: StackResult | Promise<StackResult>) {
  const t: { done: boolean; value?: StackResult } = { done: false };
  expect(r).toBeInstanceOf(Promise);
  void (r as Promise<StackResult>).then((v) => {
    t.done = true;
    t.value = v;
  });
  return t;
}

describe("async handlers", () => {
  it("keep the load order: later plugins wait until the Promise settles", async () => {
    const { host, mgr } = makeHost();
    const log: string[] = [];
    await host.load(fixture("order-a.js"), { log, topic: "job.state.priority" });
    await host.load(fixture("async-slow.ts"), { log, delayMs: 100 });
    await host.load(fixture("order-b.js"), { log, topic: "job.state.priority", out: { x: 1 } });
    const t = track(host.callJob("job.state.priority", mgr.lookup(mgr.add("PRIORITY", 1))!));
    await mgr.clock.advance(99);
    expect(t.done).toBe(false);
    expect(log).toEqual(["order-a.js job.state.priority", "start 1"]);
    await mgr.clock.advance(1);
    expect(t.done).toBe(true);
    expect(log).toEqual([
      "order-a.js job.state.priority",
      "start 1",
      "end 1",
      "order-b.js job.state.priority",
    ]);
    expect(t.value).toEqual({ handled: 3, out: { priority: 7, x: 1 } });
  });

  it("stay synchronous when every handler that ran was synchronous", async () => {
    const { host, mgr } = makeHost();
    await host.load(fixture("async-slow.ts"));
    await host.load(fixture("order-a.js"), { topic: "job.new" });
    const r = host.callJob("job.new", mgr.lookup(mgr.add("NEW", 1))!);
    expect(r).not.toBeInstanceOf(Promise);
  });

  it("turn a hung handler into a labelled deadline error that stops the stack", async () => {
    const { host, mgr, logged } = makeHost({ deadlineMs: 1000 });
    const log: string[] = [];
    await host.load(fixture("async-hang.js"));
    await host.load(fixture("order-a.js"), { log, topic: "job.validate" });
    const t = track(host.callJob("job.validate", mgr.lookup(mgr.add("NEW", 1))!));
    await mgr.clock.advance(999);
    expect(t.done).toBe(false);
    await mgr.clock.advance(1);
    expect(t.done).toBe(true);
    expect(t.value?.error?.plugin).toBe("async-hang.js");
    expect(t.value?.error?.message).toMatch(
      /^plugin async-hang\.js: job\.validate: job ƒ\S+: handler did not settle within 1000 ms$/,
    );
    expect(log).toEqual([]);
    expect(logged.some((l) => l.includes("did not settle"))).toBe(true);
    expect(mgr.clock.pending()).toBe(0);
  });

  it("do not block calls for other jobs while one job's handler is pending", async () => {
    const { host, mgr } = makeHost();
    const log: string[] = [];
    await host.load(fixture("async-slow.ts"), { log, delayMs: 50 });
    await host.load(fixture("order-a.js"), { log, topic: "job.state.sched" });
    const t = track(host.callJob("job.state.priority", mgr.lookup(mgr.add("PRIORITY", 1))!));
    const other = host.callJob("job.state.sched", mgr.lookup(mgr.add("SCHED", 2))!);
    expect(other).toEqual({ handled: 1, out: {} });
    expect(log).toEqual(["start 1", "order-a.js job.state.sched"]);
    await mgr.clock.advance(50);
    expect(t.done).toBe(true);
  });

  it("keep the job current for the plugin until the Promise settles", async () => {
    const { host, mgr } = makeHost();
    const box: { p?: PluginContext } = {};
    await host.load(fixture("async-slow.ts"), { delayMs: 10, box });
    const id = mgr.add("PRIORITY", 1);
    const t = track(host.callJob("job.state.priority", mgr.lookup(id)!));
    // prologStart is allowed only for the plugin's current job.
    box.p!.prologStart(id, "pending");
    expect(mgr.calls).toContain(`prolog-start ${id} pending`);
    await mgr.clock.advance(10);
    expect(t.done).toBe(true);
    expect(() => box.p!.prologStart(id, "settled")).toThrow(/\(outside a callback\).*allowed only for the current job/);
  });
});

/**
 * Dispatch at its edges: plugin.replay-done past a failing plugin (job.event.* stops there,
 * as Flux's stack calls do), a plugin removed in the middle
 * of a stack call, two loads of one plugin racing, and a setup that never settles.
 */
import { describe, expect, it, vi } from "vitest";
import type { PluginContext } from "jobtap/plugin";
import { isJobtapError } from "../../src/errors.js";
import type { StackResult } from "../../src/manager/port/port.js";
import { fixture, makeHost } from "./helpers.js";

/** Loads plugins a, b, c; each records its calls in `seen`, `fails` throws (or rejects if async). */
async function threePlugins(fails: string, opts: { async?: boolean } = {}) {
  const made = makeHost();
  const seen: string[] = [];
  const ctx: Record<string, PluginContext> = {};
  for (const name of ["a", "b", "c"]) {
    await made.host.loadDefinition(name, (p) => {
      ctx[name] = p;
      const handler = (topic: string) => {
        seen.push(`${name} ${topic}`);
        if (name !== fails) return undefined;
        if (opts.async) return Promise.reject(new Error("boom"));
        throw new Error("boom");
      };
      p.on("job.event.*", (_args, call) => handler(call.topic));
      p.on("plugin.replay-done", (_args, call) => handler(call.topic));
      p.on("job.state.run", (_args, call) => handler(call.topic));
    });
  }
  return { ...made, seen, ctx };
}

describe("errors in a stack call", () => {
  it("plugin.replay-done goes on after one plugin's error; job.event.* stops there (Flux)", async () => {
    const { host, mgr, seen, ctx, logged } = await threePlugins("b");
    seen.length = logged.length = 0; // the load-time plugin.replay-done
    const id = mgr.add("RUN", 1);
    for (const name of ["a", "b", "c"]) ctx[name]!.subscribe(id);
    await host.notifyEvent({ ...mgr.lookup(id)!, entry: { timestamp: 2, name: "start" } });
    await host.replayDone();
    expect(seen).toEqual([
      "a job.event.start", "b job.event.start",
      "a plugin.replay-done", "b plugin.replay-done", "c plugin.replay-done",
    ]);
    expect(logged.filter((l) => l.includes("plugin b: ") && l.endsWith(": boom"))).toHaveLength(2);
  });

  it("plugin.replay-done goes on after an async handler's rejection too", async () => {
    const { host, seen } = await threePlugins("b", { async: true });
    seen.length = 0;
    await host.replayDone();
    expect(seen).toEqual(["a plugin.replay-done", "b plugin.replay-done", "c plugin.replay-done"]);
  });

  it("a job topic still stops at the first error", async () => {
    const { host, mgr, seen } = await threePlugins("b");
    seen.length = 0;
    const r = host.callJob("job.state.run", mgr.lookup(mgr.add("RUN", 1))!) as StackResult;
    expect(seen).toEqual(["a job.state.run", "b job.state.run"]);
    expect(r.error?.plugin).toBe("b");
  });
});

describe("a plugin removed during a stack call", () => {
  it("is not called later in that call (removed by an earlier plugin's handler)", async () => {
    const { host, mgr } = makeHost();
    const seen: string[] = [];
    await host.loadDefinition("remover", (p) =>
      p.on("job.state.run", () => {
        seen.push("remover");
        host.remove("victim");
      }),
    );
    await host.loadDefinition("victim", (p) => p.on("job.state.run", () => void seen.push("victim")));
    await host.loadDefinition("last", (p) => p.on("job.state.run", () => void seen.push("last")));
    const r = host.callJob("job.state.run", mgr.lookup(mgr.add("RUN", 1))!) as StackResult;
    expect(seen).toEqual(["remover", "last"]);
    expect(r.handled).toBe(2);
  });

  it("is not called after an async handler before it settles", async () => {
    const { host, mgr } = makeHost();
    const seen: string[] = [];
    await host.load(fixture("async-slow.ts"), { delayMs: 10, log: seen });
    await host.loadDefinition("victim", (p) => p.on("job.state.priority", () => void seen.push("victim")));
    const pending = host.callJob("job.state.priority", mgr.lookup(mgr.add("PRIORITY", 1))!);
    host.remove("victim");
    await mgr.clock.advance(10);
    const r = await pending;
    expect(seen).toEqual(["start 1", "end 1"]);
    expect(r).toMatchObject({ handled: 1, out: { priority: 7 } });
  });
});

describe("loading", () => {
  it("two concurrent loads of one plugin: one succeeds, the other leaves nothing behind", async () => {
    const { host, mgr } = makeHost();
    const fired: string[] = [];
    const removed: string[] = [];
    const loads = await Promise.allSettled([
      host.load(fixture("setup-timer.js"), { fired, removed }),
      host.load(fixture("setup-timer.js"), { fired, removed }),
    ]);
    expect(loads.map((l) => l.status).sort()).toEqual(["fulfilled", "rejected"]);
    const lost = loads.find((l) => l.status === "rejected") as PromiseRejectedResult;
    expect(isJobtapError(lost.reason, "PLUGIN_ALREADY_LOADED")).toBe(true);
    expect(host.list().map((p) => p.name)).toEqual(["setup-timer.js"]);
    expect(removed).toEqual(["removed"]); // the loser's onRemove ran
    await mgr.clock.advance(100);
    expect(fired).toEqual(["fired"]); // the loser's timer was cleared
  });

  it("a failed setup leaves no timer behind", async () => {
    const { host, mgr } = makeHost();
    const fired: string[] = [];
    await expect(host.load(fixture("setup-timer.js"), { fired, fail: true })).rejects.toThrow(
      /setup-timer\.js: setup failed: setup refused/,
    );
    await mgr.clock.advance(100);
    expect(fired).toEqual([]);
    expect(host.list()).toEqual([]);
  });

  it("a setup that never settles fails the load at the handler deadline", async () => {
    const { host, mgr } = makeHost({ deadlineMs: 50 });
    const started: string[] = [];
    const load = host.load(fixture("setup-hang.js"), { started });
    const outcome = load.then(() => "loaded", (e: unknown) => e);
    await vi.waitFor(() => expect(started).toEqual(["setup-hang.js"]));
    await mgr.clock.advance(49);
    await Promise.resolve();
    expect(host.list()).toEqual([]);
    await mgr.clock.advance(1);
    const e = await outcome;
    expect(isJobtapError(e, "PLUGIN_DEADLINE")).toBe(true);
    expect((e as Error).message).toBe("setup-hang.js: setup failed: setup did not settle within 50 ms");
    expect(host.list()).toEqual([]);
  });
});

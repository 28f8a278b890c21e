/**
 * One behaviour suite, run with the fixture plugins in process and isolated: dispatch
 * order, OUT merging, rejections, async handlers and timers, subscriptions, aux values and
 * their destructors, prologs finished from a service, phase checks and persistent state
 * must come out the same.
 */
import { describe, expect, it } from "vitest";
import { complete, hostWith, submit, until } from "./isolate-helpers.js";

const OWNER = { userid: process.getuid?.() ?? 0, owner: true };

describe.each([
  ["in process", false],
  ["isolated", true],
])("plugin behaviour %s", (_mode, isolate) => {
  const opts = isolate ? { isolate: true, deadlineMs: 5000 } : { deadlineMs: 5000 };

  it("runs the context API end to end", async () => {
    const h = await hostWith([["iso-behaviour.js", opts]]);
    expect(h.plugins.list()[0]?.isolated).toBe(isolate ? "running" : undefined);
    await expect(submit(h, "refuse")).rejects.toThrow(/behave: refused/);
    const id = await submit(h, "ok");
    // The prolog started in job.state.run holds the job until the service finishes it.
    await until(h, () => h.events(id).includes("prolog-start"));
    await h.advance(1000);
    expect(h.job(id).state).toBe("RUN");
    expect(h.events(id)).not.toContain("start");
    const out = await h.plugins.callService("behave", "finish", { id: String(id) }, OWNER);
    expect(out).toEqual({ finished: String(id) });
    await complete(h, id);
    expect(h.job(id).priority).toBe(42);
    expect(h.job(id).annotations).toMatchObject({ behave: "new", phase: "PLUGIN_PHASE", frozen: "yes", aux: true });
    // An isolated plugin gets "aux gone" over its port and the query as a pool task: two
    // channels, so the query may overtake the notification; give the worker a moment.
    let q = await h.plugins.query("behave");
    for (let i = 0; i < 100 && q.destroyed !== 1; i++) {
      await new Promise((r) => setTimeout(r, 20));
      q = await h.plugins.query("behave");
    }
    expect(q.events).toEqual(expect.arrayContaining(["job.event.alloc", "job.event.prolog-start", "job.event.prolog-finish", "job.event.start", "job.event.finish"]));
    // The aux destructor ran when the job went inactive, and wrote persistent state.
    expect(q.destroyed).toBe(1);
  });

  it("keeps load order and last-writer-wins OUT merging across plugins", async () => {
    const h = await hostWith([
      ["order-a.js", opts, { topic: "job.state.priority", out: { priority: 5, annotations: { by: "a" } } }],
      ["order-b.js", { deadlineMs: 5000 }, { topic: "job.state.priority", out: { priority: 9 } }],
    ]);
    const id = await submit(h);
    await complete(h, id);
    expect(h.job(id).priority).toBe(9);
    expect(h.job(id).annotations).toMatchObject({ by: "a" });
  });
});

/** Beyond Flux: the inspection stream of handler calls. */
import { describe, expect, it } from "vitest";
import type { HandlerRecord } from "../../src/plugins/stack.js";
import { fixture, makeHost } from "./helpers.js";

describe("inspection stream", () => {
  it("reports each handler call with its outcome, and stops when unsubscribed", async () => {
    const { host, mgr } = makeHost({ deadlineMs: 100 });
    await host.load(fixture("order-a.js"), { topic: "job.validate" });
    await host.load(fixture("reject-validate.ts"), { message: "nope" });
    await host.load(fixture("async-slow.ts"), { delayMs: 5 });
    await host.load(fixture("throws.js"));
    const records: HandlerRecord[] = [];
    const stop = host.inspect((r) => records.push(r));
    const job = mgr.lookup(mgr.add("NEW", 1))!;
    const t0 = performance.now();
    host.callJob("job.validate", job);
    const pending = host.callJob("job.state.priority", job);
    const t1 = performance.now();
    await mgr.clock.advance(5);
    await pending;
    const t2 = performance.now();
    const seen = records.map((r) => [r.topic, r.plugin, r.outcome, r.async, r.id]);
    expect(seen).toEqual([
      ["job.validate", "order-a.js", "ok", false, 1n],
      ["job.validate", "reject-validate.ts", "rejected", false, 1n],
      ["job.state.priority", "async-slow.ts", "ok", true, 1n],
      ["job.state.priority", "throws.js", "error", false, 1n],
    ]);
    expect(records[1]?.message).toBe("nope");
    // Each duration is that handler's own: within the window its call ran in.
    const [a, b, async, after] = records;
    for (const r of [a!, b!]) {
      expect(r.ms).toBeGreaterThanOrEqual(0);
      expect(r.ms).toBeLessThanOrEqual(t1 - t0);
    }
    expect(async!.ms).toBeGreaterThanOrEqual(0);
    expect(async!.ms).toBeLessThanOrEqual(t2 - t0);
    expect(after!.ms).toBeLessThanOrEqual(t2 - t1);
    stop();
    host.callJob("job.validate", job);
    expect(records).toHaveLength(4);
  });

  it("labels a missed deadline", async () => {
    const { host, mgr } = makeHost({ deadlineMs: 100 });
    await host.load(fixture("async-hang.js"));
    const records: HandlerRecord[] = [];
    host.inspect((r) => records.push(r));
    const pending = host.callJob("job.validate", mgr.lookup(mgr.add("NEW", 1))!);
    await mgr.clock.advance(100);
    await pending;
    expect(records.map((r) => r.outcome)).toEqual(["deadline"]);
  });

  it("times every handler call for the metrics, fast path included, marking errors and deadlines", async () => {
    const { host, mgr } = makeHost({ deadlineMs: 100 });
    await host.load(fixture("order-a.js"), { topic: "job.validate" });
    await host.load(fixture("reject-validate.ts"), { message: "nope" });
    await host.load(fixture("async-slow.ts"), { delayMs: 5 });
    await host.load(fixture("throws.js"));
    const timed: Array<[string, string, boolean]> = [];
    const stop = host.time((plugin, topic, ms, failed) => {
      expect(ms).toBeGreaterThanOrEqual(0);
      timed.push([topic, plugin.name, failed]);
    });
    const job = mgr.lookup(mgr.add("NEW", 1))!;
    host.callJob("job.validate", job);
    const pending = host.callJob("job.state.priority", job);
    await mgr.clock.advance(5);
    await pending;
    expect(timed).toEqual([
      ["job.validate", "order-a.js", false],
      ["job.validate", "reject-validate.ts", false],
      ["job.state.priority", "async-slow.ts", false],
      ["job.state.priority", "throws.js", true],
    ]);
    stop();
    host.callJob("job.validate", job);
    expect(timed).toHaveLength(4);
  });

  it("gives every timing listener each call (the metrics and the dashboard's statistics both listen), until each stops", async () => {
    const { host, mgr } = makeHost();
    await host.load(fixture("order-a.js"), { topic: "job.validate" });
    const a: string[] = [];
    const b: string[] = [];
    const stopA = host.time((plugin, topic) => a.push(`${plugin.name} ${topic}`));
    const stopB = host.time((plugin, topic) => b.push(`${plugin.name} ${topic}`));
    const job = mgr.lookup(mgr.add("NEW", 1))!;
    host.callJob("job.validate", job);
    expect(a).toEqual(["order-a.js job.validate"]);
    expect(b).toEqual(["order-a.js job.validate"]);
    stopA();
    host.callJob("job.validate", job);
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(2);
    stopB();
    host.callJob("job.validate", job);
    expect(b).toHaveLength(2);
  });
});

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
    host.callJob("job.validate", job);
    const pending = host.callJob("job.state.priority", job);
    await mgr.clock.advance(5);
    await pending;
    const seen = records.map((r) => [r.topic, r.plugin, r.outcome, r.async, r.id]);
    expect(seen).toEqual([
      ["job.validate", "order-a.js", "ok", false, 1n],
      ["job.validate", "reject-validate.ts", "rejected", false, 1n],
      ["job.state.priority", "async-slow.ts", "ok", true, 1n],
      ["job.state.priority", "throws.js", "error", false, 1n],
    ]);
    expect(records[1]?.message).toBe("nope");
    expect(records.every((r) => r.ms >= 0)).toBe(true);
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
});

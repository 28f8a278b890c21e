import { describe, expect, it } from "vitest";
import type { StackResult } from "../../src/manager/port/port.js";
import { fixture, makeHost } from "./helpers.js";

function sync(r: StackResult | Promise<StackResult>): StackResult {
  if (r instanceof Promise) throw new Error("expected a synchronous stack result");
  return r;
}

describe("stack dispatch", () => {
  it("calls plugins in load order and counts the handlers", async () => {
    const { host, mgr } = makeHost();
    const log: string[] = [];
    await host.load(fixture("order-b.js"), { log });
    await host.load(fixture("order-a.js"), { log });
    const id = mgr.add("RUN", 1);
    const r = sync(host.callJob("job.state.run", mgr.lookup(id)!));
    expect(log).toEqual(["order-b.js job.state.run", "order-a.js job.state.run"]);
    expect(r.handled).toBe(2);
    expect(r.error).toBeUndefined();
  });

  it("runs only the first matching handler of each plugin", async () => {
    const { host, mgr } = makeHost();
    const log: string[] = [];
    await host.load(fixture("first-match.js"), { log });
    const args = mgr.lookup(mgr.add("RUN", 1))!;
    sync(host.callJob("job.state.run", args));
    sync(host.callJob("job.state.sched", args));
    sync(host.callJob("job.new", args));
    expect(log).toEqual(["specific", "state-glob", "job-glob"]);
  });

  it("does no work when no plugin matches a topic", async () => {
    const { host, mgr } = makeHost();
    await host.load(fixture("recorder.js"), { topic: "job.state.*", log: [] });
    expect(host.matches("job.state.run")).toBe(true);
    expect(host.matches("job.validate")).toBe(false);
    const r = sync(host.callJob("job.validate", mgr.lookup(mgr.add("NEW", 1))!));
    expect(r).toEqual({ handled: 0, out: {} });
  });

  it("stops the stack at the first error and labels it with plugin, topic and job", async () => {
    const { host, mgr, logged } = makeHost();
    const log: string[] = [];
    await host.load(fixture("order-a.js"), { log });
    await host.load(fixture("throws.js"));
    await host.load(fixture("order-b.js"), { log });
    const r = sync(host.callJob("job.state.run", mgr.lookup(mgr.add("RUN", 1))!));
    expect(log).toEqual(["order-a.js job.state.run"]);
    expect(r.error?.plugin).toBe("throws.js");
    expect(r.error?.message).toMatch(/^plugin throws\.js: job\.state\.run: job ƒ\S+: boom$/);
    expect(logged.some((l) => l.startsWith("warn: plugin throws.js"))).toBe(true);
  });

  it("merges OUT at the top level: the last priority wins", async () => {
    const { host, mgr } = makeHost();
    await host.load(fixture("order-a.js"), { out: { priority: 5, custom: "a" } });
    await host.load(fixture("order-b.js"), { out: { priority: 9 } });
    const r = sync(host.callJob("job.state.priority", mgr.lookup(mgr.add("PRIORITY", 1))!));
    expect(r.out).toEqual({ priority: 9, custom: "a" });
  });

  it("annotations from several plugins: the later plugin's object replaces the earlier one's (Flux)", async () => {
    const { host, mgr } = makeHost();
    await host.load(fixture("annotate.js"), { annotations: { sched: { reason: "busy" }, x: 1 } });
    await host.load(fixture("order-a.js"), { out: { annotations: { x: null, y: 2 } } });
    const r = sync(host.callJob("job.state.sched", mgr.lookup(mgr.add("SCHED", 1))!));
    expect(r.out.annotations).toEqual({ x: null, y: 2 });
  });

  it("a later plugin's wrong-typed priority replaces a good one: nothing of OUT applies (Flux's unpack)", async () => {
    const { host, mgr } = makeHost();
    await host.load(fixture("order-a.js"), { topic: "job.state.priority", out: { priority: 7, annotations: { a: 1 } } });
    await host.load(fixture("bad-priority.js"));
    const id = mgr.add("PRIORITY", 1);
    mgr.calls.length = 0;
    const r = sync(host.callJob("job.state.priority", mgr.lookup(id)!));
    expect(r.out).not.toHaveProperty("priority");
    expect(r.out).not.toHaveProperty("annotations");
    expect(mgr.calls).toHaveLength(1);
    // A later good value replaces the bad one again.
    await host.load(fixture("order-b.js"), { topic: "job.state.priority", out: { priority: 9 } });
    expect(sync(host.callJob("job.state.priority", mgr.lookup(id)!)).out.priority).toBe(9);
  });

  it("rejects with the plugin's message, or Flux's default naming the plugin", async () => {
    const { host, mgr } = makeHost();
    const log: string[] = [];
    await host.load(fixture("reject-validate.ts"), { message: "too many jobs" });
    await host.load(fixture("order-a.js"), { log, topic: "job.validate" });
    const args = mgr.lookup(mgr.add("NEW", 1))!;
    const r = sync(host.callJob("job.validate", args));
    expect(r.error).toEqual({ plugin: "reject-validate.ts", message: "too many jobs" });
    expect(log).toEqual([]); // the stack stopped at the rejection
    expect(r.out.errmsg).toBe("too many jobs");

    host.remove("reject-validate.ts");
    await host.load(fixture("reject-validate.ts"));
    const r2 = sync(host.callJob("job.validate", args));
    expect(r2.error?.message).toBe("rejected by job-manager plugin 'reject-validate.ts'");
  });

  it("raises a non-fatal exception for a priority of the wrong type", async () => {
    const { host, mgr } = makeHost();
    await host.load(fixture("bad-priority.js"));
    const id = mgr.add("PRIORITY", 1);
    mgr.calls.length = 0;
    const r = sync(host.callJob("job.state.priority", mgr.lookup(id)!));
    expect(r.out.priority).toBeUndefined();
    expect(mgr.calls).toHaveLength(1);
    expect(mgr.calls[0]).toMatch(
      /^exception 1 job\.state\.priority 4 bad-priority\.js: priority must be an integer, got "high" \(job may be stuck in PRIORITY state\)$/,
    );
    // job.priority.get only logs and keeps the current priority.
    const r2 = sync(host.callJob("job.priority.get", mgr.lookup(id)!));
    expect(r2.out.priority).toBeUndefined();
    expect(mgr.calls).toHaveLength(1);
  });

  it("refuses R outside job.state.sched", async () => {
    const { host, mgr } = makeHost();
    await host.load(fixture("order-a.js"), { out: { R: { execution: {} } } });
    const args = mgr.lookup(mgr.add("SCHED", 1))!;
    expect(sync(host.callJob("job.state.sched", args)).out.R).toEqual({ execution: {} });
    const r = sync(host.callJob("job.state.run", args));
    expect(r.error?.message).toMatch(/R may only be set in SCHED state$/);
  });

  it("posts staged jobspec updates once, after the plugin's handler returns", async () => {
    const { host, mgr } = makeHost();
    const id = mgr.add("DEPEND", 1);
    const seen: string[][] = [];
    await host.load(fixture("jobspec-stage.ts"), { seen, calls: mgr.calls });
    mgr.calls.length = 0;
    seen.length = 0;
    sync(host.callJob("job.state.depend", mgr.lookup(id)!));
    expect(seen).toEqual([[]]);
    expect(mgr.calls).toEqual([
      'jobspec-update 1 {"attributes.system.a":1,"attributes.system.b":2}',
    ]);
  });
  it("makes each plugin of one stack call current in turn, and only while its handler runs", async () => {
    const { host, mgr } = makeHost();
    const id = mgr.add("DEPEND", 1);
    const topic = "job.state.depend";
    const names = ["A", "B", "C", "D"];
    const now = () => names.map((n) => host.currentTopic(id, n) ?? "-").join(" ");
    const seen: string[] = [];
    // A and D only look; B stages an update; C is asynchronous and stages after a wait.
    await host.loadDefinition("A", (p) => p.on(topic, () => void seen.push(`A: ${now()}`)));
    await host.loadDefinition("B", (p) => {
      p.on(topic, (job) => {
        seen.push(`B: ${now()}`);
        p.jobspecUpdate(job.id, { "attributes.system.b": 2 });
      });
    });
    await host.loadDefinition("C", (p) => {
      p.on(topic, async (job) => {
        seen.push(`C: ${now()}`);
        await Promise.resolve();
        seen.push(`C after a wait: ${now()}`);
        p.jobspecUpdate(job.id, { "attributes.system.c": 3 });
      });
    });
    await host.loadDefinition("D", (p) => p.on(topic, () => void seen.push(`D: ${now()}`)));
    // (Loading replays the job's state to each plugin; that is tested elsewhere.)
    seen.length = 0;
    mgr.calls.length = 0;
    const r = await host.callJob(topic, mgr.lookup(id)!);
    expect(r.handled).toBe(4);
    const t = topic;
    expect(seen).toEqual([`A: ${t} - - -`, `B: - ${t} - -`, `C: - - ${t} -`, `C after a wait: - - ${t} -`, `D: - - - ${t}`]);
    // Each plugin's staged update posts when its own handler ends, in plugin order.
    expect(mgr.calls).toEqual(['jobspec-update 1 {"attributes.system.b":2}', 'jobspec-update 1 {"attributes.system.c":3}']);
    expect(now()).toBe("- - - -");
  });
  it("counts handlers that return nothing, then merges from the first that returns OUT on", async () => {
    const { host, mgr } = makeHost();
    const topic = "job.state.run";
    const seen: string[] = [];
    await host.loadDefinition("A", (p) => p.on(topic, () => void seen.push("A")));
    await host.loadDefinition("B", (p) => p.on(topic, () => (seen.push("B"), { annotations: { b: 1 } })));
    await host.loadDefinition("C", (p) => p.on(topic, () => void seen.push("C")));
    await host.loadDefinition("D", (p) => p.on(topic, () => { seen.push("D"); throw new Error("late"); }));
    await host.loadDefinition("E", (p) => p.on(topic, () => void seen.push("E")));
    seen.length = 0;
    const r = sync(host.callJob(topic, mgr.lookup(mgr.add("RUN", 1))!));
    expect(seen).toEqual(["A", "B", "C", "D"]);
    expect(r.handled).toBe(4);
    expect(r.out).toEqual({ annotations: { b: 1 }, errmsg: expect.stringMatching(/^plugin D: job\.state\.run: job \S+: late$/) });
    expect(r.error?.plugin).toBe("D");
  });

  it("hands p.call's caller a result of its own even when no handler returned anything", async () => {
    const { host, mgr } = makeHost();
    const got: Array<{ handled: number; out: Record<string, unknown> }> = [];
    await host.loadDefinition("callee", (p) => p.on("x.ping", () => undefined));
    await host.loadDefinition("caller", (p) => {
      p.on("job.state.run", (job) => {
        for (let i = 0; i < 2; i++) {
          const r = p.call("x.ping", {}, job.id) as { handled: number; out: Record<string, unknown> };
          got.push({ handled: r.handled, out: { ...r.out } });
          // The caller owns what it got: changing it must not reach the next call's result.
          r.out.mine = i;
          r.handled = 99;
        }
      });
    });
    const id = mgr.add("RUN", 1);
    const r = sync(host.callJob("job.state.run", mgr.lookup(id)!));
    expect(r.error).toBeUndefined();
    expect(got).toEqual([{ handled: 1, out: {} }, { handled: 1, out: {} }]);
    expect(sync(host.callJob("job.state.run", mgr.lookup(id)!))).toEqual({ handled: 1, out: {} });
  });
});

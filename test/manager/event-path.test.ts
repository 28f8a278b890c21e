/**
 * The engine's per-event fast paths, observed from outside: one clock reading per cascade
 * (event timestamps) and the args objects stack calls hand plugins (one literal per shape).
 */
import { describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import type { JobArgs } from "../../src/manager/port/records.js";
import { JobManager } from "../../src/manager/manager.js";
import { fakePort, type FakePort } from "./fake-port.js";
import { simManager, submitNow, testJob } from "./helpers.js";

/** A simulated clock on which every reading is a millisecond later than the last one, as
 *  if time passed between any two reads (what a real clock may do). */
class TickingClock extends SimulatedClock {
  reads = 0;
  override now(): number {
    return super.now() + this.reads++;
  }
}

const STANDARD = ["id", "userid", "urgency", "priority", "state", "t_submit", "jobspec", "dependencies", "annotations", "flags"];

describe("event timestamps", () => {
  it("a cascade reads the clock once for all its events; the next one reads it anew", async () => {
    const clock = new TickingClock();
    const s = await simManager({ clock, resources: { cores: 1 } });
    const id = await submitNow(s, testJob("10s"));
    await s.clock.advance(20_000);
    const log = s.mgr.eventlog(id);
    const at = (name: string) => log.find((e) => e.name === name)!.timestamp;
    expect(log.map((e) => e.name)).toEqual(["submit", "validate", "depend", "priority", "alloc", "start", "finish", "release", "free", "clean"]);
    // depend and priority are posted while validate is processed, start while alloc is,
    // free and clean while release is: each group is one cascade, stamped with one reading.
    expect(at("priority")).toBe(at("depend"));
    expect(at("start")).toBe(at("alloc"));
    expect(new Set([at("release"), at("free"), at("clean")]).size).toBe(1);
    // Separate cascades (and the clock's own advance) read it again, never going back.
    expect(at("depend")).toBeGreaterThan(at("validate"));
    expect(at("alloc")).toBeGreaterThan(at("priority"));
    expect(at("finish")).toBeGreaterThan(at("start"));
    expect(at("release")).toBeGreaterThan(at("finish"));
    for (let i = 1; i < log.length; i++) expect(log[i]!.timestamp).toBeGreaterThanOrEqual(log[i - 1]!.timestamp);
    // A later post, outside any cascade, is stamped with a fresh reading.
    const before = clock.reads;
    const other = await submitNow(s, testJob("10s"));
    expect(s.mgr.eventlog(other)[0]!.timestamp).toBeGreaterThan(at("clean"));
    expect(clock.reads).toBeGreaterThan(before);
  });
});

describe("event timestamps after a failure", () => {
  it("a cascade that throws ends with its shared reading: the next post reads the clock", async () => {
    const clock = new TickingClock();
    const s = await simManager({
      clock,
      plugins: (m) => {
        const port: FakePort = fakePort({})(m);
        const matches = port.matches;
        // A host bug surfacing in the middle of a cascade (the engine does not catch it).
        port.matches = (topic) => {
          if (topic === "job.event.boom") throw new Error("boom");
          return matches(topic);
        };
        return port;
      },
    });
    const id = await submitNow(s, testJob("1h"), { urgency: 0 });
    const engine = JobManager.internals(s.mgr).engine;
    const job = engine.active.get(id)!;
    expect(() => engine.post(job, "boom")).toThrow("boom");
    engine.post(job, "mark");
    const log = s.mgr.eventlog(id);
    const at = (name: string) => log.find((e) => e.name === name)!.timestamp;
    expect(at("mark")).toBeGreaterThan(at("boom"));
  });
});

describe("stack call args", () => {
  it("keep their keys in order in every shape, and each call gets its own object", async () => {
    const seen: Array<{ topic: string; keys: string[]; args: JobArgs }> = [];
    const record = (topic: string) => (a: JobArgs) => void seen.push({ topic, keys: Object.keys(a), args: a });
    const topics = ["job.new", "job.state.sched", "job.state.run", "job.state.cleanup", "job.state.inactive", "job.inactive-add", "job.destroy"];
    const s = await simManager({ plugins: fakePort(Object.fromEntries(topics.map((t) => [t, record(t)]))) });
    const ran = await submitNow(s, testJob("1s"));
    await s.clock.advance(2_000);
    // A held job cancelled in SCHED ends with an end event and no R.
    const held = await submitNow(s, testJob("1s"), { urgency: 0 });
    s.mgr.cancel(held);
    await s.clock.advance(10);
    const keysOf = (id: bigint) => seen.filter((c) => c.args.id === id).map((c) => [c.topic, c.keys.join(",")]);
    const k = (...extra: string[]) => [...STANDARD, ...extra].join(",");
    expect(keysOf(ran)).toEqual([
      ["job.new", k()],
      ["job.state.sched", k("entry", "prev_state")],
      ["job.state.run", k("R", "entry", "prev_state")],
      ["job.state.cleanup", k("R", "end_event", "entry", "prev_state")],
      ["job.state.inactive", k("R", "end_event", "entry", "prev_state")],
      ["job.inactive-add", k("R", "end_event")],
      ["job.destroy", k("R", "end_event")],
    ]);
    expect(keysOf(held)).toEqual([
      ["job.new", k()],
      ["job.state.sched", k("entry", "prev_state")],
      ["job.state.cleanup", k("end_event", "entry", "prev_state")],
      ["job.state.inactive", k("end_event", "entry", "prev_state")],
      ["job.inactive-add", k("end_event")],
      ["job.destroy", k("end_event")],
    ]);
    // Plugins may keep what they are handed: no two calls share an args object.
    expect(new Set(seen.map((c) => c.args)).size).toBe(seen.length);
    const inactive = seen.find((c) => c.args.id === ran && c.topic === "job.state.inactive")!.args;
    expect(inactive).toMatchObject({ state: "INACTIVE", prev_state: "CLEANUP", entry: { name: "clean" }, end_event: { name: "finish" } });
    expect(inactive.R).toHaveProperty("execution.R_lite");
  });
});

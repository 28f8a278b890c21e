/**
 * Flux's exact semantics where jobtap once drifted (issue 19), on a real in-memory manager:
 * annotations from several plugins, annotations on inactive jobs, a wrong-typed priority,
 * and `job.event.*` subscribers (subscription order, a failure stops the rest).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { JobId, PluginContext } from "../../src/plugin.js";
import { createTestHost, type TestHost } from "../../src/testhost.js";

let h: TestHost;
afterEach(async () => {
  await h?.close();
});

const annotator = (annotations: Record<string, unknown>) => (p: PluginContext) => {
  p.on("job.state.sched", () => ({ annotations }));
};

describe("Flux semantics of OUT and subscribers", () => {
  it("the later plugin's annotations replace the earlier's; annotations stay on the inactive job", async () => {
    h = await createTestHost();
    await h.plugins.loadDefinition("first", annotator({ sched: { reason: "busy" } }));
    await h.plugins.loadDefinition("second", annotator({ user: { note: "hi" } }));
    const id = await h.submit({ runDuration: 1 });
    await h.advance(10);
    expect(h.job(id).annotations).toEqual({ user: { note: "hi" } });
    const info = await h.runToCompletion(id);
    expect(info.state).toBe("INACTIVE");
    expect(info.annotations).toEqual({ user: { note: "hi" } });
    expect(h.manager.jobs({ states: ["INACTIVE"] })[0]?.annotations).toEqual({ user: { note: "hi" } });
  });

  it("a later wrong-typed priority replaces .priority-default's: the job stays in PRIORITY", async () => {
    h = await createTestHost({
      plugin: (p: PluginContext) => p.on("job.state.priority", () => ({ priority: "high" as unknown as number })),
    });
    const id = await h.submit({});
    await h.advance(100);
    expect(h.job(id).state).toBe("PRIORITY");
    const ex = h.eventlog(id).find((e) => e.name === "exception");
    expect(ex?.context).toMatchObject({ type: "job.state.priority", severity: 4 });
    expect(String(ex?.context?.note)).toMatch(/priority must be an integer, got "high" \(job may be stuck in PRIORITY state\)$/);
  });

  it("job.event.* subscribers run in subscription order; a failing one stops the rest", async () => {
    const calls: string[] = [];
    const subscriber = (name: string, fails: boolean) => (p: PluginContext) => {
      p.on("job.event.start", () => {
        calls.push(name);
        if (fails) throw new Error(`${name} failed`);
      });
      p.on("job.state.depend", (job) => void (name !== "late" && p.subscribe(job.id)));
      p.on("job.state.sched", (job) => void (name === "late" && p.subscribe(job.id)));
    };
    h = await createTestHost();
    // Load order: late, failing, quiet; subscription order: failing, quiet (DEPEND), late (SCHED).
    await h.plugins.loadDefinition("late", subscriber("late", false));
    await h.plugins.loadDefinition("failing", subscriber("failing", true));
    await h.plugins.loadDefinition("quiet", subscriber("quiet", false));
    const id = await h.submit({ runDuration: 1 });
    await h.runToCompletion(id);
    expect(calls).toEqual(["failing"]);
    expect(h.log.some((l) => l.includes("failing failed"))).toBe(true);
    expect(h.job(id).result).toBe("COMPLETED");
    h.plugins.remove("failing");
    calls.length = 0;
    await h.runToCompletion(await h.submit({ runDuration: 1 }));
    expect(calls).toEqual(["quiet", "late"]);
  });
});

describe("hold and expedite under load (Flux's alloc queue: priority desc, then id)", () => {
  it("200 jobs on one core: expedited first, then by id; held never until released", async () => {
    h = await createTestHost({ resources: { cores: 1 } });
    const urgencyOf = (i: number) => (i % 10 === 3 ? 31 : i % 10 === 7 ? 0 : 16);
    const ids: JobId[] = [];
    for (let i = 0; i < 200; i++) ids.push(await h.submit({ runDuration: 1, urgency: urgencyOf(i) }));
    // One more, expedited while it waits in SCHED: it overtakes everything not yet allocated.
    const late = await h.submit({ runDuration: 1 });
    h.manager.setUrgency(late, 31);
    const allocAt = (id: JobId) => h.eventlog(id).find((e) => e.name === "alloc")?.timestamp;
    for (let t = 0; t < 400 && ids.some((id, i) => urgencyOf(i) !== 0 && h.job(id).state !== "INACTIVE"); t++) await h.advance(1000);
    const held = ids.filter((_, i) => urgencyOf(i) === 0);
    expect(held.every((id) => h.job(id).state === "SCHED" && allocAt(id) === undefined)).toBe(true);
    const ran = [...ids.filter((_, i) => urgencyOf(i) !== 0), late].sort((a, b) => allocAt(a)! - allocAt(b)! || (a < b ? -1 : 1));
    const expedited = ids.filter((_, i) => urgencyOf(i) === 31);
    const normal = ids.filter((_, i) => urgencyOf(i) === 16);
    // The first job took the core before anything queued behind it; after it, the queue order.
    const order = ran.slice(1);
    const firstNormalAfterLate = order.indexOf(late) + 1;
    expect(order.slice(0, order.indexOf(late) + 1).every((id) => expedited.includes(id) || id === late)).toBe(true);
    expect(order.filter((id) => expedited.includes(id))).toEqual(expedited.filter((id) => id !== ran[0]));
    expect(order.slice(firstNormalAfterLate)).toEqual(normal.filter((id) => id !== ran[0]));
    h.manager.setUrgency(held[0]!, 16);
    expect((await h.runToCompletion(held[0]!)).result).toBe("COMPLETED");
  }, 60_000);
});

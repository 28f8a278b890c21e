import { afterEach, describe, expect, it } from "vitest";
import { host, type TestHost } from "./helpers.js";

let h: TestHost;
afterEach(async () => {
  await h?.close();
});

const PRIORITY_MAX = 4294967295;

describe(".priority-default", () => {
  it("priority = urgency, recomputed on an urgency change, with the hold and expedite overrides", async () => {
    h = await host({}, { resources: { cores: 1 } });
    await h.submit({ runDuration: 3600 }); // holds the only core, so the job stays in SCHED
    const id = await h.submit({ urgency: 7 });
    await h.advance(20);
    expect(h.job(id)).toMatchObject({ state: "SCHED", priority: 7 });
    h.manager.setUrgency(id, 20);
    await h.advance(20);
    expect(h.job(id).priority).toBe(20);
    h.manager.setUrgency(id, 0);
    await h.advance(20);
    expect(h.job(id).priority).toBe(0);
    h.manager.setUrgency(id, 31);
    await h.advance(20);
    expect(h.job(id).priority).toBe(PRIORITY_MAX);
  });

  it("answers job.priority.get with the urgency when every job is reprioritized (runtime load)", async () => {
    h = await host({}, { resources: { cores: 1 } });
    await h.submit({ runDuration: 3600 });
    const id = await h.submit({ urgency: 9 });
    await h.advance(20);
    await h.plugins.load("alloc-bypass");
    await h.advance(20);
    expect(h.eventlog(id).filter((e) => e.name === "priority").map((e) => e.context?.priority)).toEqual([9]);
    expect(h.job(id).priority).toBe(9);
  });
});

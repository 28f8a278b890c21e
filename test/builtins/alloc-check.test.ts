import { afterEach, describe, expect, it } from "vitest";
import { exceptions, host, type TestHost } from "./helpers.js";

let h: TestHost;
afterEach(async () => {
  await h?.close();
});

const R = (cores: string) => ({
  version: 1,
  execution: { R_lite: [{ rank: "0", children: { core: cores } }], starttime: 0, expiration: 0 },
});

/** alloc-bypass gives the owner a way to hand a job an R the scheduler did not choose. */
async function withPlugins(...names: string[]): Promise<TestHost> {
  const t = await host({}, { owner: 0, resources: { cores: 2 } });
  for (const n of names) await t.plugins.load(n);
  return t;
}

describe("alloc-check (shipped, load by name)", () => {
  it("a double-booked core is a fatal alloc-check exception, not two jobs sharing it", async () => {
    h = await withPlugins("alloc-bypass", "alloc-check");
    const a = await h.submit({ userid: 0, runDuration: 100 });
    await h.advance(10);
    expect(h.job(a).state).toBe("RUN");
    // The scheduler gave `a` core 0 of the 2-core pool: bypass onto cores 0-1 collides.
    const b = await h.submit({ userid: 0, runDuration: 1, system: { "alloc-bypass": { R: R("0-1") } } });
    const info = await h.runToCompletion(b);
    expect(info.result).toBe("FAILED");
    expect(exceptions(h, b)).toEqual(["alloc-check:0:resources already allocated"]);
    // The refused R is not remembered: `a`'s core stays booked until `a` frees it.
    expect(await h.plugins.query("alloc-check")).toMatchObject({ allocated: 1 });
    await h.runToCompletion(a);
    expect(await h.plugins.query("alloc-check")).toMatchObject({ allocated: 0 });
  });

  it("disjoint allocations pass, and freed resources can be allocated again", async () => {
    h = await withPlugins("alloc-bypass", "alloc-check");
    const a = await h.submit({ userid: 0, runDuration: 5 });
    const b = await h.submit({ userid: 0, runDuration: 5, system: { "alloc-bypass": { R: R("1") } } });
    expect((await h.runToCompletion(a)).result).toBe("COMPLETED");
    expect((await h.runToCompletion(b)).result).toBe("COMPLETED");
    const c = await h.submit({ userid: 0, runDuration: 1, system: { "alloc-bypass": { R: R("0-1") } } });
    expect((await h.runToCompletion(c)).result).toBe("COMPLETED");
    expect(exceptions(h, c)).toEqual([]);
  });
});

describe("submit-hold (shipped, load by name)", () => {
  it("holds every new job (urgency 0, priority 0 in SCHED) until its urgency is raised", async () => {
    h = await withPlugins("submit-hold");
    const id = await h.submit({ runDuration: 1 });
    await h.advance(100);
    expect(h.job(id)).toMatchObject({ state: "SCHED", urgency: 0, priority: 0 });
    const urgency = h.eventlog(id).find((e) => e.name === "urgency");
    expect(urgency?.context).toEqual({ userid: 0, urgency: 0 });
    h.manager.setUrgency(id, 16);
    expect((await h.runToCompletion(id)).result).toBe("COMPLETED");
  });
});

/**
 * `job why` for accounting: the limit holding a job (replacing the manager's generic
 * dependency line in place) and the priority factor by factor.
 */
import { afterEach, describe, expect, it } from "vitest";
import { acctHost, ALICE, call, exampleTree } from "./accounting-helpers.js";
import type { TestHost } from "./helpers.js";

let h: TestHost;
afterEach(async () => {
  await h?.close();
});

describe("accounting: job why", () => {
  it("names the running limit holding a job, with the association's counts", async () => {
    h = await acctHost();
    await exampleTree(h);
    await call(h, "edit-user", { uid: ALICE, limits: { "max-running-jobs": 1 } });
    await h.submit({ userid: ALICE, runDuration: 60 });
    const b = await h.submit({ userid: ALICE, runDuration: 60 });
    await h.advance(1000);
    const why = await h.manager.why(b);
    const limit = why.reasons.filter((r) => r.key === "dependency:accounting: max-running-jobs of user 1001 in bank physics");
    expect(limit).toHaveLength(1);
    expect(limit[0]).toMatchObject({ source: "accounting", code: "accounting-limit", layer: "state" });
    expect(limit[0]!.figures).toMatchObject({ bank: "physics", running: 1, active: 2 });
  });

  it("gives a pending job's priority factor by factor", async () => {
    h = await acctHost({}, { cores: 1 });
    await exampleTree(h);
    await h.submit({ userid: ALICE, runDuration: 600 });
    const b = await h.submit({ userid: ALICE, runDuration: 600 });
    await h.advance(1000);
    const why = await h.manager.why(b);
    const p = why.reasons.find((r) => r.code === "priority-factors");
    expect(p?.source).toBe("accounting");
    expect(p?.text).toMatch(/^priority \d+ = fairShare [\d.]+×\d+/);
    expect(p?.figures.priority).toBe(h.job(b).priority);
    expect(p?.figures.bank).toBe("physics");
  });
});

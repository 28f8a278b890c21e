import { afterEach, describe, expect, it } from "vitest";
import { acctHost, ALICE, BOB, CAROL, call, DAVE, exampleTree, use, users } from "./accounting-helpers.js";
import type { TestHost } from "./helpers.js";

let h: TestHost;
afterEach(async () => {
  await h?.close();
});

describe("accounting: Fair Tree", () => {
  it("ranks the worked three-level example of docs/accounting.md", async () => {
    h = await acctHost();
    await exampleTree(h);
    await use(h, ALICE, 100);
    await use(h, BOB, 300);
    await use(h, DAVE, 200);
    await call(h, "recompute");
    const u = await users(h);
    expect(Math.round(u.get(ALICE)!.usage)).toBe(100);
    expect([ALICE, CAROL, BOB, DAVE].map((x) => u.get(x)!.fairShare)).toEqual([1, 0.75, 0.5, 0.25]);
  });
});

describe("accounting: classic factor and decay", () => {
  it("classic gives 2^(-U/S) from the normalized share and usage", async () => {
    h = await acctHost({ "fair-share": "classic" });
    await exampleTree(h);
    await use(h, ALICE, 100);
    await use(h, DAVE, 300);
    await call(h, "recompute");
    const u = await users(h);
    const total = u.get(ALICE)!.usage + u.get(DAVE)!.usage;
    // alice: 3/4 of the machine × 1/2 of physics; dave: 1/4 × 1.
    expect(u.get(ALICE)!.fairShare).toBeCloseTo(2 ** (-(u.get(ALICE)!.usage / total) / 0.375), 9);
    expect(u.get(DAVE)!.fairShare).toBeCloseTo(2 ** (-(u.get(DAVE)!.usage / total) / 0.25), 9);
    expect(u.get(CAROL)!.fairShare).toBe(1);
  });

  it("halves usage every half-life of simulated time", async () => {
    h = await acctHost({ "decay-half-life": "1d" });
    await exampleTree(h);
    await use(h, ALICE, 1000);
    const at0 = (await users(h)).get(ALICE)!.usage;
    expect(at0).toBeGreaterThan(999);
    await h.advance(86400_000);
    expect((await users(h)).get(ALICE)!.usage).toBeCloseTo(at0 / 2, 6);
    await h.advance(2 * 86400_000);
    expect((await users(h)).get(ALICE)!.usage).toBeCloseTo(at0 / 8, 6);
    const detail = (await call(h, "usage", { uid: ALICE }, ALICE)) as { associations: Array<{ coreSeconds: number }> };
    expect(detail.associations[0]!.coreSeconds).toBeCloseTo(at0 / 8, 6);
  });

  it("with the default 7-day half-life, a user idle for a week climbs back above a busier one", async () => {
    h = await acctHost();
    await exampleTree(h);
    await call(h, "edit-bank", { name: "physics", shares: 1 });
    await use(h, ALICE, 1000); // physics, long ago
    await h.advance(14 * 86400_000);
    await use(h, DAVE, 400); // chem, recent
    await call(h, "recompute");
    const u = await users(h);
    expect(u.get(ALICE)!.usage).toBeCloseTo(250, 0);
    expect(u.get(ALICE)!.fairShare).toBeGreaterThan(u.get(DAVE)!.fairShare);
  });
});

describe("accounting: priority formula", () => {
  it("adds the queue and job-size factors with their weights, and the fast path agrees with the explanation", async () => {
    const { readAccountingConfig } = await import("../../plugins-builtin/accounting/config.js");
    const { combine, factorsOf, priorityOf } = await import("../../plugins-builtin/accounting/priority.js");
    const { testJobspec } = await import("../../src/testhost.js");
    const cfg = readAccountingConfig({ accounting: { queues: { debug: 0.5 }, weights: { "job-size": 6400 }, "job-size-max": 64 } });
    const now = 1_000_000_000;
    const job = { urgency: 16, t_submit: now / 1000 - 7 * 86400 / 2, jobspec: testJobspec({ cores: 16, system: { queue: "debug" } }) } as never;
    // 100000 × 0.25 + 100 × 0.5 (half of max-age) + 1000 × 16/31 + 10000 × 0.5 + 6400 × 16/64
    const expected = Math.round(25000 + 50 + (1000 * 16) / 31 + 5000 + 1600);
    expect(priorityOf(cfg, 0.25, job, now)).toBe(expected);
    expect(combine(cfg.weights, factorsOf(cfg, 0.25, job, now))).toBe(expected);
  });
});

import { afterEach, describe, expect, it } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import { acctHost, ALICE, BOB, CAROL, call, DAVE, exampleTree, use } from "./accounting-helpers.js";
import { until, type TestHost } from "./helpers.js";

let h: TestHost;
afterEach(async () => {
  await h?.close();
});

/** docs/accounting.md's formula with the default weights. */
const formula = (fs: number, ageSeconds: number, urgency: number) =>
  Math.round(100000 * fs + 100 * Math.min(1, ageSeconds / (7 * 86400)) + 1000 * (urgency / 31));

describe("accounting: multi-factor priority", () => {
  it("orders a mixed queue by the documented formula", async () => {
    h = await acctHost({ "recompute-period": "1d" }, { cores: 1 });
    await exampleTree(h);
    await use(h, ALICE, 100);
    await use(h, BOB, 300);
    await use(h, DAVE, 200);
    const blocker = await h.submit({ userid: CAROL, runDuration: 3600 });
    await h.advance(1000);
    const jobs: Array<{ id: JobId; fs: number; urgency: number }> = [];
    const add = async (uid: number, fs: number, urgency: number) => jobs.push({ id: await h.submit({ userid: uid, urgency, runDuration: 1 }), fs, urgency });
    await add(DAVE, 0.25, 15);
    await add(BOB, 0.5, 2);
    await add(ALICE, 1, 8);
    await add(CAROL, 0.75, 16);
    await add(ALICE, 1, 12);
    await h.advance(600_000);
    await call(h, "recompute");
    const now = h.clock.now() / 1000;
    for (const j of jobs) expect(h.job(j.id).priority).toBe(formula(j.fs, now - h.job(j.id).t_submit, j.urgency));
    // plugin query explains the same figure factor by factor
    type Part = { factor: number; weight: number; value: number };
    const q = (await h.plugins.query("accounting")) as { jobs: Record<string, { bank: string; priority: number; factors: Record<string, Part> }> };
    const dave = q.jobs[String(jobs[0]!.id)]!;
    expect(dave.priority).toBe(h.job(jobs[0]!.id).priority);
    expect(dave.bank).toBe("chem");
    expect(dave.factors.fairShare!.factor).toBe(0.25);
    expect(dave.factors.urgency!.factor).toBeCloseTo(15 / 31, 12);
    const weights = { fairShare: 100000, age: 100, urgency: 1000, queue: 10000, jobSize: 0 };
    for (const j of jobs) {
      const e = q.jobs[String(j.id)]!;
      expect(Object.fromEntries(Object.entries(e.factors).map(([k, p]) => [k, p.weight]))).toEqual(weights);
      for (const p of Object.values(e.factors)) expect(p.value).toBeCloseTo(p.weight * p.factor, 9);
      // the contributions add up to the priority the job has
      expect(Math.round(Object.values(e.factors).reduce((sum, p) => sum + p.value, 0))).toBe(h.job(j.id).priority);
    }
    // they start in priority order once the blocker is done
    await h.advance(3600_000);
    await h.runToCompletion(blocker);
    for (const j of jobs) await h.runToCompletion(j.id);
    const startAt = (id: JobId) => h.eventlog(id).find((e) => e.name === "start")!.timestamp;
    const byStart = [...jobs].sort((a, b) => startAt(a.id) - startAt(b.id)).map((j) => j.id);
    const byFormula = [...jobs].sort((a, b) => formula(b.fs, 0, b.urgency) - formula(a.fs, 0, a.urgency)).map((j) => j.id);
    expect(byStart).toEqual(byFormula);
  });

  it("two users' throughput over a simulated week converges to their 2:1 share ratio within 5%", async () => {
    h = await acctHost({}, { cores: 4 });
    await call(h, "add-bank", { name: "root" });
    await call(h, "add-user", { uid: ALICE, bank: "root", shares: 2 });
    await call(h, "add-user", { uid: BOB, bank: "root", shares: 1 });
    const mine = new Map<number, JobId[]>([[ALICE, []], [BOB, []]]);
    const pending = (uid: number) => mine.get(uid)!.filter((id) => h.job(id).state !== "INACTIVE" && h.job(id).state !== "RUN").length;
    const end = h.clock.now() + 7 * 86400_000;
    while (h.clock.now() < end) {
      for (const uid of [ALICE, BOB]) while (pending(uid) < 6) mine.get(uid)!.push(await h.submit({ userid: uid, runDuration: 3600 }));
      await h.advance(600_000);
    }
    const done = (uid: number) => mine.get(uid)!.filter((id) => h.job(id).state === "INACTIVE").length;
    const ratio = done(ALICE) / done(BOB);
    expect(done(ALICE) + done(BOB)).toBeGreaterThan(600);
    expect(Math.abs(ratio - 2) / 2).toBeLessThan(0.05);
  }, 120_000);
});

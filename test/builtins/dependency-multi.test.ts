/**
 * Jobs with two or three after* dependencies (issue 32): the dependent leaves DEPEND once
 * every dependency is removed, and a dependency that can never be satisfied ends it with a
 * fatal `dependency` exception (Flux: afterok on a failed antecedent, afternotok on one that
 * succeeded). Every mix of afterok / afternotok / afterany over antecedents that succeed or
 * fail, ending together, one by one, before the dependent is submitted, and across a restart.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { testJobspec, type TestJob } from "../../src/testhost.js";

type Scheme = "afterok" | "afternotok" | "afterany";
const SCHEMES: readonly Scheme[] = ["afterok", "afternotok", "afterany"];

/** One dependent over n antecedents: scheme i on antecedent i, which fails if `fails[i]`. */
interface Case {
  schemes: Scheme[];
  fails: boolean[];
}

/** Every case of 2 and 3 dependencies: all scheme tuples × all outcome tuples. */
function cases(): Case[] {
  const out: Case[] = [];
  for (const n of [2, 3]) {
    for (let s = 0; s < 3 ** n; s++) {
      const schemes = Array.from({ length: n }, (_, i) => SCHEMES[Math.floor(s / 3 ** i) % 3]!);
      for (let f = 0; f < 2 ** n; f++) out.push({ schemes, fails: Array.from({ length: n }, (_, i) => ((f >> i) & 1) === 1) });
    }
  }
  return out;
}

/** Flux's rule: the dependent runs iff every dependency is satisfied by its antecedent's end. */
function satisfied(c: Case): boolean {
  return c.schemes.every((s, i) => s === "afterany" || (s === "afterok") !== c.fails[i]);
}

const label = (c: Case) => c.schemes.map((s, i) => `${s}:${c.fails[i] ? "fail" : "ok"}`).join(",");

let dir: string;
const open: JobManager[] = [];
afterEach(async () => {
  for (const m of open.splice(0)) await m.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A real manager with every builtin on a SQLite store in `dir`, on a simulated clock. */
async function start(clock: SimulatedClock): Promise<JobManager> {
  const m = await createJobManager({
    statedir: dir,
    clock,
    config: {},
    resources: { cores: 4096 },
    log: () => undefined,
    plugins: jobtapPlugins({ config: {}, pluginPath: [], log: () => undefined }),
  });
  open.push(m);
  return m;
}

async function submit(m: JobManager, clock: SimulatedClock, job: TestJob): Promise<JobId> {
  const p = m.submit(testJobspec(job), job.urgency !== undefined ? { urgency: job.urgency } : {});
  let done = false;
  p.then(() => (done = true), () => (done = true));
  while (!done) await clock.advance(10);
  return p;
}

async function until(clock: SimulatedClock, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 100_000 && !cond(); i++) await clock.advance(10);
}

interface Placed {
  c: Case;
  antecedents: JobId[];
  dependent?: JobId;
  rejection?: string;
}

/** Held antecedents for every case (released later by urgency). */
async function antecedents(m: JobManager, clock: SimulatedClock, all: Case[]): Promise<Placed[]> {
  const placed: Placed[] = [];
  for (const c of all) {
    const ids: JobId[] = [];
    for (const fail of c.fails) ids.push(await submit(m, clock, { urgency: 0, runDuration: 1, waitStatus: fail ? 256 : 0 }));
    placed.push({ c, antecedents: ids });
  }
  return placed;
}

async function dependents(m: JobManager, clock: SimulatedClock, placed: Placed[]): Promise<void> {
  for (const p of placed) {
    const dependencies = p.c.schemes.map((scheme, i) => ({ scheme, value: formatJobId(p.antecedents[i]!) }));
    try {
      p.dependent = await submit(m, clock, { dependencies });
    } catch (e) {
      p.rejection = (e as Error).message;
    }
  }
}

/** Releases antecedent `i` of every case (those with one) and waits for them to end. */
async function finish(m: JobManager, clock: SimulatedClock, placed: Placed[], i: number): Promise<void> {
  const ids = placed.flatMap((p) => (p.antecedents[i] !== undefined ? [p.antecedents[i]!] : []));
  for (const id of ids) m.setUrgency(id, 16);
  await until(clock, () => ids.every((id) => m.job(id).state === "INACTIVE"));
}

/** Every dependent ended: completed iff its case is satisfied, else by a dependency exception. */
async function verdicts(m: JobManager, clock: SimulatedClock, placed: Placed[]): Promise<void> {
  await until(clock, () => placed.every((p) => p.dependent === undefined || m.job(p.dependent).state === "INACTIVE"));
  const wrong: string[] = [];
  for (const p of placed) {
    const want = satisfied(p.c) ? "COMPLETED" : "dependency";
    let got: string;
    if (p.dependent === undefined) got = `rejected: ${p.rejection}`;
    else {
      const j = m.job(p.dependent);
      const exc = m.eventlog(p.dependent).find((e) => e.name === "exception" && e.context?.type === "dependency");
      got = j.state !== "INACTIVE" ? `${j.state} [${(j.dependencies ?? []).join(" ")}]` : exc ? (satisfied(p.c) ? `dependency: ${String(exc.context?.note)}` : "dependency") : String(j.result);
    }
    if (got !== want && !(want === "dependency" && got.startsWith("rejected: "))) wrong.push(`${label(p.c)}: ${got}`);
  }
  expect(wrong).toEqual([]);
}

async function fresh(): Promise<{ m: JobManager; clock: SimulatedClock }> {
  dir = mkdtempSync(join(tmpdir(), "jobtap-depmulti-"));
  const clock = new SimulatedClock();
  return { m: await start(clock), clock };
}

describe(".dependency-after with several dependencies", () => {
  it("antecedents that end together", async () => {
    const { m, clock } = await fresh();
    const placed = await antecedents(m, clock, cases());
    await dependents(m, clock, placed);
    expect(placed.every((p) => p.dependent !== undefined && m.job(p.dependent).state === "DEPEND")).toBe(true);
    const all = placed.flatMap((p) => p.antecedents);
    for (const id of all) m.setUrgency(id, 16);
    await verdicts(m, clock, placed);
  }, 120_000);

  it("antecedents that end one by one", async () => {
    const { m, clock } = await fresh();
    const placed = await antecedents(m, clock, cases());
    await dependents(m, clock, placed);
    for (let i = 0; i < 3; i++) await finish(m, clock, placed, i);
    await verdicts(m, clock, placed);
  }, 120_000);

  it("antecedents that ended before the dependent was submitted (unsatisfiable: refused)", async () => {
    const { m, clock } = await fresh();
    const placed = await antecedents(m, clock, cases());
    for (let i = 0; i < 3; i++) await finish(m, clock, placed, i);
    await dependents(m, clock, placed);
    for (const p of placed) expect(p.dependent !== undefined, label(p.c)).toBe(satisfied(p.c));
    await verdicts(m, clock, placed);
  }, 120_000);

  it("the first antecedent ends before the dependent is submitted, the others after", async () => {
    const { m, clock } = await fresh();
    const placed = await antecedents(m, clock, cases());
    await finish(m, clock, placed, 0);
    await dependents(m, clock, placed);
    await finish(m, clock, placed, 1);
    await finish(m, clock, placed, 2);
    await verdicts(m, clock, placed);
  }, 120_000);

  it("across a restart: one antecedent ends before it, the others after", async () => {
    const { m, clock } = await fresh();
    const placed = await antecedents(m, clock, cases());
    await dependents(m, clock, placed);
    await finish(m, clock, placed, 0);
    await m.close();
    const second = await start(clock);
    for (const p of placed) {
      const j = second.job(p.dependent!);
      if (j.state !== "INACTIVE") expect(j.state, label(p.c)).toBe("DEPEND");
    }
    await finish(second, clock, placed, 1);
    await finish(second, clock, placed, 2);
    await verdicts(second, clock, placed);
  }, 120_000);
});

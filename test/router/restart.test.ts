import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import { type JobtapHost } from "../../src/plugins/index.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { testJobspec, type TestJob } from "../../src/testhost.js";

let dir: string;
const open: JobManager[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "jobtap-router-restart-"));
});
afterEach(async () => {
  for (const m of open.splice(0)) await m.close();
  rmSync(dir, { recursive: true, force: true });
});

const ROUTER = {
  load: "condor-router",
  conf: { routes: { R: { transform: "REQUIREMENTS WantJobRouter\nMaxIdleJobs = -1\n" } } },
};

/** A manager on a SQLite store in `dir` with the router loaded (or not), on `clock`. */
async function start(clock: SimulatedClock, withRouter = true): Promise<{ m: JobManager; host: JobtapHost }> {
  const config = withRouter ? { "job-manager": { plugins: [ROUTER] } } : {};
  let host: JobtapHost | undefined;
  const factory = jobtapPlugins({ config, pluginPath: [], log: () => undefined, clock });
  const m = await createJobManager({
    statedir: dir, clock, config, resources: { cores: 1 }, log: () => undefined,
    plugins: async (port) => (host = await factory(port)),
  });
  open.push(m);
  return { m, host: host! };
}

async function stop(m: JobManager): Promise<void> {
  open.splice(open.indexOf(m), 1);
  await m.close();
}

async function submit(m: JobManager, clock: SimulatedClock, job: TestJob): Promise<JobId> {
  const p = m.submit(testJobspec(job));
  let done = false;
  p.then(() => (done = true), () => (done = true));
  while (!done) await clock.advance(10);
  return p;
}

async function until(clock: SimulatedClock, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200_000 && !cond(); i++) await clock.advance(10);
  expect(cond()).toBe(true);
}

const attr = (m: JobManager, id: JobId, name: string) => (m.jobAd(id).has(name) ? m.jobAd(id).evaluate(name) : undefined);
const copiesOf = (m: JobManager, orig: JobId) =>
  m.jobs().filter((j) => attr(m, j.id, "RoutedFromJobId") === formatJobId(orig));

describe("condor-router across a restart", () => {
  it("a copy waiting at the restart is found again: it runs once, and the original mirrors it", async () => {
    const clock = new SimulatedClock();
    const first = await start(clock);
    await submit(first.m, clock, { runDuration: 50 });
    const orig = await submit(first.m, clock, { runDuration: 5, classad: { WantJobRouter: "true" } });
    await clock.advance(10_500);
    expect(copiesOf(first.m, orig)).toHaveLength(1);
    await stop(first.m);
    const second = await start(clock);
    await until(clock, () => second.m.job(orig).state === "INACTIVE");
    const copies = copiesOf(second.m, orig);
    expect(copies).toHaveLength(1); // nothing routed twice
    expect(second.m.job(copies[0]!.id).result).toBe("COMPLETED");
    expect(second.m.job(orig).result).toBe("COMPLETED");
    const names = second.m.eventlog(orig).map((e) => e.name);
    expect(names.filter((n) => n === "start")).toHaveLength(1);
  });

  it("a copy running at the restart is reattached: the running original finishes with it", async () => {
    const clock = new SimulatedClock();
    const first = await start(clock);
    await submit(first.m, clock, { runDuration: 15 });
    const orig = await submit(first.m, clock, { runDuration: 30, classad: { WantJobRouter: "true" } });
    await clock.advance(10_500);
    const [copy] = copiesOf(first.m, orig);
    await until(clock, () => first.m.job(orig).state === "RUN");
    await stop(first.m);
    const second = await start(clock);
    await until(clock, () => second.m.job(orig).state === "INACTIVE");
    expect(second.m.job(copy!.id).result).toBe("COMPLETED");
    expect(second.m.job(orig).result).toBe("COMPLETED");
    expect(copiesOf(second.m, orig)).toHaveLength(1);
  });

  it("orphans (no routing records): a copy whose original is gone is removed, one whose original waits is adopted, a claimed original without a copy is let go", async () => {
    const clock = new SimulatedClock();
    const first = await start(clock);
    await submit(first.m, clock, { runDuration: 100 });
    const a = await submit(first.m, clock, { runDuration: 5, classad: { WantJobRouter: "true" } });
    const b = await submit(first.m, clock, { runDuration: 5, classad: { WantJobRouter: "true" } });
    const c = await submit(first.m, clock, { runDuration: 5, classad: { WantJobRouter: "true" } });
    await clock.advance(10_500);
    const [copyA] = copiesOf(first.m, a);
    const [copyB] = copiesOf(first.m, b);
    const [copyC] = copiesOf(first.m, c);
    await stop(first.m);
    // Without the router, and with its records gone: a's original is cancelled (its copy
    // is an orphan), b's copy is cancelled (b stays claimed with no copy), c is untouched.
    const bare = await start(clock, false);
    const state = bare.m.port.pluginState!;
    for (const key of state.keys("condor-router")) state.delete("condor-router", key);
    bare.m.cancel(a);
    bare.m.cancel(copyB!.id);
    await clock.advance(100);
    expect(attr(bare.m, b, "Managed")).toBe("External");
    await stop(bare.m);
    const second = await start(clock);
    await clock.advance(100);
    expect(second.m.job(copyA!.id).state).toBe("INACTIVE");
    expect(second.m.eventlog(copyA!.id).find((e) => e.name === "exception")?.context?.note).toBe("JobRouter aborted job: orphaned routed copy");
    // b was let go (Managed = "Schedd"), and, idle again, routed again at once.
    const updates = second.m.eventlog(b).filter((e) => e.name === "jobspec-update").map((e) => e.context?.["attributes.user.classad.Managed"]);
    expect(updates.filter((u) => u !== undefined)).toEqual(['"External"', '"Schedd"', '"External"']);
    await until(clock, () => [b, c].every((id) => second.m.job(id).state === "INACTIVE"));
    expect(second.m.job(b).result).toBe("COMPLETED");
    expect(second.m.job(c).result).toBe("COMPLETED");
    expect(second.m.job(copyC!.id).result).toBe("COMPLETED");
    expect(copiesOf(second.m, c)).toHaveLength(1);
    expect(second.m.eventlog(c).map((e) => e.name)).toContain("alloc");
  });

  it("a restart between the claim and the copy's record: the copy found is adopted, a claim with no copy is let go; nothing routed twice", async () => {
    const clock = new SimulatedClock();
    const first = await start(clock);
    await submit(first.m, clock, { runDuration: 60 });
    const a = await submit(first.m, clock, { runDuration: 5, classad: { WantJobRouter: "true" } });
    const b = await submit(first.m, clock, { runDuration: 5, classad: { WantJobRouter: "true" } });
    await clock.advance(10_500);
    const [copyA] = copiesOf(first.m, a);
    const [copyB] = copiesOf(first.m, b);
    await stop(first.m);
    // As if the daemon died after each claim was recorded but before the copy's id was:
    // a's copy exists; b's copy never reached the store (cancelled here, so it is gone).
    const bare = await start(clock, false);
    const state = bare.m.port.pluginState!;
    for (const key of state.keys("condor-router")) state.set("condor-router", key, { route: "R" });
    bare.m.cancel(copyB!.id);
    await clock.advance(100);
    await stop(bare.m);
    const second = await start(clock);
    await until(clock, () => [a, b].every((id) => second.m.job(id).state === "INACTIVE"));
    expect(copiesOf(second.m, a).map((j) => j.id)).toEqual([copyA!.id]); // adopted, not routed again
    expect(second.m.job(a).result).toBe("COMPLETED");
    expect(second.m.job(b).result).toBe("COMPLETED");
    expect(second.m.eventlog(a).filter((e) => e.name === "start")).toHaveLength(1);
  });
});

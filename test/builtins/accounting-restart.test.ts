import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import { type JobtapHost } from "../../src/plugins/index.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { testJobspec, type TestJob } from "../../src/testhost.js";
import { acctConfig } from "./accounting-helpers.js";

let dir: string;
const open: JobManager[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "jobtap-accounting-restart-"));
});
afterEach(async () => {
  for (const m of open.splice(0)) await m.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A manager on a SQLite store in `dir` with the accounting plugin, on a simulated clock. */
async function start(clock: SimulatedClock): Promise<{ m: JobManager; host: JobtapHost }> {
  let host: JobtapHost | undefined;
  const config = acctConfig({ "decay-half-life": "1d" });
  const factory = jobtapPlugins({ config, pluginPath: [], log: () => undefined, clock });
  const m = await createJobManager({
    statedir: dir,
    clock,
    config,
    resources: { cores: 4 },
    log: () => undefined,
    plugins: async (port) => (host = await factory(port)),
  });
  open.push(m);
  return { m, host: host! };
}

async function submit(m: JobManager, clock: SimulatedClock, job: TestJob): Promise<JobId> {
  const p = m.submit(testJobspec(job), { userid: job.userid ?? 0 });
  let done = false;
  p.then(() => (done = true), () => (done = true));
  while (!done) await clock.advance(10);
  return p;
}

async function until(clock: SimulatedClock, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 100_000 && !cond(); i++) await clock.advance(10);
  expect(cond()).toBe(true);
}

const owner = (m: JobManager) => ({ userid: m.owner, owner: true });

describe("accounting across a restart", () => {
  it("keeps associations, decayed usage and limits; a held job stays held, then is released", async () => {
    const clock = new SimulatedClock();
    const first = await start(clock);
    const call = (h: JobtapHost, m: JobManager, method: string, payload: unknown) => h.callService("accounting", method, payload, owner(m));
    await call(first.host, first.m, "add-bank", { name: "root" });
    await call(first.host, first.m, "add-user", { uid: 1001, bank: "root", limits: { "max-running-jobs": 1 } });
    const ran = await submit(first.m, clock, { userid: 1001, runDuration: 500 });
    await clock.advance(500_000);
    await until(clock, () => first.m.job(ran).state === "INACTIVE");
    const a = await submit(first.m, clock, { userid: 1001, runDuration: 100 });
    const b = await submit(first.m, clock, { userid: 1001, runDuration: 100 });
    await clock.advance(1000);
    expect([first.m.job(a).state, first.m.job(b).state]).toEqual(["RUN", "DEPEND"]);
    const before = (await call(first.host, first.m, "usage", { uid: 1001 })) as { associations: Array<{ coreSeconds: number }> };
    expect(before.associations[0]!.coreSeconds).toBeGreaterThan(499);
    const shown = await call(first.host, first.m, "show", {});
    await first.m.close();
    open.splice(0);

    const second = await start(clock);
    expect(await call(second.host, second.m, "show", {})).toEqual(shown);
    expect(second.m.job(b).state).toBe("DEPEND");
    await until(clock, () => second.m.job(a).state === "INACTIVE");
    expect(second.m.job(b).state).not.toBe("DEPEND");
    const mid = (await call(second.host, second.m, "usage", { uid: 1001 })) as { associations: Array<{ coreSeconds: number; running: number }> };
    expect(mid.associations[0]!.running).toBe(1);
    // `a` ran 100 s, charged from its start before the restart
    expect(mid.associations[0]!.coreSeconds).toBeCloseTo(before.associations[0]!.coreSeconds + 100, 0);
    await until(clock, () => second.m.job(b).state === "INACTIVE");
    const done = (await call(second.host, second.m, "usage", { uid: 1001 })) as { associations: Array<{ coreSeconds: number }> };
    await clock.advance(86400_000); // one half-life
    const later = (await call(second.host, second.m, "usage", { uid: 1001 })) as { associations: Array<{ coreSeconds: number }> };
    expect(later.associations[0]!.coreSeconds).toBeCloseTo(done.associations[0]!.coreSeconds / 2, 6);
  });
});

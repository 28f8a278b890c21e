/**
 * Issue 35 bench (b), part of `npm run bench -- policy` (`--only periodic` runs it alone):
 * one periodic policy pass over N (default 100,000) active jobs, all pending (scheduling
 * paused), each with the router manual's `PeriodicRemove` and a `PeriodicHold`, both false,
 * with the site's `SYSTEM_PERIODIC_HOLD` and `SYSTEM_PERIODIC_REMOVE` set too: every job is
 * evaluated in full and none acts. Simulated clock, memory store; the figure is the wall
 * time of the pass (what one PERIODIC_EXPR_INTERVAL costs the manager's thread).
 * The first pass builds every job's ad (the manager keeps an active job's ad until its next
 * event); `periodic_ms_steady` is the fastest of the next five passes, every later interval's
 * cost while the jobs do not change.
 */
import { SimulatedClock } from "../src/manager/base/clock.js";
import { createJobManager } from "../src/manager/manager.js";
import { periodicSettings } from "../src/manager/policy/system-periodic.js";
import { testJobspec } from "./lib/common.js";

/** (b): ms of one periodic pass over `n` active jobs with policy expressions. */
export async function periodicCost(n: number): Promise<{ periodic_jobs: number; periodic_ms: number; periodic_ms_steady: number; periodic_acted: number }> {
  const clock = new SimulatedClock();
  const { system } = periodicSettings({
    "system-periodic-hold": "NumJobStarts > 10 && JobStatus == 1",
    "system-periodic-remove": "JobStatus == 5 && time() - EnteredCurrentStatus > 7 * 24 * 3600",
  });
  const mgr = await createJobManager({ clock, store: "memory", resources: { cores: 4, gpus: 0, memory: 2 ** 32 }, systemPeriodic: system, periodicExprIntervalMs: 0, log: () => undefined });
  mgr.pauseScheduling();
  const specs = Array.from({ length: 16 }, (_, k) => {
    const js = testJobspec();
    js.attributes.user = {
      classad: {
        PeriodicRemove: "JobStatus == 5 || (JobStatus == 1 && time() - QDate > 3600 * 24)",
        PeriodicHold: `NumJobStarts > ${k + 5}`,
      },
    };
    return js;
  });
  const CHUNK = 5000;
  for (let i = 0; i < n; i += CHUNK) {
    const p = mgr.submitMany(Array.from({ length: Math.min(CHUNK, n - i) }, (_, k) => ({ jobspec: specs[(i + k) % specs.length]! })));
    await clock.advance(20);
    await p;
  }
  await clock.advance(100);
  const t0 = performance.now();
  const acted = mgr.periodic.pass();
  const first = performance.now() - t0;
  let steady = Infinity;
  for (let i = 0; i < 5; i++) {
    const t1 = performance.now();
    mgr.periodic.pass();
    steady = Math.min(steady, performance.now() - t1);
  }
  await mgr.close();
  return { periodic_jobs: n, periodic_ms: round1(first), periodic_ms_steady: round1(steady), periodic_acted: acted };
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

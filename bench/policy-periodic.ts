/**
 * Issue 35 bench (b), part of `npm run bench -- policy` (`--only periodic` runs it alone):
 * one periodic policy pass over N (default 100,000) active jobs, all pending (scheduling
 * paused), each with the router manual's `PeriodicRemove` and a `PeriodicHold`, both false,
 * with the site's `SYSTEM_PERIODIC_HOLD` and `SYSTEM_PERIODIC_REMOVE` set too: every job is
 * evaluated in full and none acts. Simulated clock, memory store; the figure is the wall
 * time of the pass (what one PERIODIC_EXPR_INTERVAL costs the manager's thread), and
 * `_cpu_ms` the process's CPU time meanwhile (steadier on a loaded machine).
 *
 * `periodic_ms` is the first pass, which builds every job's policy-only ad
 * (ads/policy-ad.ts); `periodic_ms_steady` the fastest of the next five, every later
 * interval's cost while the jobs do not change. The jobs come from 16 jobspecs submitted
 * within one second, so jobs share policy-only ads and a pass decides each shared ad once;
 * the `_distinct` figures are the worst case: every job's PeriodicHold differs
 * (`NumJobStarts > k` for job k), so every job is evaluated on its own.
 */
import { SimulatedClock } from "../src/manager/base/clock.js";
import { createJobManager } from "../src/manager/manager.js";
import type { Jobspec } from "../src/manager/port/records.js";
import { periodicSettings } from "../src/manager/policy/system-periodic.js";
import { testJobspec } from "./lib/common.js";

interface PassFigures {
  ms: number;
  cpu_ms: number;
  ms_steady: number;
  cpu_ms_steady: number;
  acted: number;
}

/** (b): one periodic pass over `n` active jobs with policy expressions, shared and distinct. */
export async function periodicCost(n: number): Promise<Record<string, number>> {
  const shared = await passes(n, (k) => spec(k % 16));
  const distinct = await passes(n, (k) => spec(k));
  return {
    periodic_jobs: n,
    periodic_ms: shared.ms,
    periodic_cpu_ms: shared.cpu_ms,
    periodic_ms_steady: shared.ms_steady,
    periodic_cpu_ms_steady: shared.cpu_ms_steady,
    periodic_acted: shared.acted + distinct.acted,
    periodic_ms_distinct: distinct.ms,
    periodic_cpu_ms_distinct: distinct.cpu_ms,
    periodic_ms_steady_distinct: distinct.ms_steady,
    periodic_cpu_ms_steady_distinct: distinct.cpu_ms_steady,
  };
}

const specs = new Map<number, Jobspec>();

function spec(k: number): Jobspec {
  let js = specs.get(k);
  if (js === undefined) {
    js = testJobspec();
    js.attributes.user = {
      classad: {
        PeriodicRemove: "JobStatus == 5 || (JobStatus == 1 && time() - QDate > 3600 * 24)",
        PeriodicHold: `NumJobStarts > ${k + 5}`,
      },
    };
    if (k < 16) specs.set(k, js);
  }
  return js;
}

async function passes(n: number, specOf: (k: number) => Jobspec): Promise<PassFigures> {
  const clock = new SimulatedClock();
  const { system } = periodicSettings({
    "system-periodic-hold": "NumJobStarts > 10 && JobStatus == 1",
    "system-periodic-remove": "JobStatus == 5 && time() - EnteredCurrentStatus > 7 * 24 * 3600",
  });
  const mgr = await createJobManager({ clock, store: "memory", resources: { cores: 4, gpus: 0, memory: 2 ** 32 }, systemPeriodic: system, periodicExprIntervalMs: 0, log: () => undefined });
  mgr.pauseScheduling();
  const CHUNK = 5000;
  for (let i = 0; i < n; i += CHUNK) {
    const p = mgr.submitMany(Array.from({ length: Math.min(CHUNK, n - i) }, (_, k) => ({ jobspec: specOf(i + k) })));
    await clock.advance(20);
    await p;
  }
  await clock.advance(100);
  const first = timed(() => mgr.periodic.pass());
  let steady = { ms: Infinity, cpu: Infinity, acted: 0 };
  for (let i = 0; i < 5; i++) {
    const t = timed(() => mgr.periodic.pass());
    if (t.ms < steady.ms) steady = t;
  }
  await mgr.close();
  return { ms: round1(first.ms), cpu_ms: round1(first.cpu), ms_steady: round1(steady.ms), cpu_ms_steady: round1(steady.cpu), acted: first.acted };
}

function timed(pass: () => number): { ms: number; cpu: number; acted: number } {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const acted = pass();
  const c = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpu: (c.user + c.system) / 1000, acted };
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

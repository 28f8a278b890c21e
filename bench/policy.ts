/**
 * `npm run bench -- policy [--jobs N] [--slots N] [--rounds N]`
 *
 * ClassAd policy costs (issue 35):
 * - (a) `pass_ms`: one scheduling pass over N (default 100,000) pending jobs that carry
 *   Requirements, against 64 one-core slots with a START: half the jobs want a slot that
 *   exists (64 are placed), half want one that does not (passed over, LastRejMatchTime set).
 *   The queue depth is N, so the pass looks at every job. Simulated clock, memory store; the
 *   figure is the wall time of the pass, its 64 allocations included (`pass_cpu_ms`: the
 *   process's CPU time meanwhile, steadier on a loaded machine). `pass_ms_second` is a
 *   second pass (after one job ends): the jobs' match groups are then already known.
 *   `pass_ms_unfilled*`: the same with only half the slots wanted, so the pool never fills.
 * - (c) `trivial_policy_ratio`: end-to-end throughput with `[policy] start = "true"` over
 *   the rate without policy, the median of alternating rounds' ratios, and the same of CPU
 *   time per job (policy-trivial.ts); `--only trivial` runs (c) alone.
 * - (b) `periodic_ms`: one periodic policy pass over N active jobs (policy-periodic.ts);
 *   `--only periodic` runs (b) alone; `--only pass` runs (a) alone.
 * The last stdout line is one JSON object.
 */
import { SimulatedClock } from "../src/manager/base/clock.js";
import type { JobId } from "../src/manager/base/ids.js";
import { createJobManager, type JobManager } from "../src/manager/manager.js";
import { slotPolicies } from "../src/manager/policy/slot-policy.js";
import { carveSlots } from "../src/manager/scheduler/slots.js";
import { arg, testJobspec } from "./lib/common.js";
import { periodicCost } from "./policy-periodic.js";
import { trivialPolicyCost } from "./policy-trivial.js";

const GiB = 2 ** 30;

/**
 * (a): one pass over `n` pending jobs with Requirements against `slots` slots. Job k of each
 * 2 × `slots` wants slot `wanted(k)` (one beyond `slots` exists nowhere).
 */
async function passCost(n: number, slots: number, wanted: (k: number) => number): Promise<{ pass_ms: number; pass_cpu_ms: number; pass_ms_second: number; placed: number }> {
  const clock = new SimulatedClock();
  const pool = { cores: slots, gpus: 0, memory: slots * GiB };
  const layout = [{ count: slots, cores: 1 }];
  const slotPolicy = slotPolicies(carveSlots(pool, layout), { start: 'TARGET.Owner =!= "nobody-in-particular"' });
  const mgr = await createJobManager({ clock, store: "memory", resources: pool, slots: layout, slotPolicy, queueDepth: n, log: () => undefined });
  mgr.pauseScheduling();
  const specs = Array.from({ length: 2 * slots }, (_, k) => {
    const js = testJobspec();
    js.attributes.system!.exec = { test: { run_duration: "1h" } };
    js.attributes.user = { classad: { Requirements: "TARGET.SlotID == MY.Wanted", Wanted: String(wanted(k)) } };
    return js;
  });
  const CHUNK = 5000;
  for (let i = 0; i < n; i += CHUNK) {
    const jobs = Array.from({ length: Math.min(CHUNK, n - i) }, (_, k) => ({ jobspec: specs[(i + k) % specs.length]! }));
    const p = mgr.submitMany(jobs);
    await clock.advance(20);
    await p;
  }
  await clock.advance(100);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  mgr.resumeScheduling();
  await clock.advance(0);
  const pass = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  const placed = count(mgr, "RUN");
  // A second pass: cancel one running job so a slot frees and the queue is walked again.
  const running = mgr.jobs({ states: ["RUN"] })[0]!.id as JobId;
  const t1 = performance.now();
  mgr.cancel(running);
  await clock.advance(50);
  const second = performance.now() - t1;
  await mgr.close();
  return { pass_ms: round1(pass), pass_cpu_ms: round1((cpu.user + cpu.system) / 1000), pass_ms_second: round1(second), placed };
}

function count(mgr: JobManager, state: "RUN"): number {
  return mgr.jobs({ states: [state] }).length;
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/** The bench entry point. */
export async function main(args: string[]): Promise<void> {
  const n = Number(arg(args, "jobs", "100000"));
  const slots = Number(arg(args, "slots", "64"));
  const rounds = Number(arg(args, "rounds", "6"));
  if (arg(args, "only", "") === "pass") return console.log(JSON.stringify(await passCost(n, slots, (k) => k + 1)));
  if (arg(args, "only", "") === "trivial") return console.log(JSON.stringify(await trivialPolicyCost(rounds)));
  const b = await periodicCost(n);
  process.stderr.write(`policy: periodic ${JSON.stringify(b)}\n`);
  if (arg(args, "only", "") === "periodic") return console.log(JSON.stringify(b));
  const a = await passCost(n, slots, (k) => k + 1);
  process.stderr.write(`policy: pass ${JSON.stringify(a)}\n`);
  // The same with only half the slots wanted: the pool never fills, so the pass walks all n.
  const half = await passCost(n, slots, (k) => (k < slots / 2 ? k + 1 : slots + k));
  process.stderr.write(`policy: pass, pool not filled ${JSON.stringify(half)}\n`);
  const c = await trivialPolicyCost(rounds);
  const result = {
    jobs: n,
    slots,
    ...a,
    ...b,
    pass_ms_unfilled: half.pass_ms,
    pass_cpu_ms_unfilled: half.pass_cpu_ms,
    pass_ms_unfilled_second: half.pass_ms_second,
    ...c,
  };
  console.log(JSON.stringify(result));
}

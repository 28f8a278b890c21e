/**
 * Issue 35 bench (c), part of `npm run bench -- policy` (`--only trivial` runs it alone):
 * end-to-end throughput (test executor, run 0 s, memory store, real clock) of 10,000
 * trivial jobs with `[policy] start = "true"` against the same without policy.
 *
 * On a loaded machine wall-clock rates are noise, so each round runs both kinds back to
 * back, each first every other round (the later one runs warmer), and the figures are
 * - `trivial_policy_ratio`: the median over rounds of each round's rate ratio (policy / none);
 * - `trivial_policy_cpu_ratio`: the same with CPU time per job (none / policy: above 1 is
 *   the policy costing less), which other processes disturb much less;
 * - `trivial_policy_ratio_best`: the fastest round of each, as before.
 */
import { createJobManager } from "../src/manager/manager.js";
import { slotPolicies } from "../src/manager/policy/slot-policy.js";
import { carveSlots } from "../src/manager/scheduler/slots.js";
import { testJobspec } from "./lib/common.js";

const GiB = 2 ** 30;

interface Round {
  perSecond: number;
  cpuUsPerJob: number;
}

/** End-to-end jobs/s and CPU µs per job of `n` trivial jobs, with or without a trivial slot policy. */
async function rate(n: number, policy: boolean): Promise<Round> {
  const pool = { cores: 4, gpus: 0, memory: 4 * GiB };
  const slotPolicy = policy ? slotPolicies(carveSlots(pool, undefined), { start: "true" }) : undefined;
  const mgr = await createJobManager({ store: "memory", resources: pool, ...(slotPolicy ? { slotPolicy } : {}), log: () => undefined });
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const ids = await Promise.all(Array.from({ length: n }, () => mgr.submit(testJobspec())));
  await Promise.all(ids.map((id) => mgr.wait(id)));
  const c = process.cpuUsage(c0);
  const s = (performance.now() - t0) / 1000;
  await mgr.close();
  return { perSecond: Math.round(n / s), cpuUsPerJob: Math.round(((c.user + c.system) / n) * 10) / 10 };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** (c): `rounds` alternating pairs of runs of `n` jobs each. */
export async function trivialPolicyCost(rounds: number, n = 10_000): Promise<Record<string, number | string>> {
  const without: Round[] = [];
  const withPolicy: Round[] = [];
  // One warm-up pair, not counted: the first runs of a process pay for compilation.
  await rate(n, false);
  await rate(n, true);
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) without.push(await rate(n, false));
    withPolicy.push(await rate(n, true));
    if (i % 2 === 1) without.push(await rate(n, false));
  }
  const ratios = withPolicy.map((w, i) => w.perSecond / without[i]!.perSecond);
  const cpuRatios = withPolicy.map((w, i) => without[i]!.cpuUsPerJob / w.cpuUsPerJob);
  const best = (xs: Round[]) => Math.max(...xs.map((r) => r.perSecond));
  return {
    no_policy_per_s: median(without.map((r) => r.perSecond)),
    trivial_policy_per_s: median(withPolicy.map((r) => r.perSecond)),
    no_policy_cpu_us_per_job: median(without.map((r) => r.cpuUsPerJob)),
    trivial_policy_cpu_us_per_job: median(withPolicy.map((r) => r.cpuUsPerJob)),
    trivial_policy_ratio: round3(median(ratios)),
    trivial_policy_cpu_ratio: round3(median(cpuRatios)),
    trivial_policy_ratio_best: round3(best(withPolicy) / best(without)),
    rounds: `${without.map((r) => r.perSecond).join(" ")} | ${withPolicy.map((r) => r.perSecond).join(" ")}`,
    cpu_rounds: `${without.map((r) => r.cpuUsPerJob).join(" ")} | ${withPolicy.map((r) => r.cpuUsPerJob).join(" ")}`,
  };
}

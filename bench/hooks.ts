/**
 * `npm run bench -- hooks [--hooks N] [--concurrency C] [--stdin BYTES] [--rounds R]`
 *
 * Issue 12: N trivial hooks (default 2,000 runs of /bin/true with 1 KB of stdin) through the
 * HookRunner with C in flight (default 16), against the physical limit measured in the same
 * run: bare `child_process.spawn` of /bin/true at the same concurrency. Both are closed
 * loops of C workers; rounds alternate (spawn, hooks, spawn, hooks, ...) so a busy machine
 * hurts both alike, and each figure is the median over R rounds (default 3).
 *
 * Last stdout line: {"hooks", "concurrency", "hooks_per_s", "p99_ms", "spawn_limit_per_s",
 * "ratio", "hook_cpu_us", "spawn_cpu_us", "job_ads_per_s"}. hook_cpu_us and spawn_cpu_us are
 * this process's CPU time per hook and per bare spawn (median of the rounds): what the
 * runner itself costs, steadier than rates when other processes share the machine.
 * job_ads_per_s: building 100,000 job ads after an event each (`--job-ads N`; see
 * bench/lib/jobads.ts and `npm run bench -- jobads`). p99_ms is the 99th percentile of one
 * hook's time from run() to its result (path check, spawn, stdin, exit, output) at that
 * concurrency, in the median round.
 */
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import { HookRunner, hookSucceeded } from "../src/hooks/index.js";
import { arg } from "./lib/common.js";
import { measureJobAds } from "./lib/jobads.js";

const TRUE = "/bin/true";

interface Round {
  perS: number;
  p99Ms: number;
  /** CPU time of this (parent) process per call, µs: steadier than rates on a shared machine. */
  cpuUs: number;
}

/** Runs `n` calls of `once` with `c` workers in a closed loop; returns rate and p99 latency. */
async function closedLoop(n: number, c: number, once: () => Promise<void>): Promise<Round> {
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const worker = async (): Promise<void> => {
    while (next < n) {
      next++;
      const s = performance.now();
      await once();
      lat.push(performance.now() - s);
    }
  };
  await Promise.all(Array.from({ length: c }, worker));
  const secs = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  lat.sort((a, b) => a - b);
  return { perS: n / secs, p99Ms: lat[Math.min(lat.length - 1, Math.floor(lat.length * 0.99))]!, cpuUs: (cpu.user + cpu.system) / n };
}

/** One bare spawn of /bin/true, waited to its close (exit and pipes). */
function bareSpawn(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(TRUE, []);
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`${TRUE} exited ${code}`))));
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Bench entry point. */
export async function main(args: string[]): Promise<void> {
  const n = Number(arg(args, "hooks", "2000"));
  const c = Number(arg(args, "concurrency", "16"));
  const stdin = Buffer.alloc(Number(arg(args, "stdin", "1024")), "A = 1\n");
  const rounds = Number(arg(args, "rounds", "3"));
  const runner = new HookRunner({ maxInFlight: c });
  const hook = async (): Promise<void> => {
    const r = await runner.run({ path: TRUE, stdin });
    if (!hookSucceeded(r)) throw new Error(`hook run failed: ${JSON.stringify(r)}`);
  };

  await closedLoop(Math.min(200, n), c, bareSpawn); // warm-up: JIT, page cache
  await closedLoop(Math.min(200, n), c, hook);
  const spawns: Round[] = [];
  const hooks: Round[] = [];
  for (let i = 0; i < rounds; i++) {
    spawns.push(await closedLoop(n, c, bareSpawn));
    console.error(`round ${i + 1}: bare spawn ${spawns[i]!.perS.toFixed(0)}/s, ${spawns[i]!.cpuUs.toFixed(0)} µs CPU each`);
    hooks.push(await closedLoop(n, c, hook));
    console.error(`round ${i + 1}: hooks ${hooks[i]!.perS.toFixed(0)}/s, p99 ${hooks[i]!.p99Ms.toFixed(1)} ms, ${hooks[i]!.cpuUs.toFixed(0)} µs CPU each`);
  }
  const spawnLimit = median(spawns.map((r) => r.perS));
  const hooksPerS = median(hooks.map((r) => r.perS));
  const mid = hooks.find((r) => r.perS === hooksPerS)!;

  // --- job_ads_per_s: building 100,000 job ads (issue 12; bench/lib/jobads.ts) ---
  const jobAds = measureJobAds(Number(arg(args, "job-ads", "100000")), 3, (line) => console.error(line));

  console.log(
    JSON.stringify({
      hooks: n,
      concurrency: c,
      hooks_per_s: Math.round(hooksPerS),
      p99_ms: Number(mid.p99Ms.toFixed(2)),
      spawn_limit_per_s: Math.round(spawnLimit),
      ratio: Number((hooksPerS / spawnLimit).toFixed(3)),
      hook_cpu_us: Math.round(median(hooks.map((r) => r.cpuUs))),
      spawn_cpu_us: Math.round(median(spawns.map((r) => r.cpuUs))),
      job_ads_per_s: jobAds.job_ads_per_s,
    }),
  );
}

/**
 * bench why's "no effect on `throughput --builtins` when nobody asks" (issue 36), as an A/B
 * in one process: two managers with the default builtins on SQLite stores, one as shipped
 * (`on`) and one with the why machinery's always-on part switched off by the bench-only
 * `withoutExplain` (`off`: no `job.explain` handler is registered). Everything else `job why`
 * uses is computed only when asked, so nothing else differs.
 *
 * Rounds of N jobs (submitted at once, run to INACTIVE by the test executor, as bench
 * throughput does) alternate between the two, the order swapped every pair so neither
 * always runs second (after the other's garbage). Per pair: on's end-to-end rate over off's.
 * Reported: the median ratio, each side's median jobs/s and CPU time per job (the whole
 * process: user + system, which other load disturbs much less than wall time), and the load.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import type { JobId } from "../../src/manager/base/ids.js";
import type { JobtapHost } from "../../src/plugins/index.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { testJobspec as jobspec } from "./common.js";

interface Side {
  mgr: JobManager;
  host: JobtapHost;
  dir: string;
  rates: number[];
  cpu: number[];
}

async function side(withoutExplain: boolean): Promise<Side> {
  const dir = mkdtempSync(join(tmpdir(), "jobtap-bench-why-ab-"));
  let host: JobtapHost | undefined;
  const plugins = jobtapPlugins({ config: {}, withoutExplain });
  const mgr = await createJobManager({
    statedir: dir,
    store: "sqlite",
    sqliteSynchronous: "normal",
    plugins: async (port: Parameters<typeof plugins>[0]) => (host = await plugins(port)),
  });
  // The switch must do what it says, or the A/B compares nothing.
  if (host!.matches("job.explain") === withoutExplain) throw new Error(`bench why: job.explain handlers ${withoutExplain ? "still" : "not"} registered`);
  return { mgr, host: host!, dir, rates: [], cpu: [] };
}

/** One round of n jobs on one side: its end-to-end rate and CPU µs per job. */
async function round(s: Side, n: number): Promise<{ rate: number; cpu: number }> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const ids: Array<Promise<JobId>> = [];
  for (let i = 0; i < n; i++) ids.push(s.mgr.submit(jobspec()));
  const results = await Promise.all((await Promise.all(ids)).map((id) => s.mgr.wait(id)));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (results.some((r) => !r.success)) throw new Error("bench why: a job did not complete");
  return { rate: n / (ms / 1000), cpu: (cpu.user + cpu.system) / n };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** The A/B: `pairs` timed pairs of rounds of `n` jobs after `warmup` untimed pairs. */
export async function nobodyAsks(n: number, pairs: number, warmup = 2): Promise<Record<string, unknown>> {
  const on = await side(false);
  const off = await side(true);
  const load = [loadavg()[0]!];
  const ratios: number[] = [];
  try {
    for (let i = 0; i < warmup + pairs; i++) {
      const order = i % 2 === 0 ? [on, off] : [off, on];
      const got = new Map<Side, { rate: number; cpu: number }>();
      for (const s of order) got.set(s, await round(s, n));
      process.stderr.write(`why a/b ${i < warmup ? "warm-up" : "pair"} ${i}: on ${Math.round(got.get(on)!.rate)}/s ${got.get(on)!.cpu.toFixed(1)} µs, off ${Math.round(got.get(off)!.rate)}/s ${got.get(off)!.cpu.toFixed(1)} µs\n`);
      if (i < warmup) continue;
      for (const s of [on, off]) {
        s.rates.push(got.get(s)!.rate);
        s.cpu.push(got.get(s)!.cpu);
      }
      ratios.push(got.get(on)!.rate / got.get(off)!.rate);
    }
  } finally {
    for (const s of [on, off]) {
      await s.mgr.close();
      rmSync(s.dir, { recursive: true, force: true });
    }
  }
  load.push(loadavg()[0]!);
  const cpuOn = median(on.cpu);
  const cpuOff = median(off.cpu);
  return {
    nobody_asks_ratio: r3(median(ratios)),
    nobody_asks_ratios: ratios.map(r3).join(" "),
    nobody_asks_on_per_s: Math.round(median(on.rates)),
    nobody_asks_off_per_s: Math.round(median(off.rates)),
    nobody_asks_on_cpu_us_per_job: Math.round(cpuOn * 10) / 10,
    nobody_asks_off_cpu_us_per_job: Math.round(cpuOff * 10) / 10,
    nobody_asks_cpu_ratio: r3(cpuOn / cpuOff),
    nobody_asks_jobs: n,
    nobody_asks_pairs: pairs,
    nobody_asks_load: load.map((l) => Math.round(l * 100) / 100).join(" → "),
  };
}

/**
 * bench why's "no effect on `throughput --builtins` when nobody asks" (issue 36), as an A/B
 * in one run: two managers with the default builtins on SQLite stores, each in its own
 * process (why-ab-side.ts: no shared heap or GC; two managers in one process favoured one
 * side or the other by up to 25% in A/A runs), one as shipped (`on`) and one with the why
 * machinery's always-on part switched off by the bench-only `withoutExplain` (`off`: no
 * `job.explain` handler is registered). Everything else `job why` uses is computed only
 * when asked, so nothing else differs.
 *
 * Rounds of N jobs (submitted at once, run to INACTIVE by the test executor, as bench
 * throughput does) alternate between the two, the order swapped every pair so neither
 * always runs second (after the other's garbage). Per pair: on's end-to-end rate over off's.
 * Reported: the median ratio, each side's median jobs/s and CPU time per job (the whole
 * process: user + system, which other load disturbs much less than wall time), and the load.
 */
import { fork, type ChildProcess } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import type { SideRound } from "./why-ab-side.js";

interface Side {
  child: ChildProcess;
  rates: number[];
  cpu: number[];
  main: number[];
}

/** Forks one side (why-ab-side.ts) and waits until its manager is open. */
function side(withoutExplain: boolean): Promise<Side> {
  const file = fileURLToPath(new URL("./why-ab-side.js", import.meta.url));
  const child = fork(file, ["--why-ab-side", ...(withoutExplain ? ["--without-explain"] : [])], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    child.once("message", () => resolve({ child, rates: [], cpu: [], main: [] }));
    child.once("exit", (code) => reject(new Error(`bench why: a side exited with code ${code}`)));
  });
}

/** One round of n jobs on one side. */
function round(s: Side, n: number): Promise<SideRound> {
  return new Promise((resolve) => {
    s.child.once("message", (r: SideRound) => resolve(r));
    s.child.send({ round: n });
  });
}

function close(s: Side): Promise<void> {
  return new Promise((resolve) => {
    s.child.removeAllListeners("exit");
    s.child.once("exit", () => resolve());
    s.child.send({ close: true });
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** The A/B: `pairs` timed pairs of rounds of `n` jobs after `warmup` untimed pairs. */
export async function nobodyAsks(n: number, pairs: number, same = false, warmup = 2): Promise<Record<string, unknown>> {
  // `same`: an A/A check of the bench itself (both sides as shipped): how far apart two
  // identical sides come out on this machine now.
  const on = await side(false);
  const off = await side(!same);
  const load = [loadavg()[0]!];
  const ratios: number[] = [];
  try {
    for (let i = 0; i < warmup + pairs; i++) {
      const order = i % 2 === 0 ? [on, off] : [off, on];
      const got = new Map<Side, SideRound>();
      for (const s of order) got.set(s, await round(s, n));
      process.stderr.write(`why a/b ${i < warmup ? "warm-up" : "pair"} ${i}: on ${Math.round(got.get(on)!.rate)}/s ${got.get(on)!.cpu.toFixed(1)} µs, off ${Math.round(got.get(off)!.rate)}/s ${got.get(off)!.cpu.toFixed(1)} µs\n`);
      if (i < warmup) continue;
      for (const s of [on, off]) {
        s.rates.push(got.get(s)!.rate);
        s.cpu.push(got.get(s)!.cpu);
        s.main.push(got.get(s)!.main);
      }
      ratios.push(got.get(on)!.rate / got.get(off)!.rate);
    }
  } finally {
    await Promise.all([close(on), close(off)]);
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
    nobody_asks_on_main_us_per_job: Math.round(median(on.main) * 10) / 10,
    nobody_asks_off_main_us_per_job: Math.round(median(off.main) * 10) / 10,
    nobody_asks_main_ratio: r3(median(on.main) / median(off.main)),
    nobody_asks_jobs: n,
    nobody_asks_check: same ? "A/A: both sides as shipped" : "A/B",
    nobody_asks_pairs: pairs,
    nobody_asks_load: load.map((l) => Math.round(l * 100) / 100).join(" → "),
  };
}

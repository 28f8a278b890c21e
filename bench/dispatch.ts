/**
 * `npm run bench -- dispatch [--jobs N] [--runs R (default 5)] [--store memory|sqlite]`
 *
 * The cost of plugins on the job path: end-to-end jobs/s (first submit to last `clean`)
 * with the test executor (run_duration 0) when 0, 1, 10 and 50 extra plugins are loaded
 * after `.priority-default`, each registering `job.*` (so every job topic, including
 * job.validate and job.state.*, calls every one of them). Each point is the best of R runs
 * on a fresh manager, rounds interleaved. Last stdout line:
 *   {"plugins":[0,1,10,50],"end_to_end_per_s":[...],"jobs":N,...}
 * Target: 10 plugins cost less than 25% of the 0-plugin figure.
 *
 * `--isolated`: instead, end-to-end jobs/s with one priority plugin file (job.state.priority)
 * loaded in process and the same file loaded isolated (a worker thread, docs/plugins.md),
 * one run each after a warm-up, and the round trip of one isolated call measured alone
 * (sequential plugin.query calls). Last stdout line:
 *   {"isolated":true,"in_process_per_s":...,"isolated_per_s":...,"ratio":...,"isolated_call_us":...}
 * Goal: ratio >= 0.5.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JobId } from "../src/manager/base/ids.js";
import { createJobManager } from "../src/manager/manager.js";
import { arg, testJobspec as jobspec } from "./lib/common.js";
import { JobtapHost } from "../src/plugins/host.js";
import { jobtapPlugins } from "../plugins-builtin/index.js";

const PLUGIN_COUNTS = [0, 1, 10, 50];


/** Jobs per second of wall time, and per second of this process's CPU time. */
interface Rate {
  wall: number;
  cpu: number;
}

/** One run: a fresh manager with `extra` job.* plugins; returns end-to-end rates. */
async function run(n: number, extra: number, store: "memory" | "sqlite"): Promise<Rate> {
  const dir = mkdtempSync(join(tmpdir(), "jobtap-dispatch-"));
  try {
    let host: JobtapHost | undefined;
    const factory = jobtapPlugins({ pluginPath: [] });
    const mgr = await createJobManager({
      ...(store === "sqlite" ? { statedir: dir, store: "sqlite" as const } : { store: "memory" as const }),
      resources: { cores: 1024 },
      plugins: async (m) => (host = await factory(m)),
    });
    for (let i = 0; i < extra; i++) {
      // A plugin that listens to everything and does (almost) nothing: pure dispatch cost.
      await host!.loadDefinition(`bench-${i}`, (p) => {
        let calls = 0;
        p.on("job.*", () => void calls++);
      });
    }
    const rate = await endToEnd(mgr, n);
    await mgr.close();
    return rate;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A priority plugin as a site would write one: a file, so that it can be isolated. */
const PRIORITY_PLUGIN = `export default (p) => {
  p.on("job.state.priority", (job) => ({ priority: 1000 + job.urgency }));
  p.on("plugin.query", () => ({}));
};
`;

/** End-to-end rate with the priority plugin in process or isolated; and, isolated, the
 *  mean round trip of `calls` sequential plugin.query calls (µs). */
async function runPriority(n: number, isolate: boolean, store: "memory" | "sqlite"): Promise<Rate & { callUs?: number }> {
  const dir = mkdtempSync(join(tmpdir(), "jobtap-dispatch-"));
  try {
    const file = join(dir, "priority.mjs");
    writeFileSync(file, PRIORITY_PLUGIN);
    let host: JobtapHost | undefined;
    const factory = jobtapPlugins({ pluginPath: [] });
    const mgr = await createJobManager({
      ...(store === "sqlite" ? { statedir: dir, store: "sqlite" as const } : { store: "memory" as const }),
      resources: { cores: 1024 },
      plugins: async (m) => (host = await factory(m)),
    });
    await host!.load(file, {}, isolate ? { isolate: true } : {});
    const rate = await endToEnd(mgr, n);
    let callUs: number | undefined;
    if (isolate) {
      const calls = 2000;
      const t0 = performance.now();
      for (let i = 0; i < calls; i++) await host!.query("priority.mjs");
      callUs = Math.round((1000 * (performance.now() - t0)) / calls);
    }
    await mgr.close();
    return callUs === undefined ? rate : { ...rate, callUs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Submits `n` jobs at once and waits for the last `clean`: wall and CPU rates. */
async function endToEnd(mgr: Awaited<ReturnType<typeof createJobManager>>, n: number): Promise<Rate> {
  let inactive = 0;
  let allDone: () => void = () => undefined;
  const done = new Promise<void>((r) => (allDone = r));
  mgr.on("event", (j) => {
    if (j.entry.name === "clean" && ++inactive === n) allDone();
  });
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const ids: Array<Promise<JobId>> = [];
  for (let i = 0; i < n; i++) ids.push(mgr.submit(jobspec()));
  await Promise.all(ids);
  await done;
  const wall = n / ((performance.now() - t0) / 1000);
  const cpu = process.cpuUsage(cpu0);
  return { wall, cpu: n / ((cpu.user + cpu.system) / 1e6) };
}

/** `--isolated`: the priority plugin in process against isolated, one run each. */
async function isolatedMain(n: number, store: "memory" | "sqlite"): Promise<void> {
  await runPriority(Math.min(n, 500), false, store); // warm up the JIT
  await runPriority(Math.min(n, 500), true, store);
  const inProcess = await runPriority(n, false, store);
  const isolated = await runPriority(n, true, store);
  const result = {
    isolated: true,
    jobs: n,
    store,
    in_process_per_s: Math.round(inProcess.wall),
    isolated_per_s: Math.round(isolated.wall),
    ratio: Math.round((100 * isolated.wall) / inProcess.wall) / 100,
    in_process_per_cpu_s: Math.round(inProcess.cpu),
    isolated_per_cpu_s: Math.round(isolated.cpu),
    // One call there and back, alone (no batching): the latency an isolated handler adds.
    isolated_call_us: isolated.callUs,
  };
  process.stdout.write(JSON.stringify(result) + "\n");
}

/** Entry point for bench/run.mjs. */
export async function main(args: string[]): Promise<void> {
  const n = Number(arg(args, "jobs", "5000"));
  if (args.includes("--isolated")) return isolatedMain(n, arg(args, "store", "memory") as "memory" | "sqlite");
  const runs = Number(arg(args, "runs", "5"));
  const store = arg(args, "store", "memory") as "memory" | "sqlite";
  await run(Math.min(n, 500), 1, store); // warm up the JIT
  // Interleaved rounds, best per count: a machine shared with other work slows whole
  // stretches of time, and interleaving spreads that over every plugin count alike.
  const wall = PLUGIN_COUNTS.map(() => 0);
  const cpu = PLUGIN_COUNTS.map(() => 0);
  for (let r = 0; r < runs; r++) {
    for (let i = 0; i < PLUGIN_COUNTS.length; i++) {
      const rate = await run(n, PLUGIN_COUNTS[i]!, store);
      wall[i] = Math.max(wall[i]!, Math.round(rate.wall));
      cpu[i] = Math.max(cpu[i]!, Math.round(rate.cpu));
    }
    process.stderr.write(`dispatch: round ${r + 1}: best wall ${JSON.stringify(wall)} jobs/s\n`);
  }
  const cost = (rates: number[]) => Math.round((1000 * (rates[0]! - rates[2]!)) / rates[0]!) / 10;
  const result = {
    plugins: PLUGIN_COUNTS,
    end_to_end_per_s: wall,
    // The same runs per CPU-second of this process: steadier on a machine shared with
    // other work, where wall time also counts the time other processes held the CPU.
    end_to_end_per_cpu_s: cpu,
    jobs: n,
    runs,
    store,
    cost_10_plugins_pct: cost(wall),
    cost_10_plugins_cpu_pct: cost(cpu),
  };
  process.stdout.write(JSON.stringify(result) + "\n");
}

/**
 * `npm run bench -- cron [--jobs N] [--cron N] [--rounds N] [--spawn helper|direct|both]`
 * (defaults 20,000, 50, 3, both)
 *
 * The manager's end-to-end throughput (test executor, SQLite store, every default builtin)
 * with the condor-cron plugin running N Periodic cron jobs at a 1 s period (default 50,
 * each a real shell script printing a three-attribute record into the slot ads), against
 * the same manager without it, in one process. The cron jobs are started by a spawn helper
 * process (`helper`, the default, conf spawn_helpers = 1) or by the daemon itself
 * (`direct`, spawn_helpers = 0). Rounds alternate (none, helper, direct, none, ...) so drift
 * in the machine's load hits all; the median round of each is kept. Then the cron jobs run
 * alone for 5 s in each mode: `*cpu_us_per_run` is this process's CPU per cron run,
 * `*loop_share` the share of its event loop they keep busy, and `helper_cpu_us_per_run`
 * the spawn helper's own CPU per run — the figures that do not depend on other load.
 * Prints, as the last stdout line, {"jobs", "cron_jobs", "none_per_s", "cron_per_s",
 * "ratio", "cron_runs_per_s", "cron_cpu_us_per_run", "cron_loop_share",
 * "helper_cpu_us_per_run", and the same with a `direct_` prefix}; `cron_*` and `ratio` are
 * the helper mode's (with --spawn direct only: the direct mode's).
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createJobManager, type JobManager } from "../src/manager/manager.js";
import type { JobId } from "../src/manager/base/ids.js";
import { type JobtapHost } from "../src/plugins/index.js";
import { jobtapPlugins } from "../plugins-builtin/index.js";
import { arg, testJobspec as jobspec } from "./lib/common.js";

async function round(mgr: JobManager, n: number): Promise<number> {
  const t0 = performance.now();
  const ids: Array<Promise<JobId>> = [];
  for (let i = 0; i < n; i++) ids.push(mgr.submit(jobspec()));
  const results = await Promise.all((await Promise.all(ids)).map((id) => mgr.wait(id)));
  const failed = results.filter((r) => !r.success).length;
  if (failed > 0) throw new Error(`${failed} jobs did not complete`);
  return Math.round(n / ((performance.now() - t0) / 1000));
}

interface CronRow {
  runs: number;
}

/** Total cron runs so far (the plugin's own count). */
async function cronRuns(host: JobtapHost): Promise<number> {
  const q = (await host.query("condor-cron")) as { jobs: CronRow[] };
  return q.jobs.reduce((s, j) => s + j.runs, 0);
}

/** CPU µs used so far by this process's child processes named `node -e` (the spawn helpers). */
function helperCpuUs(): number {
  let ticks = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(f[1]) !== process.pid || !readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith(`${process.execPath}\0-e\0`)) continue;
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // gone meanwhile
    }
  }
  return (ticks * 1e6) / 100; // USER_HZ is 100 on Linux
}

type Mode = "helper" | "direct";
const settle = (ms: number) => new Promise((res) => setTimeout(res, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The bench entry point (see the header for the flags). */
export async function main(args: string[]): Promise<void> {
  const n = Number(arg(args, "jobs", "20000"));
  const cronJobs = Number(arg(args, "cron", "50"));
  const rounds = Number(arg(args, "rounds", "3"));
  const spawn = arg(args, "spawn", "both");
  const modes: Mode[] = spawn === "both" ? ["helper", "direct"] : spawn === "direct" ? ["direct"] : ["helper"];
  const dir = mkdtempSync(join(tmpdir(), "jobtap-bench-cron-"));
  try {
    const probe = join(dir, "probe");
    writeFileSync(probe, '#!/bin/sh\necho "ProbeName = \\"$1\\""\necho "ProbeLoad = 0.25"\necho "ProbeOk = true"\n');
    chmodSync(probe, 0o755);
    const jobs = Object.fromEntries(Array.from({ length: cronJobs }, (_, i) => [`probe${i}`, { executable: probe, period: "1s", prefix: `P${i}_` }]));
    const conf = (mode: Mode) => ({ startd: { max_job_load: 100, jobs }, spawn_helpers: mode === "helper" ? 1 : 0 });
    let host: JobtapHost | undefined;
    const factory = jobtapPlugins({ config: {} });
    const mgr = await createJobManager({
      statedir: join(dir, "state"),
      store: "sqlite",
      plugins: async (m) => (host = await factory(m)),
    });
    await round(mgr, n); // warm-up
    const none: number[] = [];
    const withCron = { helper: [] as number[], direct: [] as number[] };
    const runs = { helper: 0, direct: 0 };
    const cronSeconds = { helper: 0, direct: 0 };
    for (let r = 0; r < rounds; r++) {
      none.push(await round(mgr, n));
      for (const mode of modes) {
        await host!.load("condor-cron", conf(mode));
        await settle(1500); // every cron job started at least once
        const runs0 = await cronRuns(host!);
        const t0 = performance.now();
        withCron[mode].push(await round(mgr, n));
        cronSeconds[mode] += (performance.now() - t0) / 1000;
        runs[mode] += (await cronRuns(host!)) - runs0;
        host!.remove("condor-cron");
        await settle(1200); // the killed jobs are reaped
      }
      process.stderr.write(`cron: round ${r + 1}: none ${none[r]}/s, ${modes.map((m) => `${m} ${withCron[m][r]}/s`).join(", ")}\n`);
    }
    const idle: Record<string, number> = {};
    for (const mode of modes) {
      await host!.load("condor-cron", conf(mode));
      await settle(1500);
      const idleRuns0 = await cronRuns(host!);
      const cpu0 = process.cpuUsage();
      const helper0 = helperCpuUs();
      const elu0 = performance.eventLoopUtilization();
      await settle(5000);
      const idleRuns = Math.max(1, (await cronRuns(host!)) - idleRuns0);
      const cpu = process.cpuUsage(cpu0);
      const elu = performance.eventLoopUtilization(elu0);
      const p = mode === "direct" && modes.length > 1 ? "direct_" : "";
      idle[`${p}cron_cpu_us_per_run`] = Math.round((cpu.user + cpu.system) / idleRuns);
      idle[`${p}cron_loop_share`] = Math.round(elu.utilization * 1000) / 1000;
      idle[`${p}helper_cpu_us_per_run`] = Math.round((helperCpuUs() - helper0) / idleRuns);
      host!.remove("condor-cron");
      await settle(1200);
    }
    await mgr.close();
    const figures = (mode: Mode, p: string) => ({
      [`${p}cron_per_s`]: median(withCron[mode]),
      [`${p}ratio`]: Math.round((median(withCron[mode]) / median(none)) * 1000) / 1000,
      [`${p}cron_runs_per_s`]: Math.round(runs[mode] / cronSeconds[mode]),
    });
    const result = {
      jobs: n,
      cron_jobs: cronJobs,
      none_per_s: median(none),
      ...figures(modes[0]!, ""),
      ...(modes.length > 1 ? figures("direct", "direct_") : {}),
      ...idle,
    };
    process.stdout.write(JSON.stringify(result) + "\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

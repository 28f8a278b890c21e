/**
 * `npm run bench -- cron [--jobs N] [--cron N] [--rounds N]` (defaults 20,000, 50, 3)
 *
 * The manager's end-to-end throughput (test executor, SQLite store, every default builtin)
 * with the condor-cron plugin running N Periodic cron jobs at a 1 s period (default 50,
 * each a real shell script printing a three-attribute record into the slot ads), against
 * the same manager without it, in one process. Rounds alternate (none, cron, none, cron...)
 * so drift in the machine's load hits both; the median round of each is kept. Then the cron
 * jobs run alone for 5 s: `cron_cpu_us_per_run` is this process's CPU per cron run and
 * `cron_loop_share` the share of the event loop they keep busy (mostly the synchronous
 * fork/exec of each spawn), the figures that do not depend on other load on the machine.
 * Prints, as the last stdout line, {"jobs", "cron_jobs", "none_per_s", "cron_per_s",
 * "ratio", "cron_runs_per_s", "cron_cpu_us_per_run", "cron_loop_share"}.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createJobManager, type JobManager } from "../src/manager/manager.js";
import type { JobId } from "../src/manager/ids.js";
import { jobtapPlugins, type JobtapHost } from "../src/plugins/index.js";
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

/** The bench entry point (see the header for the flags). */
export async function main(args: string[]): Promise<void> {
  const n = Number(arg(args, "jobs", "20000"));
  const cronJobs = Number(arg(args, "cron", "50"));
  const rounds = Number(arg(args, "rounds", "3"));
  const dir = mkdtempSync(join(tmpdir(), "jobtap-bench-cron-"));
  try {
    const probe = join(dir, "probe");
    writeFileSync(probe, '#!/bin/sh\necho "ProbeName = \\"$1\\""\necho "ProbeLoad = 0.25"\necho "ProbeOk = true"\n');
    chmodSync(probe, 0o755);
    const jobs = Object.fromEntries(Array.from({ length: cronJobs }, (_, i) => [`probe${i}`, { executable: probe, period: "1s", prefix: `P${i}_` }]));
    const conf = { startd: { max_job_load: 100, jobs } };
    let host: JobtapHost | undefined;
    const factory = jobtapPlugins({ config: {} });
    const mgr = await createJobManager({
      statedir: join(dir, "state"),
      store: "sqlite",
      plugins: async (m) => (host = await factory(m)),
    });
    await round(mgr, n); // warm-up
    const none: number[] = [];
    const withCron: number[] = [];
    let runs = 0;
    let cronSeconds = 0;
    for (let r = 0; r < rounds; r++) {
      none.push(await round(mgr, n));
      await host!.load("condor-cron", conf);
      await new Promise((res) => setTimeout(res, 1500)); // every cron job started at least once
      const runs0 = await cronRuns(host!);
      const t0 = performance.now();
      withCron.push(await round(mgr, n));
      cronSeconds += (performance.now() - t0) / 1000;
      runs += (await cronRuns(host!)) - runs0;
      host!.remove("condor-cron");
      await new Promise((res) => setTimeout(res, 1200)); // the killed jobs are reaped
      process.stderr.write(`cron: round ${r + 1}: none ${none[r]}/s, cron ${withCron[r]}/s\n`);
    }
    await host!.load("condor-cron", conf);
    await new Promise((res) => setTimeout(res, 1500));
    const idleRuns0 = await cronRuns(host!);
    const cpu0 = process.cpuUsage();
    const elu0 = performance.eventLoopUtilization();
    await new Promise((res) => setTimeout(res, 5000));
    const idleRuns = (await cronRuns(host!)) - idleRuns0;
    const cpu = process.cpuUsage(cpu0);
    const elu = performance.eventLoopUtilization(elu0);
    host!.remove("condor-cron");
    await new Promise((res) => setTimeout(res, 1200));
    await mgr.close();
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const result = {
      jobs: n,
      cron_jobs: cronJobs,
      none_per_s: median(none),
      cron_per_s: median(withCron),
      ratio: Math.round((median(withCron) / median(none)) * 1000) / 1000,
      cron_runs_per_s: Math.round(runs / cronSeconds),
      cron_cpu_us_per_run: Math.round((cpu.user + cpu.system) / Math.max(1, idleRuns)),
      cron_loop_share: Math.round(elu.utilization * 1000) / 1000,
    };
    process.stdout.write(JSON.stringify(result) + "\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

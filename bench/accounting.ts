/**
 * `npm run bench -- accounting [--jobs N] [--users N] [--throughput-jobs N] [--rounds N]`
 *
 * Two figures for the accounting plugin (docs/accounting.md):
 * - `reprioritize_ms`: one recompute (Fair Tree over every association, then
 *   reprioritize-all) with N pending jobs (default 100,000) of U users (default 1,000, in
 *   ten banks under one root) on an in-memory manager with every builtin; the fastest of
 *   five (the median beside it). Target: ≤ 200 ms.
 * - `throughput_fraction`: jobs/s of the throughput workload (20,000 jobs of run_duration 0
 *   per round, SQLite store in a temp dir) with the builtins and accounting loaded, over the
 *   same with the builtins alone: two managers side by side, two warm-up rounds each, then
 *   five rounds taking turns, the median of each. Target ≥ 0.9. Beside it `cpu_fraction`,
 *   the same ratio from the process's CPU time per job (median), which a loaded machine
 *   disturbs far less than the wall clock.
 * Prints progress on stderr and, as the last stdout line, one JSON object.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createJobManager, type JobManager } from "../src/manager/manager.js";
import type { JobId } from "../src/manager/base/ids.js";
import { type JobtapHost } from "../src/plugins/index.js";
import { jobtapPlugins } from "../plugins-builtin/index.js";
import { arg, testJobspec } from "./lib/common.js";

const ACCOUNTING = { "job-manager": { plugins: [{ load: "accounting" }] } };
const BANKS = 10;
const FIRST_UID = 20000;

/** A manager with the builtins (and accounting when `config` loads it), and its plugin host. */
async function start(config: Record<string, unknown>, opts: { statedir?: string; cores?: number }): Promise<{ m: JobManager; host: JobtapHost }> {
  let host: JobtapHost | undefined;
  const factory = jobtapPlugins({ config, pluginPath: [], log: () => undefined });
  const m = await createJobManager({
    ...(opts.statedir ? { statedir: opts.statedir, store: "sqlite" as const } : { store: "memory" as const }),
    config,
    ...(opts.cores === undefined ? {} : { resources: { cores: opts.cores } }),
    log: () => undefined,
    plugins: async (port) => (host = await factory(port)),
  });
  return { m, host: host! };
}

const asOwner = (m: JobManager) => ({ userid: m.owner, owner: true });

/** Banks b0..b9 under `root`, users spread over them. */
async function tree(m: JobManager, host: JobtapHost, users: number): Promise<void> {
  const call = (method: string, payload: unknown) => host.callService("accounting", method, payload, asOwner(m));
  await call("add-bank", { name: "root" });
  for (let b = 0; b < BANKS; b++) await call("add-bank", { name: `b${b}`, parent: "root", shares: 1 + b });
  for (let u = 0; u < users; u++) await call("add-user", { uid: FIRST_UID + u, bank: `b${u % BANKS}`, shares: 1 + (u % 7) });
}

async function reprioritize(jobs: number, users: number): Promise<Record<string, number>> {
  const { m, host } = await start(ACCOUNTING, { cores: 1 });
  try {
    await tree(m, host, users);
    const blocker = { ...testJobspec(), attributes: { system: { duration: 0, exec: { test: { run_duration: "1000d" } } } } };
    await m.submit(blocker, { userid: FIRST_UID });
    const ids: Array<Promise<JobId>> = [];
    for (let i = 0; i < jobs; i++) ids.push(m.submit(testJobspec(), { userid: FIRST_UID + (i % users), urgency: i % 17 }));
    await Promise.all(ids);
    await new Promise((r) => setTimeout(r, 200));
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await host.callService("accounting", "recompute", {}, asOwner(m));
      times.push(performance.now() - t0);
    }
    const pending = m.jobs().filter((j) => j.state === "SCHED" || j.state === "PRIORITY").length;
    process.stderr.write(`accounting: recompute with ${pending} pending jobs: ${times.map((t) => t.toFixed(1)).join(" ")} ms\n`);
    const sorted = [...times].sort((a, b) => a - b);
    return { pending_jobs: pending, users, reprioritize_ms: round1(sorted[0]!), reprioritize_ms_median: round1(sorted[2]!) };
  } finally {
    await m.close();
  }
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** A manager on a SQLite store in a temp dir, with or without accounting (every user in root). */
async function throughputManager(withAccounting: boolean): Promise<{ m: JobManager; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "jobtap-bench-accounting-"));
  const config = withAccounting ? { ...ACCOUNTING, accounting: { "default-bank": "root" } } : {};
  const { m, host } = await start(config, { statedir: dir });
  if (withAccounting) await host.callService("accounting", "add-bank", { name: "root" }, asOwner(m));
  return { m, dir };
}

/** One round: n jobs submitted at once, each waited for; jobs/s, and CPU µs per job (every
 *  thread of the process: less sensitive to other processes' load than the wall clock). */
async function round(m: JobManager, n: number): Promise<{ rate: number; cpu: number }> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const ids: Array<Promise<JobId>> = [];
  for (let i = 0; i < n; i++) ids.push(m.submit(testJobspec()));
  const results = await Promise.all((await Promise.all(ids)).map((id) => m.wait(id)));
  if (results.some((x) => !x.success)) throw new Error("a job did not complete");
  const c = process.cpuUsage(c0);
  return { rate: Math.round(n / ((performance.now() - t0) / 1000)), cpu: Math.round(((c.user + c.system) / n) * 10) / 10 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/**
 * Both managers live side by side and take turns: two warm-up rounds each, then `rounds`
 * timed rounds alternating without/with, so a change in the machine's load meets both
 * alike. Returns the median jobs/s of each.
 */
async function throughput(n: number, rounds: number): Promise<Record<"without" | "with" | "cpuWithout" | "cpuWith", number>> {
  const base = await throughputManager(false);
  const acct = await throughputManager(true);
  try {
    for (let r = 0; r < 2; r++) {
      await round(base.m, n);
      await round(acct.m, n);
    }
    const without: Array<{ rate: number; cpu: number }> = [];
    const withAcct: Array<{ rate: number; cpu: number }> = [];
    for (let r = 0; r < rounds; r++) {
      without.push(await round(base.m, n));
      withAcct.push(await round(acct.m, n));
    }
    const show = (xs: typeof without) => xs.map((x) => `${x.rate}/s ${x.cpu}µs`).join(", ");
    process.stderr.write(`accounting: throughput without accounting: ${show(without)} (jobs/s, CPU per job)\n`);
    process.stderr.write(`accounting: throughput with accounting: ${show(withAcct)}\n`);
    return {
      without: median(without.map((x) => x.rate)),
      with: median(withAcct.map((x) => x.rate)),
      cpuWithout: median(without.map((x) => x.cpu)),
      cpuWith: median(withAcct.map((x) => x.cpu)),
    };
  } finally {
    for (const { m, dir } of [base, acct]) {
      await m.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

/** The bench entry point (see the header). */
export async function main(args: string[]): Promise<void> {
  const jobs = Number(arg(args, "jobs", "100000"));
  const users = Number(arg(args, "users", "1000"));
  const n = Number(arg(args, "throughput-jobs", "20000"));
  const rounds = Number(arg(args, "rounds", "5"));
  const rep = await reprioritize(jobs, users);
  const tp = await throughput(n, rounds);
  const result = {
    ...rep,
    throughput_jobs: n,
    throughput_rounds: rounds,
    builtins_end_to_end_per_s: tp.without,
    accounting_end_to_end_per_s: tp.with,
    throughput_fraction: Math.round((tp.with / tp.without) * 1000) / 1000,
    cpu_us_per_job_without: tp.cpuWithout,
    cpu_us_per_job_with: tp.cpuWith,
    // The same ratio from CPU time per job: what the fraction would be on an idle machine
    // (wall-clock rates swing with other processes' load; CPU per job much less).
    cpu_fraction: Math.round((tp.cpuWithout / tp.cpuWith) * 1000) / 1000,
  };
  process.stdout.write(JSON.stringify(result) + "\n");
}

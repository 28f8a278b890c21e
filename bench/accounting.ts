/**
 * `npm run bench -- accounting [--jobs N] [--users N] [--throughput-jobs N]`
 *
 * Two figures for the accounting plugin (docs/accounting.md):
 * - `reprioritize_ms`: one recompute (Fair Tree over every association, then
 *   reprioritize-all) with N pending jobs (default 100,000) of U users (default 1,000, in
 *   ten banks under one root) on an in-memory manager with every builtin; the fastest of
 *   five (the median beside it). Target: ≤ 200 ms.
 * - `throughput_fraction`: jobs/s of the throughput workload (run_duration 0, SQLite store
 *   in a temp dir, the fastest of three rounds after two warm-up rounds) with the builtins
 *   and accounting loaded, over the same with the builtins alone (one run each). Target ≥ 0.9.
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

/** The fastest of three timed rounds of n jobs after two warm-up rounds, in jobs/s. */
async function throughput(n: number, withAccounting: boolean): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "jobtap-bench-accounting-"));
  try {
    const config = withAccounting ? { ...ACCOUNTING, accounting: { "default-bank": "root" } } : {};
    const { m, host } = await start(config, { statedir: dir });
    if (withAccounting) await host.callService("accounting", "add-bank", { name: "root" }, asOwner(m));
    const rates: number[] = [];
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      const ids: Array<Promise<JobId>> = [];
      for (let i = 0; i < n; i++) ids.push(m.submit(testJobspec()));
      const results = await Promise.all((await Promise.all(ids)).map((id) => m.wait(id)));
      if (results.some((x) => !x.success)) throw new Error("a job did not complete");
      if (r >= 2) rates.push(Math.round(n / ((performance.now() - t0) / 1000)));
    }
    await m.close();
    process.stderr.write(`accounting: throughput ${withAccounting ? "with" : "without"} accounting: ${rates.join(" ")} jobs/s\n`);
    return Math.max(...rates);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bench entry point (see the header). */
export async function main(args: string[]): Promise<void> {
  const jobs = Number(arg(args, "jobs", "100000"));
  const users = Number(arg(args, "users", "1000"));
  const n = Number(arg(args, "throughput-jobs", "10000"));
  const rep = await reprioritize(jobs, users);
  const without = await throughput(n, false);
  const withAcct = await throughput(n, true);
  const result = {
    ...rep,
    throughput_jobs: n,
    builtins_end_to_end_per_s: without,
    accounting_end_to_end_per_s: withAcct,
    throughput_fraction: Math.round((withAcct / without) * 1000) / 1000,
  };
  process.stdout.write(JSON.stringify(result) + "\n");
}

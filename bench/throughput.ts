/**
 * `npm run bench -- throughput [--jobs N] [--cores N] [--sync normal|full] [--builtins [only]]`
 *
 * Flux's throughput.py, in-process: N jobs (default 10,000) run by the test executor with
 * run_duration 0, submitted and run to INACTIVE on a SQLite store in a temp dir. Prints
 * progress on stderr and, as the last stdout line, {"jobs", "submit_per_s",
 * "end_to_end_per_s", "rss_bytes_per_job", ...}.
 *
 * `--builtins` runs the same workload a second time with the real plugin host and every
 * default builtin (`jobtapPlugins({ config: {} })`) and adds its figures as `builtins_*`;
 * `--builtins only` runs just that (for profiling).
 *
 * Each run also measures the store limit (bench/lib/storelimit.ts): the rows it wrote for N
 * jobs, read back and written again straight through better-sqlite3 (WAL, the same
 * `synchronous`, one transaction per 500 jobs): `store_limit_jobs_per_s`, and
 * `fraction_of_store_limit` = end_to_end_per_s / store_limit_jobs_per_s (`builtins_*` for the
 * run with the default builtins).
 *
 * `rss_bytes_per_job` is the growth of RSS (after a full GC) across the memory rounds,
 * divided by the jobs they added: the cost of one more inactive job.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { createJobManager, JobManager } from "../src/manager/manager.js";
import { jobtapPlugins } from "../src/plugins/index.js";
import type { JobId } from "../src/manager/ids.js";
import { arg, testJobspec as jobspec } from "./lib/common.js";
import { measureStoreLimit } from "./lib/storelimit.js";


/** A full GC even when node was not started with --expose-gc. */
function gc(): void {
  v8.setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

function rss(): number {
  gc();
  return process.memoryUsage().rss;
}

interface Round {
  submit_per_s: number;
  end_to_end_per_s: number;
  /** CPU time (user + system) of this process per job: insensitive to other load. */
  cpu_us_per_job: number;
}

/** Submits n jobs at once and waits until every one is INACTIVE. */
async function round(mgr: JobManager, n: number): Promise<Round> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const ids: Array<Promise<JobId>> = [];
  for (let i = 0; i < n; i++) ids.push(mgr.submit(jobspec()));
  const waits = (await Promise.all(ids)).map((id) => mgr.wait(id));
  const tSubmit = performance.now();
  const results = await Promise.all(waits);
  const tEnd = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const failed = results.filter((r) => !r.success).length;
  if (failed > 0) throw new Error(`${failed} jobs did not complete`);
  return {
    submit_per_s: Math.round(n / ((tSubmit - t0) / 1000)),
    end_to_end_per_s: Math.round(n / ((tEnd - t0) / 1000)),
    cpu_us_per_job: Math.round((cpu.user + cpu.system) / n),
  };
}

/** Rounds of N jobs over which the memory per inactive job is measured. */
const MEMORY_ROUNDS = 5;

interface Settings {
  n: number;
  cores: string;
  sync: "full" | "normal";
  builtins: boolean;
}

/**
 * Rounds of N jobs: the first warms up (JIT, heap and SQLite cache high-water marks), the
 * second is timed, then MEMORY_ROUNDS more measure memory. RSS per job is the growth across
 * those after full GCs, i.e. what more inactive jobs cost once the transient peak of N
 * in-flight jobs has been paid.
 */
async function measure(s: Settings): Promise<Record<string, number | string>> {
  const { n, cores, sync } = s;
  const dir = mkdtempSync(join(tmpdir(), "jobtap-bench-"));
  try {
    const mgr = await createJobManager({
      statedir: dir,
      store: "sqlite",
      sqliteSynchronous: sync,
      ...(cores ? { resources: { cores: Number(cores) } } : {}),
      ...(s.builtins ? { plugins: jobtapPlugins({ config: {} }) } : {}),
    });
    const label = s.builtins ? "throughput (builtins)" : "throughput";
    const rssStart = process.memoryUsage().rss;
    const cold = await round(mgr, n);
    process.stderr.write(`${label}: warm-up round ${JSON.stringify(cold)}\n`);
    const warm = await round(mgr, n);
    // Memory is measured on untimed rounds after the timed one: forcing GC needs a V8 flag that would
    // otherwise slow the timed rounds down.
    // One round of N is too small to rise above allocator noise (it often measured 0), so
    // memory is the growth over MEMORY_ROUNDS more rounds, i.e. MEMORY_ROUNDS × N jobs.
    const rss0 = rss();
    const heap0 = process.memoryUsage().heapUsed;
    for (let i = 0; i < MEMORY_ROUNDS; i++) await round(mgr, n);
    await new Promise((r) => setTimeout(r, 50));
    const rss1 = rss();
    const heap1 = process.memoryUsage().heapUsed;
    await mgr.close();
    // The ceiling: the rows this run wrote for N jobs, written again straight through SQLite.
    const limit = measureStoreLimit(join(dir, "jobtap.db"), n, sync);
    const result = {
      jobs: n,
      submit_per_s: warm.submit_per_s,
      end_to_end_per_s: warm.end_to_end_per_s,
      cpu_us_per_job: warm.cpu_us_per_job,
      rss_bytes_per_job: Math.max(0, Math.round((rss1 - rss0) / (n * MEMORY_ROUNDS))),
      heap_bytes_per_job: Math.max(0, Math.round((heap1 - heap0) / (n * MEMORY_ROUNDS))),
      cold_submit_per_s: cold.submit_per_s,
      cold_end_to_end_per_s: cold.end_to_end_per_s,
      rss_peak_growth_bytes: Math.max(0, rss0 - rssStart),
      cores: JobManager.internals(mgr).scheduler.pool.cores,
      sqlite_synchronous: sync,
      ...limit,
      fraction_of_store_limit: Math.round((warm.end_to_end_per_s / limit.store_limit_jobs_per_s) * 1000) / 1000,
    };
    process.stderr.write(`${label}: ${JSON.stringify(result)}\n`);
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bench entry point (see the header for the flags). */
export async function main(args: string[]): Promise<void> {
  const i = args.indexOf("--builtins");
  const mode = i < 0 ? "bare" : args[i + 1] === "only" ? "only" : "both";
  const s: Settings = {
    n: Number(arg(args, "jobs", "10000")),
    cores: arg(args, "cores", ""),
    sync: arg(args, "sync", "normal") as "full" | "normal",
    builtins: false,
  };
  const bare = mode === "only" ? undefined : await measure(s);
  const withBuiltins = mode === "bare" ? undefined : await measure({ ...s, builtins: true });
  const result: Record<string, number | string> = { ...(bare ?? { jobs: s.n }) };
  if (withBuiltins) {
    for (const k of [
      "submit_per_s",
      "end_to_end_per_s",
      "cpu_us_per_job",
      "rss_bytes_per_job",
      "heap_bytes_per_job",
      "store_limit_jobs_per_s",
      "store_chunks_per_job",
      "store_bytes_per_job",
      "fraction_of_store_limit",
    ]) {
      result[`builtins_${k}`] = withBuiltins[k]!;
    }
  }
  process.stdout.write(JSON.stringify(result) + "\n");
}

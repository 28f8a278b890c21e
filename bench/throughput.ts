/**
 * `npm run bench -- throughput [--jobs N] [--cores N] [--sync normal|full] [--builtins [only]]`
 *
 * Flux's throughput.py, in-process: N jobs (default 10,000) run by the test executor with
 * run_duration 0, submitted and run to INACTIVE on a SQLite store in a temp dir. Prints
 * progress on stderr and, as the last stdout line, {"jobs", "submit_per_s",
 * "end_to_end_per_s", "rss_bytes_per_job", ...}. After WARMUP_ROUNDS untimed rounds of N
 * jobs, TIMED_ROUNDS rounds are timed and the fastest is reported (its figures; the median
 * rate and every round's rate beside it).
 *
 * `--builtins` runs the same workload a second time with the real plugin host and every
 * default builtin (`jobtapPlugins({ config: {} })`) and adds its figures as `builtins_*`;
 * `--builtins only` runs just that (for profiling).
 *
 * Each run also measures the store limit (bench/lib/storelimit.ts): the rows it wrote for N
 * jobs, read back and written again straight through better-sqlite3 (WAL, the same
 * `synchronous`, one transaction per 500 jobs): `store_limit_jobs_per_s`, and
 * `fraction_of_store_limit` = end_to_end_per_s / store_limit_jobs_per_s (`builtins_*` for the
 * run with the default builtins). Beside it, a fixed yardstick that no change of jobtap's
 * layout moves (issue 41): `fixed_store_limit_jobs_per_s`, two rows per job (a 248-byte
 * jobspec with a 102-byte first events text, one 645-byte eventlog chunk) written the same
 * way, and `fraction_of_fixed_store_limit`.
 *
 * `main_thread_us_per_job` is the CPU time of the manager's thread alone per job, and `gc_share`
 * the part of the round's wall time spent in GC pauses (see docs/manager.md, Performance).
 *
 * `rss_bytes_per_job` is what one more inactive job costs the process: after the timed rounds,
 * MEMORY_ROUNDS more rounds of N jobs each add N inactive jobs; after each (and once before
 * the first) the bench lets the store's batch flush, runs two full GCs and reads RSS and the
 * JS heap in use. The figure is the least-squares slope of RSS over the inactive-job count
 * across those samples (`heap_bytes_per_job`: the same for the JS heap), and
 * `rss_bytes_per_job_stderr` its standard error. A slope over many samples, not the
 * difference of two: RSS after a GC still swings by 10–30 MB from sample to sample (pages
 * freed by V8 and by malloc arenas of the GC and compiler threads are returned to the system
 * or kept at no fixed moment), which two samples 50,000 jobs apart turned into anything from
 * 800 to 2,400 B/job. Nothing is excluded: the SQLite page cache, malloc arenas and V8's page
 * retention all count, as they do for the daemon.
 *
 * V8's young generation (issue 41): Node 20 here defaults to 16 MB semi-spaces (new space
 * 32 MB). To weigh a larger one, run the bench under it, alternating with the default:
 * `node --max-semi-space-size=32 bench/run.mjs throughput --builtins --rounds 8` (the flag
 * only works on node's command line or NODE_OPTIONS, not via v8.setFlagsFromString); for the
 * cli bench's daemon, `JOBTAP_BENCH_DAEMON_ARGS=--max-semi-space-size=32`. The daemon does
 * not ship with it: alternating runs here cut builtins_gc_share (0.12 -> 0.04-0.08) but not the
 * main thread's CPU per job nor the median rate, and added 17-106 MB of peak RSS (figures in
 * the commits that wrote this paragraph).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { PerformanceObserver } from "node:perf_hooks";
import { tmpdir } from "node:os";
import { join } from "node:path";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { createJobManager, JobManager } from "../src/manager/manager.js";
import { jobtapPlugins } from "../plugins-builtin/index.js";
import type { JobtapHost } from "../src/plugins/index.js";
import { createMetrics } from "../src/server/http/metrics.js";
import type { JobId } from "../src/manager/base/ids.js";
import { arg, testJobspec as jobspec } from "./lib/common.js";
import { measureStoreLimit } from "./lib/storelimit.js";


/** A full GC even when node was not started with --expose-gc. */
function gc(): void {
  v8.setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

interface MemorySample {
  /** Inactive jobs added since the first sample. */
  jobs: number;
  rss: number;
  heap: number;
}

/** RSS and JS heap in use once the store's batch has flushed, after two full GCs. */
async function sample(jobs: number): Promise<MemorySample> {
  await new Promise((r) => setTimeout(r, 100));
  gc();
  gc();
  const m = process.memoryUsage();
  return { jobs, rss: m.rss, heap: m.heapUsed };
}

/** Least-squares slope of `y` over `jobs`, with its standard error. */
function slope(samples: MemorySample[], y: "rss" | "heap"): { slope: number; stderr: number } {
  const n = samples.length;
  const mx = samples.reduce((a, s) => a + s.jobs, 0) / n;
  const my = samples.reduce((a, s) => a + s[y], 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (const s of samples) {
    sxx += (s.jobs - mx) ** 2;
    sxy += (s.jobs - mx) * (s[y] - my);
  }
  const b = sxy / sxx;
  const residuals = samples.reduce((a, s) => a + (s[y] - my - b * (s.jobs - mx)) ** 2, 0);
  return { slope: b, stderr: Math.sqrt(residuals / (n - 2) / sxx) };
}

interface Round {
  submit_per_s: number;
  end_to_end_per_s: number;
  /** CPU time (user + system) of this process per job: insensitive to other load. */
  cpu_us_per_job: number;
  /** CPU time of the main thread alone per job (the manager's thread; -1 where /proc is missing). */
  main_thread_us_per_job: number;
  /** Share of the round's wall time the main thread spent in garbage collection pauses. */
  gc_share: number;
}

/**
 * CPU time of this process's main thread so far, in microseconds, from
 * /proc/self/task/PID/stat (clock ticks: 10 ms steps, so a round should last a second or
 * more for a figure within 1-2%); undefined where there is no /proc.
 */
function mainThreadCpuUs(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * (1e6 / 100);
  } catch {
    return undefined;
  }
}

/** Milliseconds of GC pauses reported since the observer was started. */
let gcMs = 0;
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
});

/** Submits n jobs at once and waits until every one is INACTIVE. */
async function round(mgr: JobManager, n: number): Promise<Round> {
  gcObserver.observe({ entryTypes: ["gc"] });
  // GC entries are delivered after the fact: let those of earlier work arrive first.
  await new Promise((r) => setImmediate(r));
  gcMs = 0;
  const main0 = mainThreadCpuUs();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const ids: Array<Promise<JobId>> = [];
  for (let i = 0; i < n; i++) ids.push(mgr.submit(jobspec()));
  const waits = (await Promise.all(ids)).map((id) => mgr.wait(id));
  const tSubmit = performance.now();
  const results = await Promise.all(waits);
  const tEnd = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const main1 = mainThreadCpuUs();
  await new Promise((r) => setImmediate(r));
  gcObserver.disconnect();
  const failed = results.filter((r) => !r.success).length;
  if (failed > 0) throw new Error(`${failed} jobs did not complete`);
  return {
    submit_per_s: Math.round(n / ((tSubmit - t0) / 1000)),
    end_to_end_per_s: Math.round(n / ((tEnd - t0) / 1000)),
    cpu_us_per_job: Math.round((cpu.user + cpu.system) / n),
    main_thread_us_per_job: main0 === undefined || main1 === undefined ? -1 : Math.round((main1 - main0) / n * 10) / 10,
    gc_share: Math.round((gcMs / (tEnd - t0)) * 1000) / 1000,
  };
}

/** Rounds of N jobs over which the memory per inactive job is measured (see the header). */
const MEMORY_ROUNDS = 20;

/**
 * Untimed rounds before the timed ones, the cold one included. The manager's code is not at
 * its steady speed after one round of 10,000 jobs: V8 is still optimizing and deoptimizing
 * (job records change shape as fields first get values) and growing the heap; the second,
 * third and fourth rounds of one run measured 46k, 56k and 67k jobs/s (2026-11-24).
 */
const WARMUP_ROUNDS = 2;

/**
 * Timed rounds; the fastest is reported, as the store limit reports the fastest of its
 * passes (bench/lib/storelimit.ts): a round lasts a fifth of a second and another process
 * taking a core for part of it halves its rate. The median and every round's rate are
 * printed too.
 */
const TIMED_ROUNDS = 3;

export interface Settings {
  n: number;
  cores: string;
  sync: "full" | "normal";
  builtins: boolean;
  /** Attach the daemon's Prometheus metrics (src/server/http/metrics.ts), as `[daemon] http` does. */
  metrics?: boolean;
  /** Untimed rounds before the timed ones (default WARMUP_ROUNDS). */
  warmup?: number;
  /** Timed rounds (default TIMED_ROUNDS). */
  rounds?: number;
}

/**
 * Rounds of N jobs: WARMUP_ROUNDS warm up (JIT, heap and SQLite cache high-water marks),
 * TIMED_ROUNDS are timed, then MEMORY_ROUNDS more measure memory. RSS per job is the slope of RSS
 * over those (see the header), i.e. what more inactive jobs cost once the transient peak of
 * N in-flight jobs has been paid.
 */
export async function measure(s: Settings): Promise<Record<string, number | string>> {
  const { n, cores, sync } = s;
  const dir = mkdtempSync(join(tmpdir(), "jobtap-bench-"));
  try {
    let host: JobtapHost | undefined;
    const builtins = jobtapPlugins({ config: {} });
    const mgr = await createJobManager({
      statedir: dir,
      store: "sqlite",
      sqliteSynchronous: sync,
      ...(cores ? { resources: { cores: Number(cores) } } : {}),
      ...(s.builtins ? { plugins: async (port: Parameters<typeof builtins>[0]) => (host = await builtins(port)) } : {}),
    });
    const metrics = s.metrics === true ? createMetrics(mgr, () => host) : undefined;
    const label = `throughput${s.builtins ? " (builtins)" : ""}${metrics ? " (metrics)" : ""}`;
    const rssStart = process.memoryUsage().rss;
    const cold = await round(mgr, n);
    process.stderr.write(`${label}: warm-up round ${JSON.stringify(cold)}\n`);
    for (let i = 1; i < (s.warmup ?? WARMUP_ROUNDS); i++) await round(mgr, n);
    const timed: Round[] = [];
    for (let i = 0; i < (s.rounds ?? TIMED_ROUNDS); i++) {
      timed.push(await round(mgr, n));
      process.stderr.write(`${label}: timed round ${JSON.stringify(timed[i])}\n`);
    }
    const rates = timed.map((r) => r.end_to_end_per_s);
    const warm = timed.reduce((a, b) => (b.end_to_end_per_s > a.end_to_end_per_s ? b : a));
    // Memory is measured on untimed rounds after the timed one: forcing GC needs a V8 flag that would
    // otherwise slow the timed rounds down.
    const samples = [await sample(0)];
    for (let i = 1; i <= MEMORY_ROUNDS; i++) {
      await round(mgr, n);
      samples.push(await sample(i * n));
    }
    const rssSlope = slope(samples, "rss");
    if (metrics) await metrics.text();
    metrics?.stop();
    await mgr.close();
    // The ceiling: the rows this run wrote for N jobs, written again straight through SQLite.
    const limit = measureStoreLimit(join(dir, "jobtap.db"), n, sync);
    const result = {
      jobs: n,
      submit_per_s: warm.submit_per_s,
      end_to_end_per_s: warm.end_to_end_per_s,
      end_to_end_per_s_median: [...rates].sort((a, b) => a - b)[rates.length >> 1]!,
      end_to_end_per_s_rounds: rates.join(" "),
      cpu_us_per_job: warm.cpu_us_per_job,
      main_thread_us_per_job: warm.main_thread_us_per_job,
      // Over every timed round, not the fastest: 3N jobs make the 10 ms ticks count less.
      main_thread_us_per_job_timed: Math.round((timed.reduce((a, r) => a + r.main_thread_us_per_job, 0) / timed.length) * 10) / 10,
      gc_share: warm.gc_share,
      rss_bytes_per_job: Math.round(rssSlope.slope),
      rss_bytes_per_job_stderr: Math.round(rssSlope.stderr),
      heap_bytes_per_job: Math.round(slope(samples, "heap").slope),
      cold_submit_per_s: cold.submit_per_s,
      cold_end_to_end_per_s: cold.end_to_end_per_s,
      rss_peak_growth_bytes: Math.max(0, samples[0]!.rss - rssStart),
      cores: JobManager.internals(mgr).scheduler.pool.cores,
      sqlite_synchronous: sync,
      ...limit,
      fraction_of_store_limit: Math.round((warm.end_to_end_per_s / limit.store_limit_jobs_per_s) * 1000) / 1000,
      fraction_of_fixed_store_limit: Math.round((warm.end_to_end_per_s / limit.fixed_store_limit_jobs_per_s) * 1000) / 1000,
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
    warmup: Number(arg(args, "warmup", String(WARMUP_ROUNDS))),
    rounds: Number(arg(args, "rounds", String(TIMED_ROUNDS))),
  };
  const bare = mode === "only" ? undefined : await measure(s);
  const withBuiltins = mode === "bare" ? undefined : await measure({ ...s, builtins: true });
  const result: Record<string, number | string> = { ...(bare ?? { jobs: s.n }) };
  if (withBuiltins) {
    for (const k of [
      "submit_per_s",
      "end_to_end_per_s",
      "end_to_end_per_s_median",
      "end_to_end_per_s_rounds",
      "cpu_us_per_job",
      "main_thread_us_per_job",
      "main_thread_us_per_job_timed",
      "gc_share",
      "rss_bytes_per_job",
      "rss_bytes_per_job_stderr",
      "heap_bytes_per_job",
      "store_limit_jobs_per_s",
      "fixed_store_limit_jobs_per_s",
      "store_chunks_per_job",
      "store_bytes_per_job",
      "fraction_of_store_limit",
      "fraction_of_fixed_store_limit",
    ]) {
      result[`builtins_${k}`] = withBuiltins[k]!;
    }
  }
  process.stdout.write(JSON.stringify(result) + "\n");
}

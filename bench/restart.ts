/**
 * `npm run bench -- restart [--inactive N] [--pending P] [--reprioritize R]`
 *
 * - open_ms: reopening a SQLite store of N inactive (default 100,000) and P pending
 *   (default 10,000, held in SCHED) jobs with the builtin plugins, until the manager
 *   accepts requests (createJobManager resolved; a submit is then acknowledged:
 *   first_submit_ms counts from the same start).
 * - daemon_ready_ms: the same store behind `bin/jobtap daemon`, from spawn until its socket
 *   answers a ping (Node's start-up included).
 * - open_cpu_ms, daemon_ready_cpu_ms: the CPU time (user + system, all threads) of the same
 *   two starts: on a loaded machine wall-clock time mostly measures the other processes.
 * - reprioritize_ms: reprioritize-all (ManagerPort.reprioritizeAll, the builtin
 *   .priority-default answering job.priority.get) over R pending jobs (default 100,000),
 *   held (urgency 0: priorities do not change), median of 5.
 * - reprioritize_changed_ms: the same over R jobs queued in SCHED (behind one running job)
 *   whose priority changes every time: R priority events and a reorder of the alloc queue,
 *   median of 3.
 * - rss_after_open_mb, heap_after_open_mb: this process's resident set and V8 heap once the
 *   manager is open (after a GC if node runs with --expose-gc); heap_total_after_open_mb
 *   (the heap V8 holds, used or not) and array_buffers_after_open_mb (typed arrays: the
 *   stored inactive tier's columns, plugins' columns) say where the rest of the RSS goes.
 * - rss_settled_mb, heap_settled_mb: the same SETTLE_MS later and after a GC (forced
 *   whatever node's flags): what the open keeps once its garbage is collected and its
 *   background work is done. daemon_rss_ready_mb: the daemon's resident set (VmRSS) when it
 *   first answers (its open, as rss_after_open_mb is the library's); daemon_rss_mb: after it
 *   answered the requests below.
 * - look_ms, rss_after_look_mb, heap_after_look_mb: one look at every waiting job (its ad and
 *   its `why`, as a constraint listing, the dashboard or `why` make), then a GC: what the
 *   look keeps. daemon_rss_after_look_mb: the daemon's resident set after a `jobs
 *   --constraint` listing (every waiting job's ad built) following the requests below.
 * - daemon_jobs_first_line_ms: `jobtap jobs` (active jobs) against the daemon, from spawn
 *   to its first stdout line; daemon_jobs_all_first_line_ms: the same with `-a`.
 * - daemon_info_old_ms: the daemon's answer to `info` of the oldest inactive job (the
 *   request over the socket, median of 5 different old jobs, none read before).
 * The generated store is kept under $TMPDIR/jobtap-restart-cache/, keyed by N, P and the
 * store layout, and copied for each run (`--fresh` builds it again).
 * `--reprioritize 0` skips the reprioritize figures.
 * Last stdout line: the JSON figures.
 */
import { spawn } from "node:child_process";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { closeSync, cpSync, existsSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createJobManager, type JobManager } from "../src/manager/manager.js";
import { jobtapPlugins } from "../plugins-builtin/index.js";
import { connectDaemon } from "../src/server/client.js";
import type { PluginPort, StackResult } from "../src/manager/port/port.js";
import type { JobArgs } from "../src/manager/port/records.js";
import { arg, testJobspec } from "./lib/common.js";
import { STORE_SCHEMA_VERSION } from "../src/manager/store/sqlite.js";
import Database from "better-sqlite3";
import { formatJobId, type JobId } from "../src/manager/base/ids.js";

const BIN = [new URL("../bin/jobtap", import.meta.url), new URL("../../bin/jobtap", import.meta.url)].map((u) => fileURLToPath(u)).find((p) => existsSync(p))!;

const open = (statedir: string) =>
  createJobManager({ statedir, store: "sqlite", resources: { cores: 100_000 }, inactiveNumLimit: 10_000_000, log: () => undefined, plugins: jobtapPlugins({ config: {} }) });

/**
 * Flushes the copied store to disk: otherwise the open's first write (SQLite's first
 * commit on the file) waits for the kernel to write back the whole fresh copy, 0.6-0.8 s
 * of a 1.5 GB store counted as the manager's open.
 */
function syncFiles(dir: string): void {
  for (const f of readdirSync(dir)) {
    const fd = openSync(join(dir, f), "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}

async function fill(mgr: JobManager, n: number, urgency?: number): Promise<void> {
  for (let done = 0; done < n; ) {
    const k = Math.min(10_000, n - done);
    const outcomes = await mgr.submitMany(Array.from({ length: k }, () => ({ jobspec: testJobspec(), ...(urgency === undefined ? {} : { opts: { urgency } }) })));
    if (urgency === undefined) await Promise.all(outcomes.map((o) => ("id" in o ? mgr.wait(o.id as never) : undefined)));
    done += k;
    process.stderr.write(`  ${done}/${n}\n`);
  }
}

export async function main(args: string[]): Promise<void> {
  const inactive = Number(arg(args, "inactive", "100000"));
  const pending = Number(arg(args, "pending", "10000"));
  const repri = Number(arg(args, "reprioritize", "100000"));
  const dir = mkdtempSync(join(tmpdir(), "jobtap-restart-"));
  try {
    const statedir = join(dir, "state");
    const cached = await cachedStore(inactive, pending, args.includes("--fresh"));
    cpSync(cached, statedir, { recursive: true });
    syncFiles(statedir);
    let mgr: JobManager;

    const c0 = process.cpuUsage();
    const t0 = performance.now();
    mgr = await open(statedir);
    const openMs = performance.now() - t0;
    const c1 = process.cpuUsage(c0);
    await mgr.submit(testJobspec(), { urgency: 0 });
    const firstMs = performance.now() - t0;
    (globalThis as { gc?: () => void }).gc?.();
    const mem = process.memoryUsage();
    // Settled: what stays once the open's garbage is collected and its background work
    // (writing the restart's events, folding them into the stored eventlogs) is done.
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    collectGarbage();
    const settled = process.memoryUsage();
    // One look at every waiting job, as a constraint listing, the dashboard or `why` makes.
    const tLook = performance.now();
    for (const j of mgr.jobs({ states: ["DEPEND", "PRIORITY", "SCHED"] })) {
      mgr.jobAd(j.id);
      await mgr.why(j.id);
    }
    const lookMs = performance.now() - tLook;
    collectGarbage();
    const looked = process.memoryUsage();
    const counts = { jobs: mgr.jobs({ states: ["DEPEND", "PRIORITY", "SCHED", "RUN", "CLEANUP"] }).length + storedInactive(statedir) };
    const oldIds = firstIds(statedir, 5);
    await mgr.close();
    process.stderr.write(`open_ms ${Math.round(openMs)} rss ${Math.round(mem.rss / 2 ** 20)} MB heap ${Math.round(mem.heapUsed / 2 ** 20)} MB\n`);

    writeFileSync(join(dir, "d.toml"), "[resources]\ncores = 100000\n[job-manager]\ninactive-num-limit = 10000000\n");
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.NODE_OPTIONS;
    const t1 = performance.now();
    const child = spawn(process.execPath, [BIN, "daemon", "--statedir", statedir, "--config", join(dir, "d.toml")], { env, stdio: "ignore" });
    const c = connectDaemon(join(statedir, "jobtap.sock"));
    let daemonMs = -1;
    let daemonCpuMs = -1;
    let daemonReadyRssMb = -1;
    // A million jobs take the daemon tens of seconds on a loaded machine: wait up to 5 minutes.
    while (performance.now() - t1 < 300_000) {
      try {
        await c.call("ping", {});
        daemonMs = performance.now() - t1;
        daemonCpuMs = cpuMsOf(child.pid!);
        daemonReadyRssMb = rssMbOf(child.pid!);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    if (daemonMs < 0) throw new Error("the daemon did not answer within 5 minutes");
    const infoSamples: number[] = [];
    for (const id of oldIds) {
      const t = performance.now();
      await c.call("info", { id });
      infoSamples.push(performance.now() - t);
    }
    infoSamples.sort((a, b) => a - b);
    c.close();
    const sock = join(statedir, "jobtap.sock");
    const jobsMs = await firstLineMs(env, sock, ["jobs"]);
    const jobsAllMs = await firstLineMs(env, sock, ["jobs", "-a"]);
    const daemonRssMb = rssMbOf(child.pid!);
    // Every waiting job's ad, through a constraint no job matches.
    await runToEnd(env, sock, ["jobs", "--constraint", "JobStatus == 42"]);
    const daemonLookRssMb = rssMbOf(child.pid!);
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    const figures = {
      bench: "restart",
      inactive,
      pending,
      jobs_after_reopen: counts.jobs,
      open_ms: Math.round(openMs),
      open_cpu_ms: Math.round((c1.user + c1.system) / 1000),
      first_submit_ms: Math.round(firstMs),
      rss_after_open_mb: Math.round(mem.rss / 2 ** 20),
      heap_after_open_mb: Math.round(mem.heapUsed / 2 ** 20),
      heap_total_after_open_mb: Math.round(mem.heapTotal / 2 ** 20),
      array_buffers_after_open_mb: Math.round(mem.arrayBuffers / 2 ** 20),
      rss_settled_mb: Math.round(settled.rss / 2 ** 20),
      heap_settled_mb: Math.round(settled.heapUsed / 2 ** 20),
      look_ms: Math.round(lookMs),
      rss_after_look_mb: Math.round(looked.rss / 2 ** 20),
      heap_after_look_mb: Math.round(looked.heapUsed / 2 ** 20),
      daemon_rss_ready_mb: daemonReadyRssMb,
      daemon_rss_mb: daemonRssMb,
      daemon_rss_after_look_mb: daemonLookRssMb,
      daemon_ready_ms: Math.round(daemonMs),
      daemon_ready_cpu_ms: daemonCpuMs,
      daemon_jobs_first_line_ms: Math.round(jobsMs),
      daemon_jobs_all_first_line_ms: Math.round(jobsAllMs),
      daemon_info_old_ms: Math.round(infoSamples[Math.floor(infoSamples.length / 2)]! * 10) / 10,
    };
    if (repri === 0) {
      console.log(JSON.stringify(figures));
      return;
    }
    process.stderr.write(`reprioritize: ${repri} pending\n`);
    const m2 = await createJobManager({ store: "memory", resources: { cores: 1 }, log: () => undefined, plugins: jobtapPlugins({ config: {} }) });
    await fill(m2, repri, 0);
    const samples: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      m2.port.reprioritizeAll();
      samples.push(performance.now() - t);
    }
    await m2.close();
    samples.sort((a, b) => a - b);
    const changed = await reprioritizeChanged(repri);
    console.log(JSON.stringify({
      ...figures,
      reprioritize_jobs: repri,
      reprioritize_ms_median: Math.round(samples[2]! * 10) / 10,
      reprioritize_ms_min: Math.round(samples[0]! * 10) / 10,
      reprioritize_changed_ms_median: Math.round(changed * 10) / 10,
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The statedir of a store of `inactive` finished and `pending` held jobs, built once per
 * (N, P, layout) under $TMPDIR/jobtap-restart-cache (a million jobs take minutes to build).
 */
async function cachedStore(inactive: number, pending: number, fresh: boolean): Promise<string> {
  const root = join(tmpdir(), "jobtap-restart-cache");
  const dir = join(root, `i${inactive}-p${pending}-layout${STORE_SCHEMA_VERSION}`);
  if (existsSync(dir) && !fresh) {
    // Built before clean shutdowns recorded `inactive_count` (the stored tier's size hint):
    // opened and closed once, as a site's store gets it at its next clean shutdown.
    if (!hasInactiveCount(dir)) await (await open(dir)).close();
    return dir;
  }
  rmSync(dir, { recursive: true, force: true });
  const building = `${dir}.building-${process.pid}`;
  mkdirSync(building, { recursive: true });
  // A store of the previous layout is opened and closed once (its marks are written: see
  // STORE_SCHEMA_VERSION) rather than built again; the old one is kept.
  const older = join(root, `i${inactive}-p${pending}-layout${STORE_SCHEMA_VERSION - 1}`);
  const migrate = existsSync(older) && !fresh;
  if (migrate) cpSync(older, building, { recursive: true });
  process.stderr.write(`${migrate ? "migrating" : "building"} ${inactive} inactive + ${pending} pending in ${dir}\n`);
  const mgr = await open(building);
  if (!migrate) {
    await fill(mgr, inactive);
    await fill(mgr, pending, 0);
  }
  await mgr.close();
  // The socket is not part of the store; a complete build only is renamed into place.
  rmSync(join(building, "jobtap.sock"), { force: true });
  renameSync(building, dir);
  return dir;
}

/** The store in `statedir` has the `inactive_count` mark of a clean shutdown. */
function hasInactiveCount(statedir: string): boolean {
  const db = new Database(join(statedir, "jobtap.db"), { readonly: true });
  try {
    return db.prepare("SELECT 1 FROM meta WHERE key = 'inactive_count'").get() !== undefined;
  } finally {
    db.close();
  }
}

/** The ids (f58) of the `n` oldest inactive jobs, from the store (no manager read). */
function firstIds(statedir: string, n: number): string[] {
  const db = new Database(join(statedir, "jobtap.db"), { readonly: true });
  try {
    return (db.prepare("SELECT id FROM inactive ORDER BY id LIMIT ?").pluck().safeIntegers().all(n) as bigint[]).map((id) => formatJobId(BigInt.asUintN(64, id) as JobId));
  } finally {
    db.close();
  }
}

/** How many inactive jobs the store holds. */
function storedInactive(statedir: string): number {
  const db = new Database(join(statedir, "jobtap.db"), { readonly: true });
  try {
    return db.prepare("SELECT count(*) FROM inactive").pluck().get() as number;
  } finally {
    db.close();
  }
}

/** How long the settled figures wait after the first submit. */
const SETTLE_MS = 2000;

/** A full GC, with or without --expose-gc (the flag set at run time reaches a new context). */
function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

/** A process's resident set in MB, from /proc (-1 where there is none). */
function rssMbOf(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? -1 : Math.round(Number(kb) / 1024);
  } catch {
    return -1;
  }
}

/** Ms from spawning `jobtap ARGS` against `sock` to its first line on stdout. */
function firstLineMs(env: NodeJS.ProcessEnv, sock: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...env, JOBTAP_SOCKET: sock }, stdio: ["ignore", "pipe", "inherit"] });
    let done = false;
    child.stdout.on("data", (d: Buffer) => {
      if (done || !d.includes(10)) return;
      done = true;
      resolve(performance.now() - t);
      child.kill("SIGTERM");
    });
    child.once("exit", () => (done ? undefined : reject(new Error(`jobtap ${args.join(" ")}: no line on stdout`))));
  });
}

/** Runs `jobtap ARGS` against the daemon at `sock` until it exits (status 0 expected). */
function runToEnd(env: NodeJS.ProcessEnv, sock: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...env, JOBTAP_SOCKET: sock }, stdio: ["ignore", "ignore", "inherit"] });
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`jobtap ${args.join(" ")}: exit status ${code}`))));
  });
}

/** A process's CPU time so far (user + system, ms), from /proc/PID/stat (clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** A plugin port whose job.priority.get answers a new priority at every call. */
function changingPriorities(): PluginPort {
  let k = 0;
  const priorityTopic = (t: string) => t === "job.state.priority" || t === "job.priority.get";
  return {
    matches: priorityTopic,
    callJob: (topic: string, _args: JobArgs) =>
      ({ handled: priorityTopic(topic) ? 1 : 0, out: priorityTopic(topic) ? { priority: 1 + ((k++ * 7919) % 1_000_003) } : {} }) as StackResult as never,
    notifyEvent: () => undefined,
    jobGone: () => undefined,
  };
}

/** Median of 3 reprioritize-all calls over `n` queued jobs whose priorities all change. */
async function reprioritizeChanged(n: number): Promise<number> {
  process.stderr.write(`reprioritize, priorities changing: ${n} queued\n`);
  const mgr = await createJobManager({ store: "memory", resources: { cores: 1 }, log: () => undefined, plugins: () => changingPriorities() });
  const spec = { ...testJobspec(), attributes: { system: { duration: 0, exec: { test: { run_duration: "1h" } } } } };
  for (let done = 0; done <= n; done += 10_000) await mgr.submitMany(Array.from({ length: Math.min(10_000, n + 1 - done) }, () => ({ jobspec: spec })));
  const samples: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    mgr.port.reprioritizeAll();
    samples.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 50));
  }
  await mgr.close();
  return samples.sort((a, b) => a - b)[1]!;
}


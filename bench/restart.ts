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
 * Last stdout line: the JSON figures.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createJobManager, type JobManager } from "../src/manager/manager.js";
import { jobtapPlugins } from "../plugins-builtin/index.js";
import { connectDaemon } from "../src/server/client.js";
import type { PluginPort, StackResult } from "../src/manager/port/port.js";
import type { JobArgs } from "../src/manager/port/records.js";
import { arg, testJobspec } from "./lib/common.js";

const BIN = [new URL("../bin/jobtap", import.meta.url), new URL("../../bin/jobtap", import.meta.url)].map((u) => fileURLToPath(u)).find((p) => existsSync(p))!;

const open = (statedir: string) =>
  createJobManager({ statedir, store: "sqlite", resources: { cores: 100_000 }, inactiveNumLimit: 10_000_000, log: () => undefined, plugins: jobtapPlugins({ config: {} }) });

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
    process.stderr.write(`building ${inactive} inactive + ${pending} pending\n`);
    let mgr = await open(statedir);
    await fill(mgr, inactive);
    await fill(mgr, pending, 0);
    await mgr.close();

    const c0 = process.cpuUsage();
    const t0 = performance.now();
    mgr = await open(statedir);
    const openMs = performance.now() - t0;
    const c1 = process.cpuUsage(c0);
    await mgr.submit(testJobspec(), { urgency: 0 });
    const firstMs = performance.now() - t0;
    const counts = { jobs: mgr.jobs({}).length };
    await mgr.close();

    writeFileSync(join(dir, "d.toml"), "[resources]\ncores = 100000\n[job-manager]\ninactive-num-limit = 10000000\n");
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.NODE_OPTIONS;
    const t1 = performance.now();
    const child = spawn(process.execPath, [BIN, "daemon", "--statedir", statedir, "--config", join(dir, "d.toml")], { env, stdio: "ignore" });
    const c = connectDaemon(join(statedir, "jobtap.sock"));
    let daemonMs = -1;
    let daemonCpuMs = -1;
    for (let i = 0; i < 3000; i++) {
      try {
        await c.call("ping", {});
        daemonMs = performance.now() - t1;
        daemonCpuMs = cpuMsOf(child.pid!);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    c.close();
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));

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
      bench: "restart",
      inactive,
      pending,
      jobs_after_reopen: counts.jobs,
      open_ms: Math.round(openMs),
      open_cpu_ms: Math.round((c1.user + c1.system) / 1000),
      first_submit_ms: Math.round(firstMs),
      daemon_ready_ms: Math.round(daemonMs),
      daemon_ready_cpu_ms: daemonCpuMs,
      reprioritize_jobs: repri,
      reprioritize_ms_median: Math.round(samples[2]! * 10) / 10,
      reprioritize_ms_min: Math.round(samples[0]! * 10) / 10,
      reprioritize_changed_ms_median: Math.round(changed * 10) / 10,
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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


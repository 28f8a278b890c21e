/**
 * `npm run bench -- http [--jobs N] [--batches B] [--throughput-jobs M]`: the REST API
 * against the Unix socket, and the cost of metrics, in one run.
 *
 * - rest_submit_per_s / socket_submit_per_s: B batches of N held jobs, each one request
 *   with `count: N` (`POST /api/v1/jobs` over a keep-alive connection, against `jobtap
 *   submit --cc 1-N` as a real process on the socket, as `bench cli` measures it); jobs
 *   acknowledged (durable) per second of wall time.
 * - rest_end_to_end_per_s / socket_end_to_end_per_s: N test-executor jobs (run_duration 0)
 *   from the submit until the last is inactive.
 * - throughput_metrics_ratio: `throughput --builtins` end-to-end jobs/s with the daemon's
 *   metrics attached, over the same without (bench/throughput.ts, M jobs, same process;
 *   median of R alternating rounds, `--rounds R`, default 5).
 * - throughput_cpu_us_per_job / throughput_metrics_cpu_us_per_job (the process's CPU per job)
 *   and throughput_main_us_per_job / throughput_metrics_main_us_per_job (the manager's thread
 *   alone, over all timed rounds of a run), medians over the same rounds, and throughput_metrics_main_cpu_ratio (off over on:
 *   comparable with the jobs/s ratio, and much less disturbed by other load on the machine).
 *
 * `--throughput-only` skips the REST part (the quick re-measure of the metrics ratio).
 *
 * The daemon runs on a temp statedir with `[daemon] http` on a free 127.0.0.1 port.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectDaemon, type DaemonClient } from "../src/server/client.js";
import { BIN, startDaemon, stopDaemon } from "./lib/daemon.js";
import { measure } from "./throughput.js";

const JOBSPEC = (system: Record<string, unknown>) => ({
  version: 1,
  resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
  tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
  attributes: { system: { duration: 0, ...system } },
});

function arg(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  const v = i < 0 ? fallback : Number(args[i + 1]);
  if (!(v > 0)) throw new Error(`bench http: --${name} needs a positive number`);
  return v;
}

/** Entry point for bench/run.mjs. */
export async function main(argv: string[]): Promise<void> {
  const n = arg(argv, "jobs", 10_000);
  const batches = arg(argv, "batches", 3);
  const result: Record<string, number> = argv.includes("--throughput-only") ? {} : await restVsSocket(n, batches);
  Object.assign(result, await metricsCost(argv));
  process.stdout.write(JSON.stringify(result) + "\n");
}

/** The REST API against the Unix socket: submitted/s and end-to-end/s of each. */
async function restVsSocket(n: number, batches: number): Promise<Record<string, number>> {
  const statedir = mkdtempSync(join(tmpdir(), "jobtap-bench-http-"));
  const port = await freePort();
  const env = { ...process.env, JOBTAP_STATEDIR: statedir, JOBTAP_SOCKET: join(statedir, "jobtap.sock") };
  const daemon = await startDaemon(statedir, env, `[daemon]\nhttp = "127.0.0.1:${port}"\nhttp-rate-limit = 1000000\n[resources]\ncores = 100000\n`);
  const client = connectDaemon(env.JOBTAP_SOCKET);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const result: Record<string, number> = { jobs: n, batches };
  try {
    const token = (await client.call("token.create", {})).token;
    const post = (body: unknown) => postJson(agent, port, token, "/api/v1/jobs", body);
    const cc = `1-${n}`;
    result.socket_submit_per_s = await rate(n * batches, async () => {
      for (let b = 0; b < batches; b++) await jobtap(env, ["submit", "--urgency", "0", "--cc", cc, "true"]);
    });
    await drain(client);
    result.rest_submit_per_s = await rate(n * batches, async () => {
      for (let b = 0; b < batches; b++) await post({ jobspecs: [JOBSPEC({})], count: n, urgency: 0 });
    });
    await drain(client);
    process.stderr.write(`submit: socket ${result.socket_submit_per_s}/s, rest ${result.rest_submit_per_s}/s\n`);
    result.socket_end_to_end_per_s = await rate(n, async () => {
      await jobtap(env, ["submit", "--cc", cc, "--setattr", "exec.test.run_duration=0", "true"]);
      await untilIdle(client);
    });
    result.rest_end_to_end_per_s = await rate(n, async () => {
      await post({ jobspecs: [JOBSPEC({ exec: { test: { run_duration: 0 } } })], count: n });
      await untilIdle(client);
    });
    process.stderr.write(`end to end: socket ${result.socket_end_to_end_per_s}/s, rest ${result.rest_end_to_end_per_s}/s\n`);
    result.rest_over_socket_submit = ratio(result.rest_submit_per_s, result.socket_submit_per_s);
    result.rest_over_socket_end_to_end = ratio(result.rest_end_to_end_per_s, result.socket_end_to_end_per_s);
  } finally {
    agent.destroy();
    client.close();
    await stopDaemon(daemon);
    rmSync(statedir, { recursive: true, force: true });
  }
  return result;
}

/** `throughput --builtins` with metrics on against off, in alternating rounds. */
async function metricsCost(argv: string[]): Promise<Record<string, number>> {
  const m = arg(argv, "throughput-jobs", 10_000);
  const settings = { n: m, cores: "", sync: "normal" as const, builtins: true };
  // Alternating rounds, medians: the machine's load drifts during a run.
  const rounds = arg(argv, "rounds", 5);
  const offs: Array<Record<string, number | string>> = [];
  const ons: Array<Record<string, number | string>> = [];
  for (let r = 0; r < rounds; r++) {
    offs.push(await measure(settings));
    ons.push(await measure({ ...settings, metrics: true }));
  }
  const med = (rs: typeof offs, key: string) => median(rs.map((x) => Number(x[key])));
  const result: Record<string, number> = { throughput_rounds: rounds };
  result.throughput_builtins_per_s = med(offs, "end_to_end_per_s");
  result.throughput_builtins_metrics_per_s = med(ons, "end_to_end_per_s");
  result.throughput_metrics_ratio = ratio(result.throughput_builtins_metrics_per_s, result.throughput_builtins_per_s);
  result.throughput_cpu_us_per_job = med(offs, "cpu_us_per_job");
  result.throughput_metrics_cpu_us_per_job = med(ons, "cpu_us_per_job");
  result.throughput_main_us_per_job = med(offs, "main_thread_us_per_job_timed");
  result.throughput_metrics_main_us_per_job = med(ons, "main_thread_us_per_job_timed");
  result.throughput_metrics_main_cpu_ratio = ratio(result.throughput_main_us_per_job, result.throughput_metrics_main_us_per_job);
  return result;
}

function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)]!;
}

function ratio(a: number | undefined, b: number | undefined): number {
  return Math.round(((a ?? 0) / (b ?? 1)) * 1000) / 1000;
}

async function rate(jobs: number, run: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await run();
  return Math.round(jobs / ((performance.now() - t0) / 1000));
}

function postJson(agent: Agent, port: number, token: string, path: string, body: unknown): Promise<unknown> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method: "POST", agent, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(text) } }, (res) => {
      let data = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (data += d));
      res.on("end", () => (res.statusCode === 200 ? resolve(JSON.parse(data)) : reject(new Error(`POST ${path}: ${res.statusCode} ${data.slice(0, 300)}`))));
    });
    req.on("error", reject);
    req.end(text);
  });
}

function jobtap(env: NodeJS.ProcessEnv, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [BIN, ...args], { env, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    c.stderr.on("data", (d) => (err += d));
    c.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`jobtap ${args.join(" ")}: ${err}`))));
  });
}

/** Cancels the held jobs and waits until none is active. */
async function drain(client: DaemonClient): Promise<void> {
  const { jobs } = await client.call("list", { states: ["SCHED"] });
  if (jobs.length > 0) await client.call("cancel", { ids: jobs.map((j) => j.id), note: "bench cleanup" });
  await untilIdle(client);
}

async function untilIdle(client: DaemonClient): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const { jobs } = await client.call("list", { states: ["DEPEND", "PRIORITY", "SCHED", "RUN", "CLEANUP"], limit: 1 });
    if (jobs.length === 0) return;
    if (Date.now() > deadline) throw new Error("bench http: jobs did not finish within 300 s");
    await new Promise((r) => setTimeout(r, 10));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

/**
 * `npm run bench -- listing [--jobs N] [--held H] [--json]`: `jobtap jobs -a` over a big store.
 *
 * A daemon runs as its own process on a temp statedir; N jobs (default 100,000) are
 * submitted through its socket and run to INACTIVE by the test executor, then H more
 * (default 0) are submitted held, so they stay active (SCHED) and are listed too. Then `jobtap jobs
 * -a` (or `--json`) runs as a real process, its output counted and thrown away, while this
 * process pings the daemon every 10 ms: a ping's latency is how long the listing kept
 * every other client of the daemon waiting.
 *
 * Prints {"jobs", "held", "listed", "list_wall_ms", "list_cpu_ms" and "list_peak_rss_kib" (the CLI
 * process's own), "first_byte_ms", "bytes", "ping_max_ms", "ping_p99_ms", "pings_failed",
 * "daemon_rss_kib_before"/"_after" (the daemon's VmRSS)} as the last stdout line.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectDaemon, type DaemonClient } from "../src/server/client.js";
import { arg } from "./lib/common.js";
import { BIN, startDaemon, stopDaemon } from "./lib/daemon.js";

/** A process's resident set, in KiB, from /proc. */
function rssKib(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : 0;
}

/** Submits `n` jobs that run for 0 s in `--cc` batches of 10,000 and waits until none is active. */
const JOBSPEC = {
  version: 1,
  resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
  tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
  attributes: { system: { duration: 0, exec: { test: { run_duration: "0s" } } } },
};

async function fill(client: DaemonClient, n: number): Promise<void> {
  for (let done = 0; done < n; ) {
    const count = Math.min(10_000, n - done);
    await client.call("submit", { jobspecs: [JOBSPEC], count });
    done += count;
    process.stderr.write(`listing: ${done} jobs submitted\n`);
  }
  for (;;) {
    const { jobs } = await client.call("list", { states: ["DEPEND", "PRIORITY", "SCHED", "RUN", "CLEANUP"], limit: 1 });
    if (jobs.length === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface ListRun {
  wall_ms: number;
  cpu_ms: number;
  peak_rss_kib: number;
  first_byte_ms: number;
  bytes: number;
  lines: number;
}

/** Reports the process's own CPU time and peak RSS on fd 3 as it exits (loaded with --import). */
const USAGE_HOOK =
  "data:text/javascript," +
  encodeURIComponent(
    'import { writeSync } from "node:fs"; process.on("exit", () => { const u = process.resourceUsage(); ' +
      'writeSync(3, JSON.stringify({ cpu: (u.userCPUTime + u.systemCPUTime) / 1000, rss: u.maxRSS }) + "\\n"); });',
  );

/** Runs `jobtap jobs -a [--json]` as its own process: wall clock, its CPU and peak RSS, output size. */
function listOnce(env: NodeJS.ProcessEnv, json: boolean): Promise<ListRun> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const args = [BIN, "jobs", "-a", ...(json ? ["--json"] : [])];
    const c = spawn(process.execPath, ["--import", USAGE_HOOK, ...args], { env, stdio: ["ignore", "pipe", "pipe", "pipe"] });
    let first = 0;
    let bytes = 0;
    let lines = 0;
    let usage = "";
    let err = "";
    c.stdout!.on("data", (d: Buffer) => {
      if (first === 0) first = performance.now() - t0;
      bytes += d.length;
      for (let i = d.indexOf(10); i >= 0; i = d.indexOf(10, i + 1)) lines++;
    });
    c.stderr!.on("data", (d) => (err += d.toString()));
    (c.stdio[3] as NodeJS.ReadableStream).on("data", (d) => (usage += d.toString()));
    c.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`jobtap jobs -a: exit ${code}: ${err}`));
      const u = JSON.parse(usage || "{}") as { cpu?: number; rss?: number };
      resolve({ wall_ms: Math.round(performance.now() - t0), cpu_ms: Math.round(u.cpu ?? 0), peak_rss_kib: u.rss ?? 0, first_byte_ms: Math.round(first), bytes, lines });
    });
  });
}

/**
 * A separate process that pings the daemon every 10 ms until its stdin closes, then prints
 * the latencies: in this process, the listing's output handling would delay the pings too.
 */
const PINGER = `
import { connectDaemon } from ${JSON.stringify(new URL("../src/server/client.js", import.meta.url).href)};
const client = connectDaemon(process.argv[1]);
const lat = [];
let running = true;
process.stdin.on("end", () => (running = false)).resume();
await client.call("ping", {});
process.stdout.write("ready\\n");
let errors = 0;
while (running) {
  const t = performance.now();
  // A daemon that stalls past its keep-alive timeout resets the idle connection: a failed
  // ping counts with the time it took.
  await client.call("ping", {}).catch(() => errors++);
  lat.push(performance.now() - t);
  await new Promise((r) => setTimeout(r, 10));
}
client.close();
process.stdout.write(JSON.stringify({ lat, errors }) + "\\n");
`;

/** Starts the pinger; `stop()` resolves with its latencies, sorted, and its failed pings. */
async function pinger(socket: string): Promise<{ stop: () => Promise<{ lat: number[]; errors: number }> }> {
  const c = spawn(process.execPath, ["--input-type=module", "-e", PINGER, socket], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  c.stdout!.on("data", (d) => (out += d.toString()));
  await new Promise<void>((resolve, reject) => {
    c.stdout!.on("data", () => out.includes("ready") && resolve());
    c.on("exit", (code) => reject(new Error(`bench listing: the pinger exited (${code})`)));
  });
  return {
    stop: async () => {
      const exited = c.exitCode !== null ? Promise.resolve() : new Promise((r) => c.on("exit", r));
      c.stdin!.end();
      await exited;
      const r = JSON.parse(out.slice(out.indexOf("\n") + 1)) as { lat: number[]; errors: number };
      r.lat.sort((a, b) => a - b);
      return r;
    },
  };
}

/** Entry point for bench/run.mjs. */
export async function main(argv: string[]): Promise<void> {
  const n = Number(arg(argv, "jobs", "100000"));
  const held = Number(arg(argv, "held", "0"));
  const json = argv.includes("--json");
  const dir = mkdtempSync(join(tmpdir(), "jobtap-bench-listing-"));
  const socket = join(dir, "jobtap.sock");
  const env = { ...process.env, JOBTAP_SOCKET: socket, JOBTAP_STATEDIR: dir };
  const daemon = await startDaemon(dir, env);
  const client = connectDaemon(socket);
  try {
    await fill(client, n);
    for (let done = 0; done < held; done += 10_000) {
      await client.call("submit", { jobspecs: [JOBSPEC], count: Math.min(10_000, held - done), urgency: 0 });
    }
    const rss0 = rssKib(daemon.pid!);
    const ping = await pinger(socket);
    const run = await listOnce(env, json);
    const { lat, errors } = await ping.stop();
    const result = {
      jobs: n,
      held,
      format: json ? "json" : "table",
      ...(json ? {} : { listed: run.lines - 1 }),
      list_wall_ms: run.wall_ms,
      list_cpu_ms: run.cpu_ms,
      list_peak_rss_kib: run.peak_rss_kib,
      first_byte_ms: run.first_byte_ms,
      bytes: run.bytes,
      ping_max_ms: Math.round(lat.at(-1) ?? 0),
      ping_p99_ms: Math.round(lat[Math.floor(lat.length * 0.99)] ?? 0),
      pings: lat.length,
      pings_failed: errors,
      daemon_rss_kib_before: rss0,
      daemon_rss_kib_after: rssKib(daemon.pid!),
    };
    process.stdout.write(JSON.stringify(result) + "\n");
  } finally {
    client.close();
    await stopDaemon(daemon);
    rmSync(dir, { recursive: true, force: true });
  }
}

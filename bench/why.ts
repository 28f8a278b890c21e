/**
 * `npm run bench -- why [--pending N] [--slots S] [--listed L] [--ab-jobs T] [--pairs P] [--no-ab | --ab-only] [--ab-same]` (issue 36).
 *
 * A daemon as its own process with S one-core slots (default 64): S jobs run for an hour and
 * N more (default 100,000) wait in SCHED behind them. Then:
 * - `why_daemon_ms`: `job why` of the LAST queued job (the longest walk of the queue), as
 *   the daemon's share of a socket call: the median round trip of `why` minus the median
 *   round trip of `ping` (20 calls each, alternating);
 * - `reason_list_ms`: `jobtap jobs -c L -o '{id} {reason}'` (L default 10,000 pending jobs)
 *   as a real process, end to end (wall time from spawn to exit); `plain_list_ms`: the same
 *   listing with `{id} {name}` (no reasons) in the same run, for comparison;
 * - `nobody_asks_*` ("no effect on `throughput --builtins` when nobody asks"): the A/B of
 *   bench/lib/why-ab.ts in this process after the daemon stopped — the default builtins as
 *   shipped against the same with no `job.explain` handler registered (the bench-only
 *   `withoutExplain`), each side its own process, P timed pairs (default 8) of alternating rounds of T jobs (default
 *   10,000): the median ratio of end-to-end jobs/s (on / off), each side's median jobs/s,
 *   CPU µs per job (process; main thread alone) and their ratios, and the load average at
 *   the start and end.
 * `--ab-only` runs just the A/B; `--no-ab` skips it; `--ab-same` runs it as an A/A (both
 * sides as shipped): how far apart two identical sides come out on this machine now.
 * Prints one JSON object as the last stdout line.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectDaemon, type DaemonClient } from "../src/server/client.js";
import { arg } from "./lib/common.js";
import { BIN, startDaemon, stopDaemon } from "./lib/daemon.js";
import { nobodyAsks } from "./lib/why-ab.js";

const jobspec = (runDuration: string) => ({
  version: 1,
  resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
  tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
  attributes: { system: { duration: 0, exec: { test: { run_duration: runDuration } } } },
});

async function submit(client: DaemonClient, n: number): Promise<string> {
  let last = "";
  for (let done = 0; done < n; ) {
    const count = Math.min(10_000, n - done);
    const r = await client.call("submit", { jobspecs: [jobspec("1h")], count });
    last = r.ids.at(-1)!;
    done += count;
    process.stderr.write(`why: ${done} jobs submitted\n`);
  }
  return last;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function whyDaemonMs(client: DaemonClient, id: string): Promise<{ why: number; ping: number }> {
  const whys: number[] = [];
  const pings: number[] = [];
  for (let i = 0; i < 20; i++) {
    let t = performance.now();
    await client.call("why", { id });
    whys.push(performance.now() - t);
    t = performance.now();
    await client.call("ping", {});
    pings.push(performance.now() - t);
  }
  return { why: median(whys), ping: median(pings) };
}

function listMs(socket: string, limit: number, format = "{id} {reason}"): Promise<{ ms: number; lines: number }> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const c = spawn(process.execPath, [BIN, "jobs", "-n", "-c", String(limit), "-o", format], {
      env: { ...process.env, JOBTAP_SOCKET: socket },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let lines = 0;
    c.stdout.on("data", (d: Buffer) => (lines += d.toString().split("\n").length - 1));
    c.on("error", reject);
    c.on("close", () => resolve({ ms: performance.now() - t, lines }));
  });
}

export async function main(args: string[]): Promise<void> {
  const abJobs = Number(arg(args, "ab-jobs", "10000"));
  const pairs = Number(arg(args, "pairs", "8"));
  const result: Record<string, unknown> = args.includes("--ab-only") ? {} : await daemonFigures(args);
  if (!args.includes("--no-ab")) Object.assign(result, await nobodyAsks(abJobs, pairs, args.includes("--ab-same")));
  console.log(JSON.stringify(result));
}

/** `job why`'s daemon time and the listings, on a daemon with N queued jobs. */
async function daemonFigures(args: string[]): Promise<Record<string, unknown>> {
  const pending = Number(arg(args, "pending", "100000"));
  const slots = Number(arg(args, "slots", "64"));
  const listed = Number(arg(args, "listed", "10000"));
  const dir = mkdtempSync(join(tmpdir(), "jobtap-bench-why-"));
  const toml = `[resources]\ncores = ${slots}\nslots = [{ count = ${slots}, cores = 1 }]\n[limits]\njobs-per-user = ${2 * (slots + pending)}\n`;
  const daemon = await startDaemon(dir, { ...process.env }, toml);
  const socket = join(dir, "jobtap.sock");
  const client = connectDaemon(socket);
  const result: Record<string, unknown> = { pending, slots };
  try {
    const last = await submit(client, slots + pending);
    const rtt = await whyDaemonMs(client, last);
    Object.assign(result, { why_daemon_ms: rtt.why - rtt.ping, why_rtt_ms: rtt.why, ping_rtt_ms: rtt.ping });
    const ex = await client.call("why", { id: last });
    result.why_sample = ex.reasons.map((r) => r.text);
    const list = await listMs(socket, listed);
    Object.assign(result, { reason_list_ms: list.ms, reason_list_lines: list.lines });
    // The same listing without reasons: what the listing itself costs.
    result.plain_list_ms = (await listMs(socket, listed, "{id} {name}")).ms;
  } finally {
    client.close();
    await stopDaemon(daemon);
    rmSync(dir, { recursive: true, force: true });
  }
  return result;
}

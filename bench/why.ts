/**
 * `npm run bench -- why [--pending N] [--slots S] [--listed L] [--jobs T] [--no-throughput]` (issue 36).
 *
 * A daemon as its own process with S one-core slots (default 64): S jobs run for an hour and
 * N more (default 100,000) wait in SCHED behind them. Then:
 * - `why_daemon_ms`: `job why` of the LAST queued job (the longest walk of the queue), as
 *   the daemon's share of a socket call: the median round trip of `why` minus the median
 *   round trip of `ping` (20 calls each, alternating);
 * - `reason_list_ms`: `jobtap jobs -c L -o '{id} {reason}'` (L default 10,000 pending jobs)
 *   as a real process, end to end (wall time from spawn to exit); `plain_list_ms`: the same
 *   listing with `{id} {name}` (no reasons) in the same run, for comparison;
 * - `throughput_builtins_per_s` and `throughput_builtins_per_s_main`: `throughput --builtins
 *   only --jobs T` (default 10,000) of this build and of /work/main's build (null if absent), run one after
 *   the other in this run: nobody asks why there, so the figures should match.
 * Prints one JSON object as the last stdout line.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectDaemon, type DaemonClient } from "../src/server/client.js";
import { arg } from "./lib/common.js";
import { BIN, startDaemon, stopDaemon } from "./lib/daemon.js";

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

/** `throughput --builtins only` of a build's dist; its end-to-end rate. */
function throughput(root: string, jobs: string): number | null {
  const run = join(root, "bench", "run.mjs");
  if (!existsSync(join(root, "dist", "bench", "throughput.js"))) return null;
  if (!existsSync(run)) return null;
  const r = spawnSync(process.execPath, [run, "throughput", "--builtins", "only", "--jobs", jobs], { encoding: "utf8", cwd: root });
  const last = r.stdout.trim().split("\n").at(-1) ?? "{}";
  const out = JSON.parse(last) as Record<string, number>;
  return out.builtins_end_to_end_per_s ?? out.end_to_end_per_s ?? null;
}

export async function main(args: string[]): Promise<void> {
  const pending = Number(arg(args, "pending", "100000"));
  const slots = Number(arg(args, "slots", "64"));
  const listed = Number(arg(args, "listed", "10000"));
  const tjobs = arg(args, "jobs", "10000");
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
  // dist/bench/why.js → the repository's root.
  if (args.includes("--no-throughput")) return void console.log(JSON.stringify(result));
  const here = fileURLToPath(new URL("../..", import.meta.url));
  result.throughput_builtins_per_s = throughput(here, tjobs);
  result.throughput_builtins_per_s_main = throughput("/work/main", tjobs);
  console.log(JSON.stringify(result));
}

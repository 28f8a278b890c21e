/**
 * `npm run bench -- cli [--jobs N] [--batches B]`: the daemon measured from the outside.
 *
 * - submit_per_s: `jobtap submit --cc 1-N` run as a real process (process start included),
 *   B times; jobs acknowledged (durable) divided by the wall time of those runs.
 * - end_to_end_per_s: N jobs with the test executor (run_duration 0) submitted in one
 *   `--cc` batch, from the start of the submit until the last job is inactive.
 *
 * - submit_process_ms: the median wall clock of one `jobtap submit` of one held job as a whole
 *   process (start, connect, submit, exit), over `--processes P` runs (default 21);
 *   node_process_ms is the median of bare `node -e ""` the same way, the floor under it;
 *   submit_to_node_ratio is the one over the other (issue 41's goal: at most 1.3). The two
 *   run in turn, one of each at a time, so a change in the machine's load touches both.
 *
 * The daemon runs as its own process on a temp statedir with a large simulated pool, as
 * Flux's throughput.py runs against a big instance: the point is the manager and the
 * socket path, not this machine's core count. Progress goes to stderr; the last stdout
 * line is the JSON result.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectDaemon, type DaemonClient } from "../src/server/client.js";
import { BIN, startDaemon, stopDaemon } from "./lib/daemon.js";


interface BenchArgs {
  jobs: number;
  batches: number;
  processes: number;
}

function parse(args: string[]): BenchArgs {
  const out: BenchArgs = { jobs: 10_000, batches: 3, processes: 21 };
  for (let i = 0; i < args.length; i += 2) {
    const v = Number(args[i + 1]);
    if (args[i] === "--jobs" && v > 0) out.jobs = v;
    else if (args[i] === "--batches" && v > 0) out.batches = v;
    else if (args[i] === "--processes" && v > 0) out.processes = v;
    else throw new Error(`bench cli: unknown argument ${args[i]} (use --jobs N --batches B --processes P)`);
  }
  return out;
}

/** Runs `jobtap ARGS`; resolves with stdout, rejects on a non-zero exit. */
function jobtap(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
  return run(env, process.execPath, [BIN, ...args]);
}

/** The median wall clock, in ms to 0.1, of `n` runs of `a` and of `b`, taken in turn (after one warm-up each). */
async function pairedMedianMs(n: number, a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<[number, number]> {
  const msA: number[] = [];
  const msB: number[] = [];
  await a();
  await b();
  for (let i = 0; i < n; i++) {
    msA.push(await timed(a));
    msB.push(await timed(b));
  }
  return [median(msA), median(msB)];
}

async function timed(once: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await once();
  return performance.now() - t0;
}

function median(ms: number[]): number {
  const sorted = [...ms].sort((x, y) => x - y);
  return Math.round(sorted[Math.floor(sorted.length / 2)]! * 10) / 10;
}

/** Runs a process; resolves with stdout, rejects on a non-zero exit. */
function run(env: NodeJS.ProcessEnv, file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = spawn(file, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    c.stdout.on("data", (d) => (out += d.toString()));
    c.stderr.on("data", (d) => (err += d.toString()));
    c.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`${file} ${args.join(" ")}: ${err}`))));
  });
}

async function activeCount(client: DaemonClient): Promise<number> {
  const { jobs } = await client.call("list", { states: ["DEPEND", "PRIORITY", "SCHED", "RUN", "CLEANUP"], limit: 1 });
  return jobs.length;
}

/** Entry point for bench/run.mjs. */
export async function main(argv: string[]): Promise<void> {
  const args = parse(argv);
  const statedir = mkdtempSync(join(tmpdir(), "jobtap-bench-cli-"));
  const env = { ...process.env, JOBTAP_STATEDIR: statedir, JOBTAP_SOCKET: join(statedir, "jobtap.sock") };
  const daemon = await startDaemon(statedir, env);
  const client = connectDaemon(env.JOBTAP_SOCKET);
  try {
    // Held jobs (urgency 0) stay in SCHED: the submit figure measures submission alone.
    const cc = `1-${args.jobs}`;
    let submitted = 0;
    const t0 = performance.now();
    for (let b = 0; b < args.batches; b++) {
      const out = await jobtap(env, ["submit", "--urgency", "0", "--cc", cc, "true"]);
      submitted += out.trim().split("\n").length;
      process.stderr.write(`submit batch ${b + 1}/${args.batches}: ${submitted} jobs\n`);
    }
    const submitPerS = submitted / ((performance.now() - t0) / 1000);
    await client.call("cancel", { ids: await heldIds(client), note: "bench cleanup" });
    await until(async () => (await activeCount(client)) === 0);

    const t1 = performance.now();
    await jobtap(env, ["submit", "--cc", cc, "--setattr", "exec.test.run_duration=0", "true"]);
    await until(async () => (await activeCount(client)) === 0);
    const e2ePerS = args.jobs / ((performance.now() - t1) / 1000);
    process.stderr.write(`end to end: ${args.jobs} jobs\n`);

    const [submitMs, nodeMs] = await pairedMedianMs(
      args.processes,
      () => jobtap(env, ["submit", "--urgency", "0", "true"]),
      () => run(env, process.execPath, ["-e", ""]),
    );
    process.stderr.write(`one submit process: ${submitMs} ms (node alone ${nodeMs} ms)\n`);
    console.log(
      JSON.stringify({
        submit_per_s: Math.round(submitPerS),
        end_to_end_per_s: Math.round(e2ePerS),
        submit_process_ms: submitMs,
        node_process_ms: nodeMs,
        submit_to_node_ratio: Math.round((submitMs / nodeMs) * 100) / 100,
        jobs: args.jobs,
        batches: args.batches,
        processes: args.processes,
      }),
    );
  } finally {
    client.close();
    await stopDaemon(daemon);
    rmSync(statedir, { recursive: true, force: true });
  }
}

async function heldIds(client: DaemonClient): Promise<string[]> {
  const { jobs } = await client.call("list", { states: ["SCHED"] });
  return jobs.map((j) => j.id);
}

async function until(cond: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 300_000;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error("bench cli: jobs did not finish within 300 s");
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * `npm run bench -- fetch [--jobs N] [--slots S] [--hooks H]` (defaults 600, 16, 1,000)
 *
 * Issue 14: fetched jobs started per second with trivial hooks on S one-core slots (SQLite
 * store, every default builtin, real processes). FETCH_WORK always has work (`Cmd =
 * "/bin/true"`), REPLY_FETCH and JOB_EXIT read their stdin and exit; FetchWorkDelay is 0 when
 * a slot's claim is idle, so each slot fetches again as soon as its job has ended. The rate
 * is counted from the first `start` to the N-th. Each fetched job costs four process
 * spawns (FETCH_WORK, REPLY_FETCH, the job, JOB_EXIT), so beside it the same run measures
 * the hook runner's own spawn rate: H runs of /bin/true with 1 KB of stdin, 16 in flight.
 *
 * Last stdout line: {"slots", "jobs", "fetched_jobs_started_per_s", "hook_spawns_per_s",
 * "spawns_per_fetched_job", "ratio"} where ratio = fetched jobs/s × 4 ÷ hook spawns/s (1.0:
 * the fetch path costs no more than its spawns).
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { HookRunner, hookSucceeded } from "../src/hooks/index.js";
import { createJobManager } from "../src/manager/manager.js";
import { type JobtapHost } from "../src/plugins/index.js";
import { jobtapPlugins } from "../plugins-builtin/index.js";
import { arg } from "./lib/common.js";

const SPAWNS_PER_JOB = 4;

function hookScript(dir: string, name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** Fetched jobs started per second until `n` have started. */
async function fetchRate(dir: string, n: number, slots: number): Promise<number> {
  const conf = {
    keyword: "BENCH",
    fetch_work_delay: 'ifThenElse(State == "Claimed" && Activity == "Idle", 0, 1)',
    hooks: {
      BENCH: {
        fetch_work: hookScript(dir, "fetch_work", `cat > /dev/null\necho 'Cmd = "/bin/true"'`),
        reply_fetch: hookScript(dir, "reply_fetch", "cat > /dev/null"),
        job_exit: hookScript(dir, "job_exit", "cat > /dev/null"),
      },
    },
  };
  let host: JobtapHost | undefined;
  const factory = jobtapPlugins({ config: {} });
  const mgr = await createJobManager({
    statedir: join(dir, "state"),
    store: "sqlite",
    resources: { cores: slots, gpus: 0, memory: slots * 2 ** 30 },
    slots: [{ count: slots, cores: 1 }],
    plugins: async (m) => (host = await factory(m)),
  });
  let started = 0;
  let first = 0;
  let last = 0;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((r) => (done = r));
  mgr.on("event", (j) => {
    if (j.entry.name !== "start") return;
    started++;
    if (started === 1) first = performance.now();
    if (started === n) {
      last = performance.now();
      done();
    }
    if (started % 100 === 0) process.stderr.write(`fetch: ${started} fetched jobs started\n`);
  });
  await host!.load("condor-fetch", conf);
  await finished;
  host!.remove("condor-fetch");
  await new Promise((r) => setTimeout(r, 1500)); // hooks and jobs in flight are reaped
  await mgr.close();
  return (n - 1) / ((last - first) / 1000);
}

/** The hook runner's spawn rate: `n` runs of /bin/true with 1 KB of stdin, 16 in flight. */
async function spawnRate(n: number): Promise<number> {
  const runner = new HookRunner({ maxInFlight: 16 });
  const stdin = Buffer.alloc(1024, "A = 1\n");
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: n }, () => runner.run({ path: "/bin/true", stdin })));
  const secs = (performance.now() - t0) / 1000;
  await runner.close();
  if (!results.every(hookSucceeded)) throw new Error("a /bin/true hook failed");
  return n / secs;
}

/** The bench entry point (see the header for the flags). */
export async function main(args: string[]): Promise<void> {
  const n = Number(arg(args, "jobs", "600"));
  const slots = Number(arg(args, "slots", "16"));
  const hooks = Number(arg(args, "hooks", "1000"));
  const dir = mkdtempSync(join(tmpdir(), "jobtap-bench-fetch-"));
  try {
    const fetched = await fetchRate(dir, n, slots);
    process.stderr.write(`fetch: ${fetched.toFixed(1)} fetched jobs started/s\n`);
    const spawns = await spawnRate(hooks);
    process.stderr.write(`fetch: hook runner ${spawns.toFixed(0)} spawns/s\n`);
    const result = {
      slots,
      jobs: n,
      fetched_jobs_started_per_s: Math.round(fetched * 10) / 10,
      hook_spawns_per_s: Math.round(spawns),
      spawns_per_fetched_job: SPAWNS_PER_JOB,
      ratio: Math.round(((fetched * SPAWNS_PER_JOB) / spawns) * 1000) / 1000,
    };
    process.stdout.write(JSON.stringify(result) + "\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

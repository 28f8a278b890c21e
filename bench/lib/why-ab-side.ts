/**
 * One side of bench why's A/B (why-ab.ts), as its own process (forked with IPC), so the two
 * sides share no heap and no garbage collector: a manager with the default builtins on a
 * SQLite store, `--without-explain` for the side with no `job.explain` handler. It answers
 * `{ round: n }` with that round's end-to-end rate and CPU µs per job (this process: user +
 * system, the store's writer thread included; and the main thread's alone), and `{ close: true }` by closing and exiting.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import type { JobId } from "../../src/manager/base/ids.js";
import type { JobtapHost } from "../../src/plugins/index.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { testJobspec as jobspec } from "./common.js";

/** What a side answers for one round. */
export interface SideRound {
  rate: number;
  cpu: number;
  /** CPU µs per job of the main thread alone (the manager's; -1 without /proc). */
  main: number;
}

/** CPU µs of this process's main thread so far (/proc, 10 ms ticks); undefined without /proc. */
function mainThreadUs(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * 10_000;
  } catch {
    return undefined;
  }
}

async function open(withoutExplain: boolean, dir: string): Promise<JobManager> {
  let host: JobtapHost | undefined;
  const plugins = jobtapPlugins({ config: {}, withoutExplain });
  const mgr = await createJobManager({
    statedir: dir,
    store: "sqlite",
    sqliteSynchronous: "normal",
    plugins: async (port: Parameters<typeof plugins>[0]) => (host = await plugins(port)),
  });
  // The switch must do what it says, or the A/B compares nothing.
  if (host!.matches("job.explain") === withoutExplain) throw new Error(`bench why: job.explain handlers ${withoutExplain ? "still" : "not"} registered`);
  return mgr;
}

/** Submits n jobs at once and waits until every one is INACTIVE (as bench throughput). */
async function round(mgr: JobManager, n: number): Promise<SideRound> {
  const main0 = mainThreadUs();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const ids: Array<Promise<JobId>> = [];
  for (let i = 0; i < n; i++) ids.push(mgr.submit(jobspec()));
  const results = await Promise.all((await Promise.all(ids)).map((id) => mgr.wait(id)));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const main1 = mainThreadUs();
  const main = main0 === undefined || main1 === undefined ? -1 : (main1 - main0) / n;
  if (results.some((r) => !r.success)) throw new Error("bench why: a job did not complete");
  return { rate: n / (ms / 1000), cpu: (cpu.user + cpu.system) / n, main };
}

async function serve(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "jobtap-bench-why-ab-"));
  const mgr = await open(process.argv.includes("--without-explain"), dir);
  process.on("message", (m: { round?: number; close?: boolean }) => {
    if (m.round !== undefined) void round(mgr, m.round).then((r) => process.send!(r));
    else if (m.close === true) void mgr.close().then(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
  });
  process.send!({ ready: true });
}

if (process.send !== undefined && process.argv.includes("--why-ab-side")) await serve();

/**
 * `npm run bench -- soak [--jobs N] [--every K] [--batch B]`: N jobs (default 1,000,000)
 * through a real daemon's socket (`bin/jobtap daemon`, its own process), B per submit call
 * (default 1,000), run by the test executor, with purging of inactive jobs on
 * (`[job-manager] inactive-num-limit = 10000`). Every K jobs (default 100,000) it records
 * the daemon's RSS (VmRSS), the throughput of those K and the store files' size (database
 * plus WAL). Last stdout line: the JSON figures.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectDaemon } from "../src/server/client.js";
import { arg, testJobspec } from "./lib/common.js";

const BIN = [new URL("../bin/jobtap", import.meta.url), new URL("../../bin/jobtap", import.meta.url)].map((u) => fileURLToPath(u)).find((p) => existsSync(p))!;

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
const sizeOf = (p: string) => (existsSync(p) ? statSync(p).size : 0);

export async function main(args: string[]): Promise<void> {
  const jobs = Number(arg(args, "jobs", "1000000"));
  const every = Number(arg(args, "every", "100000"));
  const batch = Number(arg(args, "batch", "1000"));
  const dir = mkdtempSync(join(tmpdir(), "jobtap-soak-"));
  const statedir = join(dir, "state");
  writeFileSync(join(dir, "s.toml"), "[resources]\ncores = 100000\n[job-manager]\ninactive-num-limit = 10000\n");
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [BIN, "daemon", "--statedir", statedir, "--config", join(dir, "s.toml")], { env, stdio: "ignore" });
  const c = connectDaemon(join(statedir, "jobtap.sock"));
  try {
    for (let i = 0; ; i++) {
      try {
        await c.call("ping", {});
        break;
      } catch {
        if (i > 3000) throw new Error("the daemon did not start");
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    const spec = testJobspec();
    const points: Array<{ jobs: number; rss_mb: number; jobs_per_s: number; store_mb: number; active: number }> = [];
    let t = performance.now();
    let submitted = 0;
    // Two calls in flight keep the daemon busy without an unbounded backlog.
    while (submitted < jobs) {
      const k = Math.min(batch, jobs - submitted);
      await Promise.all([c.call("submit", { jobspecs: Array.from({ length: Math.ceil(k / 2) }, () => spec as never) }), c.call("submit", { jobspecs: Array.from({ length: Math.floor(k / 2) }, () => spec as never) })]);
      submitted += k;
      if (submitted % every === 0 || submitted === jobs) {
        // Let the backlog drain so the throughput is end to end.
        for (;;) {
          const active = (await c.call("list", { states: ["DEPEND", "PRIORITY", "SCHED", "RUN", "CLEANUP", "NEW"] } as never)).jobs.length;
          if (active === 0) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        const now = performance.now();
        const db = join(statedir, "jobtap.db");
        const point = { jobs: submitted, rss_mb: Math.round(rssOf(child.pid!) / 1e5) / 10, jobs_per_s: Math.round(every / ((now - t) / 1000)), store_mb: Math.round((sizeOf(db) + sizeOf(`${db}-wal`)) / 1e5) / 10, active: 0 };
        points.push(point);
        process.stderr.write(`${JSON.stringify(point)}\n`);
        t = performance.now();
      }
    }
    console.log(JSON.stringify({ bench: "soak", jobs, batch, points }));
  } finally {
    c.close();
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    rmSync(dir, { recursive: true, force: true });
  }
}

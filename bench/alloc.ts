/**
 * `npm run bench -- alloc [--jobs N] [--top K] [--bare]`
 *
 * Where the manager's thread allocates: N jobs (default 10,000) of `throughput`'s workload
 * (test executor, run_duration 0, SQLite store in a temp dir, the default builtins unless
 * `--bare`) after two warm-up rounds, under V8's sampling heap profiler (a sample every 256
 * bytes, objects later collected included). Prints the K (default 25) functions that
 * allocated most, as bytes per job, on stderr, and as its last stdout line:
 *   {"jobs":N,"bytes_per_job":...,"top":[{"fn":"name file:line","bytes_per_job":...},...]}
 *
 * Bytes are attributed to the function that allocated them as V8 saw it: a callee inlined
 * into its caller counts as the caller, and a builtin (JSON.stringify, Array.prototype.join)
 * as itself. Allocation, not retention: what a job keeps alive while in flight is what the
 * young-generation collector copies (see docs/manager.md, Performance).
 */
import { Session } from "node:inspector/promises";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createJobManager, type JobManager } from "../src/manager/manager.js";
import type { JobId } from "../src/manager/base/ids.js";
import { jobtapPlugins } from "../plugins-builtin/index.js";
import { arg, testJobspec } from "./lib/common.js";

interface SampleNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SampleNode[];
}

async function round(mgr: JobManager, n: number): Promise<void> {
  const ids: Array<Promise<JobId>> = [];
  for (let i = 0; i < n; i++) ids.push(mgr.submit(testJobspec()));
  await Promise.all((await Promise.all(ids)).map((id) => mgr.wait(id)));
}

/** Self bytes per function (name, file and line), summed over the profile's tree. */
function bytesByFunction(head: SampleNode): Map<string, number> {
  const out = new Map<string, number>();
  const stack = [head];
  while (stack.length > 0) {
    const n = stack.pop()!;
    const f = n.callFrame;
    const key = `${f.functionName || "(anonymous)"} ${f.url.split("/").slice(-2).join("/")}:${f.lineNumber + 1}`;
    out.set(key, (out.get(key) ?? 0) + n.selfSize);
    stack.push(...n.children);
  }
  return out;
}

/** The bench entry point (see the header for the flags). */
export async function main(args: string[]): Promise<void> {
  const n = Number(arg(args, "jobs", "10000"));
  const top = Number(arg(args, "top", "25"));
  const dir = mkdtempSync(join(tmpdir(), "jobtap-alloc-"));
  const session = new Session();
  try {
    const mgr = await createJobManager({
      statedir: dir,
      store: "sqlite",
      ...(args.includes("--bare") ? {} : { plugins: jobtapPlugins({ config: {} }) }),
    });
    await round(mgr, n);
    await round(mgr, n);
    session.connect();
    await session.post("HeapProfiler.enable");
    await session.post("HeapProfiler.startSampling", {
      samplingInterval: 256,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    await round(mgr, n);
    const { profile } = (await session.post("HeapProfiler.stopSampling")) as { profile: { head: SampleNode } };
    await mgr.close();
    const by = bytesByFunction(profile.head);
    let total = 0;
    for (const b of by.values()) total += b;
    const rows = [...by]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([fn, b]) => ({ fn, bytes_per_job: Math.round(b / n) }));
    process.stderr.write(`alloc: ${Math.round(total / n)} B per job\n`);
    for (const r of rows) process.stderr.write(`${String(r.bytes_per_job).padStart(7)}  ${r.fn}\n`);
    process.stdout.write(JSON.stringify({ jobs: n, bytes_per_job: Math.round(total / n), top: rows }) + "\n");
  } finally {
    session.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}

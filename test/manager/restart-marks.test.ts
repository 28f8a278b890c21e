/**
 * The SQLite store's marks in `meta` (layout 4): a clean shutdown writes the next batch
 * number and the summary floor (every job below it has a summary), so the next open scans
 * neither the eventlog nor every job. The batch number is only right after a clean shutdown:
 * after a SIGKILL the next open must not take it, or a job's eventlog chunks would reuse
 * batch numbers already stored.
 */
import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { parseJobId, type JobId } from "../../src/manager/base/ids.js";
import { simManager, submitNow, tempDir, testJob } from "./helpers.js";

const ROOT = join(__dirname, "..", "..");

/** The store's `meta` rows (other than the epoch), read from the file. */
function marks(dir: string): Record<string, string> {
  const db = new Database(join(dir, "jobtap.db"), { readonly: true });
  try {
    const rows = db.prepare("SELECT key, value FROM meta WHERE key != 'fluid_epoch'").all() as Array<{ key: string; value: string }>;
    return Object.fromEntries(rows.map((r) => [r.key, r.value]));
  } finally {
    db.close();
  }
}

/** Runs restart.test's child on `dir` until it has acknowledged `minAcks` jobs, then SIGKILLs it. */
function runAndKill(dir: string, minAcks: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "node_modules/vite-node/vite-node.mjs"), join(__dirname, "fixtures/restart-child.ts"), dir], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    const acked: string[] = [];
    let buf = "";
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdout.on("data", (d: Buffer) => {
      const lines = (buf + d.toString()).split("\n");
      buf = lines.pop()!;
      for (const l of lines) if (l.startsWith("ƒ")) acked.push(l);
      if (acked.length >= minAcks && child.exitCode === null) child.kill("SIGKILL");
    });
    child.on("exit", (code, signal) => (signal === "SIGKILL" ? resolve(acked) : reject(new Error(`child exited ${code}: ${stderr}`))));
  });
}

/** Finished jobs around one held job; closed cleanly. Returns the held job and a finished one. */
async function fill(dir: string): Promise<{ held: JobId; done: JobId; clock: SimulatedClock }> {
  const s = await simManager({ statedir: dir, store: "sqlite", resources: { cores: 2 } });
  const done = await submitNow(s, testJob(0));
  const held = await submitNow(s, testJob(0), { urgency: 0 });
  await submitNow(s, testJob(0));
  await s.clock.advance(1000);
  expect(s.mgr.job(done).state).toBe("INACTIVE");
  await s.mgr.close();
  return { held, done, clock: s.clock };
}

describe("store marks", () => {
  it("a clean shutdown writes the floor and the next batch number; the next open takes and removes the number", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const { held, done, clock } = await fill(dir);
      const m = marks(dir);
      expect(BigInt.asUintN(64, BigInt(m.summary_floor!))).toBe(held);
      expect(Number(m.batch_seq)).toBeGreaterThan(1);
      expect(m.inactive_count).toBe("2");
      const s = await simManager({ statedir: dir, store: "sqlite", clock, resources: { cores: 2 } });
      expect(marks(dir).batch_seq).toBeUndefined();
      expect(marks(dir).inactive_count).toBe("2"); // a size hint: kept, also across a crash
      expect(s.mgr.job(held).state).toBe("SCHED");
      expect(s.mgr.job(done).state).toBe("INACTIVE");
      s.mgr.cancel(held);
      await clock.advance(1000);
      await s.mgr.close();
      // Nothing active: every stored job is below the floor.
      const m2 = marks(dir);
      expect(BigInt.asUintN(64, BigInt(m2.summary_floor!))).toBeGreaterThan(held);
      expect(Number(m2.batch_seq)).toBeGreaterThan(Number(m.batch_seq));
      expect(m2.inactive_count).toBe("3");
      const s3 = await simManager({ statedir: dir, store: "sqlite", clock, resources: { cores: 2 } });
      expect(s3.mgr.job(held).state).toBe("INACTIVE");
      expect(s3.mgr.eventlog(held).at(-1)?.name).toBe("clean");
      await s3.mgr.close();
    } finally {
      cleanup();
    }
  });

  it("after a SIGKILL the next open does not reuse the batch numbers of the last clean shutdown", { timeout: 60_000 }, async () => {
    const { dir, cleanup } = tempDir();
    try {
      const { held } = await fill(dir);
      const acked = await runAndKill(dir, 300);
      const clock = new SimulatedClock(Date.now() + 1000);
      const s = await simManager({ statedir: dir, store: "sqlite", clock, resources: { cores: 2 } });
      try {
        for (const f58 of acked) s.mgr.job(parseJobId(f58)); // throws UNKNOWN_JOB if lost
        // The held job got flux-restart in the killed run's first batch and gets it again now:
        // both chunks are stored, in order, and later batches still commit.
        s.mgr.port.postEvent(held, "memo", { tag: "after" });
        await submitNow(s, testJob(0));
        await clock.advance(1000);
        expect(s.logs.filter((l) => /commit failed/.test(l))).toEqual([]);
      } finally {
        await s.mgr.close();
      }
      const s2 = await simManager({ statedir: dir, store: "sqlite", clock, resources: { cores: 2 } });
      try {
        const names = s2.mgr.eventlog(held).map((e) => e.name);
        expect(names.filter((n) => n === "flux-restart").length).toBeGreaterThanOrEqual(3);
        // Chunks in the order written: this open's flux-restart after the memo, after the first ones.
        expect(names.lastIndexOf("flux-restart")).toBeGreaterThan(names.lastIndexOf("memo"));
        expect(names.lastIndexOf("memo")).toBeGreaterThan(names.indexOf("flux-restart"));
      } finally {
        await s2.mgr.close();
      }
    } finally {
      cleanup();
    }
  });
});

import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { parseJobId } from "../../src/manager/base/ids.js";
import { createJobManager, JobManager } from "../../src/manager/manager.js";
import { SqliteStore } from "../../src/manager/store/sqlite.js";
import { STATES } from "../../src/manager/base/states.js";
import { fakePort } from "./fake-port.js";
import { names, simManager, submitNow, tempDir, testJob } from "./helpers.js";

const ROOT = join(__dirname, "..", "..");

/** Runs the child until it has printed `minAcks` ids, then SIGKILLs it. */
function runAndKill(statedir: string, minAcks: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "node_modules/vite-node/vite-node.mjs"), join(__dirname, "fixtures/restart-child.ts"), statedir], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const acked: string[] = [];
    let buf = "";
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split("\n");
      buf = lines.pop()!;
      for (const l of lines) if (l.startsWith("ƒ")) acked.push(l);
      if (acked.length >= minAcks && child.exitCode === null) child.kill("SIGKILL");
    });
    child.on("exit", (code, signal) => {
      if (signal === "SIGKILL") resolve(acked);
      else reject(new Error(`child exited ${code}: ${stderr}`));
    });
  });
}

describe("restart", () => {
  it("a SIGKILLed manager reopens with every acknowledged job, consistent", { timeout: 60_000 }, async () => {
    const { dir, cleanup } = tempDir();
    try {
      const acked = await runAndKill(dir, 400);
      expect(acked.length).toBeGreaterThanOrEqual(400);
      const clock = new SimulatedClock(Date.now() + 1000);
      const mgr = await createJobManager({ statedir: dir, store: "sqlite", clock, resources: { cores: 2 }, log: () => undefined });
      try {
        expect(mgr.lostAndFound()).toEqual([]);
        for (const f58 of acked) {
          const info = mgr.job(parseJobId(f58)); // throws UNKNOWN_JOB if lost
          expect(STATES).toContain(info.state);
          expect(info.state).not.toBe("NEW");
          const log = mgr.eventlog(info.id).map((e) => e.name);
          expect(log[0]).toBe("submit");
          expect(log).toContain("validate");
        }
        // Everything not held finishes after restart: SCHED jobs got flux-restart, RUN jobs were reattached.
        for (let i = 0; i < 200 && mgr.jobs({ states: ["PRIORITY", "RUN", "CLEANUP"] }).length + JobManager.internals(mgr).scheduler.pending().length > 0; i++) {
          await clock.advance(1000);
        }
        for (const f58 of acked) {
          const info = mgr.job(parseJobId(f58));
          if (info.urgency === 0 && info.state !== "INACTIVE") expect(info.state).toBe("SCHED");
          else expect(info.state, f58).toBe("INACTIVE");
        }
        // Jobs that were in SCHED at the kill went back through PRIORITY with flux-restart.
        const sched = mgr.jobs({ states: ["SCHED"] });
        expect(sched.length).toBeGreaterThan(0);
        expect(sched.some((j) => mgr.eventlog(j.id).some((e) => e.name === "flux-restart"))).toBe(true);
        for (const j of sched) expect(j.priority).toBe(0);
      } finally {
        await mgr.close();
      }
    } finally {
      cleanup();
    }
  });

  it("replays without callbacks, then runs the restart callbacks in Flux's order", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const a = await simManager({ statedir: dir, store: "sqlite", resources: { cores: 1 } });
      const done = await submitNow(a, testJob(0, {}));
      await a.clock.advance(1);
      const running = await submitNow(a, testJob("10s"));
      const queued = await submitNow(a, testJob("10s"));
      await a.mgr.close();

      const calls: string[] = [];
      const rec = (tag: string) => (args: { id: unknown; state: string }) => void calls.push(`${tag} ${args.state}`);
      const b = await simManager({
        statedir: dir,
        store: "sqlite",
        resources: { cores: 1 },
        clock: new SimulatedClock(a.clock.now()),
        plugins: fakePort({
          "job.inactive-add": rec("inactive-add"),
          "job.destroy": rec("destroy"),
          "job.create": rec("create"),
          "job.new": rec("new"),
          "job.validate": rec("validate"),
        }),
      });
      expect(calls).toEqual([
        "inactive-add INACTIVE",
        "destroy INACTIVE",
        "create RUN",
        "new RUN",
        "create SCHED",
        "new SCHED",
      ]);
      expect(names(b, queued)).toContain("flux-restart");
      expect(b.mgr.job(queued).state).toBe("SCHED");
      expect(b.mgr.job(done).state).toBe("INACTIVE");
      await b.clock.advance(10_000);
      await b.clock.advance(1);
      expect(b.mgr.job(running).result).toBe("COMPLETED");
      await b.clock.advance(10_000);
      expect(b.mgr.job(queued).result).toBe("COMPLETED");
      await b.mgr.close();
    } finally {
      cleanup();
    }
  });

  it("a corrupt stored job is set aside with a logged error; start-up goes on", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const a = await simManager({ statedir: dir, store: "sqlite" });
      const good = await submitNow(a, testJob("1h"));
      const bad = await submitNow(a, testJob("1h"));
      await a.mgr.close();
      const raw = new SqliteStore(join(dir, "jobtap.db"));
      raw.commit({ newJobs: [], appends: new Map([[bad, "{not json\n"]]), purged: [] });
      raw.close();
      const b = await simManager({ statedir: dir, store: "sqlite" });
      expect(b.mgr.job(good).state).not.toBe("INACTIVE");
      expect(() => b.mgr.job(bad)).toThrow(/unknown job/);
      expect(b.mgr.lostAndFound()).toEqual([{ id: bad, reason: expect.stringMatching(/eventlog line \d+ is not valid JSON/) }]);
      expect(b.logs.some((l) => l.startsWith("error:") && l.includes("moved to lost+found"))).toBe(true);
      await b.mgr.close();
    } finally {
      cleanup();
    }
  });

  it("an unopenable store is a clear STORE_OPEN error", async () => {
    const { dir, cleanup } = tempDir();
    try {
      writeFileSync(join(dir, "plain-file"), "");
      const statedir = join(dir, "plain-file", "state"); // a file where a directory must be
      await expect(createJobManager({ statedir, store: "sqlite" })).rejects.toMatchObject({
        code: "STORE_OPEN",
        message: expect.stringContaining(`cannot open job store ${statedir}/jobtap.db`),
      });
    } finally {
      cleanup();
    }
  });
});

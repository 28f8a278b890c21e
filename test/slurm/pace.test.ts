/**
 * Polls while sbatch calls are in flight (plugins-builtin/exec-slurm/pace.ts): spaced out
 * during a burst of submissions, back to the poll period once the last sbatch answers. The
 * rules alone, then the executor on a real cluster with its timers on a simulated clock
 * whose every delay is recorded (Slurm's commands are real).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { defaultSlurmConfig } from "../../plugins-builtin/exec-slurm/config.js";
import { SlurmExecutor } from "../../plugins-builtin/exec-slurm/executor.js";
import { BUSY_POLL_FACTOR, pullPollIn, regularPollMs } from "../../plugins-builtin/exec-slurm/pace.js";
import type { ExecJob, ExecReport } from "../../src/plugin.js";
import { waitFor } from "../e2e/harness.js";
import { skipSlurm, TestCluster } from "./cluster.js";

describe("poll pace rules", () => {
  const c = { pollPeriodMs: 500, maxPollPeriodMs: 60_000 };
  it("stretches the period while submitting, never past max-poll-period", () => {
    expect(regularPollMs(c, false)).toBe(500);
    expect(regularPollMs(c, true)).toBe(500 * BUSY_POLL_FACTOR);
    expect(regularPollMs({ pollPeriodMs: 500, maxPollPeriodMs: 800 }, true)).toBe(800);
    expect(regularPollMs({ pollPeriodMs: 500, maxPollPeriodMs: 500 }, true)).toBe(500);
  });
  it("pulls a later poll in at the end of a burst, unless polls are backing off", () => {
    expect(pullPollIn(c, 3_000, 1_000, false)).toBe(true);
    expect(pullPollIn(c, 1_400, 1_000, false)).toBe(false);
    expect(pullPollIn(c, 3_000, 1_000, true)).toBe(false);
  });
});

/** Timers on a simulated clock, every delay recorded. */
class RecordingClock extends SimulatedClock {
  readonly delays: number[] = [];
  override setTimeout(fn: () => void, ms: number) {
    this.delays.push(ms);
    return super.setTimeout(fn, ms);
  }
}

/** Records which jobs were given a Slurm id and which were released. */
class Recorder implements ExecReport {
  readonly saved = new Set<JobId>();
  readonly released = new Set<JobId>();
  start() {}
  finish() {}
  exception() {}
  release(id: JobId) {
    this.released.add(id);
  }
  save(id: JobId) {
    this.saved.add(id);
  }
  log() {}
}

describe.skipIf(skipSlurm)("slurm executor: polls during a burst of submissions", { timeout: 60_000 }, () => {
  let cluster: TestCluster;
  let work: string;
  beforeAll(() => {
    cluster = new TestCluster().start();
    work = join(cluster.dir, "work");
    mkdirSync(work);
  }, 60_000);
  afterAll(() => cluster?.stop(), 120_000);

  it("spaces polls out while sbatch calls are in flight and polls at the period once the last answers", async () => {
    const clock = new RecordingClock();
    const rec = new Recorder();
    const config = { ...defaultSlurmConfig(), site: { slurmConf: cluster.conf, commandTimeoutMs: 10_000 }, pollPeriodMs: 100, maxPollPeriodMs: 1_000, submitConcurrency: 1 };
    const ex = new SlurmExecutor(clock, config, () => undefined);
    try {
      const jobs: ExecJob[] = [1, 2, 3].map((i) => ({
        id: BigInt(5000 + i) as JobId,
        userid: 0,
        jobspec: {
          version: 1,
          resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
          tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
          attributes: { system: { cwd: work, environment: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, shell: { options: { output: { stdout: { path: "/dev/null" } } } } } },
        },
        R: undefined,
        duration: 0,
        saved: {},
      }));
      for (const j of jobs) ex.start(j, rec);
      await waitFor(() => rec.saved.size === 3 && clock.delays.length >= 2, 30_000, "every sbatch to answer");
      // The first job's poll was scheduled while the other two were still to be submitted;
      // the end of the burst brought it back to the poll period.
      expect(clock.delays).toEqual([100 * BUSY_POLL_FACTOR, 100]);
      // Poll after poll (each at the period again) until Slurm has run all three.
      while (rec.released.size < 3) {
        const seen = clock.delays.length;
        await clock.advance(100);
        await waitFor(() => clock.delays.length > seen || rec.released.size === 3, 30_000, "the next poll");
      }
      expect(new Set(clock.delays.slice(1))).toEqual(new Set([100]));
    } finally {
      ex.close();
    }
  });
});

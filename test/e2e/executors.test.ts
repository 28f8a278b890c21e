/**
 * Executors through the real daemon and CLI: a job's processes outlive a SIGKILLed daemon
 * and the restarted daemon reattaches to them instead of recording them finished and
 * handing their cores out again; `jobtap job-exec-override` drives a test-executor job.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { DaemonUnderTest, requireBuild, waitFor } from "./harness.js";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("executors through the daemon", { timeout: 90_000 }, () => {
  beforeAll(() => requireBuild());

  it("after SIGKILL of the daemon, a running job is reattached: its core stays booked until its process ends", async () => {
    const d = new DaemonUnderTest();
    const config = join(d.statedir, "c.toml");
    writeFileSync(config, "[resources]\ncores = 1\n");
    let pid = 0;
    try {
      await d.start(["--config", config]);
      const id = d.cli(["submit", "sh", "-c", "while [ ! -e go ]; do sleep 0.02; done; exit 3"]).stdout.trim();
      const events = () => d.cli(["eventlog", "--json", id]).stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
      await waitFor(() => events().some((e) => e.name === "start"), 20_000, "job to start");
      expect(events().some((e) => e.name === "exec-state")).toBe(false);
      const exec = d.cli(["eventlog", "--json", "--path", "exec", id]).stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
      pid = exec.find((e) => e.name === "exec-state").context.tasks[0].pid;

      await d.kill();
      expect(alive(pid)).toBe(true);
      await d.start(["--config", config]);
      expect(d.job(id)).toMatchObject({ state: "RUN" });
      const next = d.cli(["submit", "true"]).stdout.trim();
      expect(d.job(next)).toMatchObject({ state: "SCHED" }); // not double booked
      expect(d.job(id)).toMatchObject({ state: "RUN" });

      writeFileSync(join(d.statedir, "go"), "");
      await waitFor(() => d.job(id)?.state === "INACTIVE", 20_000, "reattached job to end");
      // Exit code 3 when the orphan is still a zombie at the poll (init does not reap
      // it here); otherwise the status is unknown and the exception says so.
      const ended = d.job(id)!;
      expect(ended.result).toBe("FAILED");
      if (ended.waitstatus !== 3 << 8) expect(d.cli(["eventlog", id]).stdout).toMatch(/exit status unknown/);
      await waitFor(() => d.job(next)?.state === "INACTIVE", 20_000, "the next job to run");
      expect(d.job(next)).toMatchObject({ result: "COMPLETED" });
    } finally {
      if (pid && alive(pid)) process.kill(pid, "SIGKILL");
      await d.dispose();
    }
  });

  it("job-exec-override starts and finishes an override job; other jobs are refused", async () => {
    const d = new DaemonUnderTest();
    try {
      await d.start();
      const id = d.cli(["submit", "--setattr", "exec.test.override=1", "true"]).stdout.trim();
      await waitFor(() => d.job(id)?.state === "RUN", 20_000, "job to be allocated");
      const early = d.cli(["job-exec-override", "finish", id, "0"]);
      expect(early.status).not.toBe(0);
      expect(early.stderr).toMatch(/job not running/);
      expect(d.cli(["job-exec-override", "start", id]).status).toBe(0);
      expect(d.cli(["eventlog", id]).stdout).toMatch(/ start/);
      expect(d.cli(["job-exec-override", "start", id]).stderr).toMatch(/job already running/);
      expect(d.cli(["job-exec-override", "finish", id, "256"]).status).toBe(0);
      await waitFor(() => d.job(id)?.state === "INACTIVE", 20_000, "job to finish");
      expect(d.job(id)).toMatchObject({ result: "FAILED" });

      const plain = d.cli(["submit", "--setattr", "exec.test.run_duration=1h", "true"]).stdout.trim();
      await waitFor(() => d.job(plain)?.state === "RUN", 20_000, "plain job to run");
      expect(d.cli(["job-exec-override", "start", plain]).stderr).toMatch(/not in exec override mode/);
      expect(d.cli(["job-exec-override", "bogus", plain]).status).not.toBe(0);
      expect(d.cli(["cancel", plain]).status).toBe(0);
    } finally {
      await d.dispose();
    }
  });
});

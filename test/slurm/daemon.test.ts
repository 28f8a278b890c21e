/**
 * The real daemon and CLI with `[exec.slurm]` against the real local cluster:
 * `jobtap submit --exec slurm --wait` runs the job on Slurm and exits with its status; the
 * daemon killed with SIGKILL while a job runs on Slurm reattaches it on restart (one start,
 * the real exit status, no second Slurm job); a bad `[exec.slurm]` is refused by name.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonUnderTest, requireBuild, waitFor } from "../e2e/harness.js";
import { skipSlurm, TestCluster } from "./cluster.js";

describe.skipIf(skipSlurm)("jobtap daemon with [exec.slurm]", { timeout: 90_000 }, () => {
  let cluster: TestCluster;
  let d: DaemonUnderTest;
  let work: string;

  beforeAll(async () => {
    requireBuild();
    cluster = new TestCluster().start();
    work = join(cluster.dir, "work");
    mkdirSync(work);
    const config = join(cluster.dir, "jobtap.toml");
    writeFileSync(config, `[exec.slurm]\nslurm-conf = "${cluster.conf}"\npoll-period = "0.1s"\nmax-poll-period = "1s"\n`);
    d = new DaemonUnderTest(config);
    await d.start();
  }, 90_000);
  afterAll(async () => {
    await d?.dispose();
    cluster?.stop();
  });

  it("submit --exec slurm --wait runs the job on Slurm and exits with its status", () => {
    const out = join(work, "hello.out");
    const r = d.cli(["submit", "--exec", "slurm", "--wait", "--output", out, "--", "sh", "-c", "echo hello from slurm; exit 3"], { cwd: work });
    expect(r.status).toBe(3);
    expect(readFileSync(out, "utf8")).toBe("hello from slurm\n");
    const id = r.stdout.trim().split("\n")[0]!;
    const events = d.cli(["eventlog", "--json", "--path", "exec", id]).stdout.trim().split("\n").map((l) => JSON.parse(l) as { name: string; context?: Record<string, unknown> });
    expect(events.find((e) => e.name === "exec-state")?.context?.slurm_jobid).toMatch(/^\d+$/);
  });

  it("SIGKILLed while a job runs on Slurm, the daemon reattaches it on restart", async () => {
    const flag = join(work, "go");
    const r = d.cli(["submit", "--exec", "slurm", "--", "sh", "-c", `while [ ! -e ${flag} ]; do sleep 0.1; done; exit 4`], { cwd: work });
    expect(r.status).toBe(0);
    const id = r.stdout.trim();
    const started = () => d.cli(["eventlog", id]).stdout.includes("start");
    await waitFor(started, 30_000, "the job to start on Slurm");
    const slurmJobs = () => cluster.run("squeue", ["-h", "-t", "all", "-o", "%i"]).trim().split("\n").length;
    const before = slurmJobs();
    await d.kill();
    await d.start();
    mkdirSync(flag);
    await waitFor(() => d.job(id)?.state === "INACTIVE", 60_000, "the reattached job to end");
    expect(d.job(id)).toMatchObject({ result: "FAILED" });
    const names = d.cli(["eventlog", "--json", id]).stdout.trim().split("\n").map((l) => (JSON.parse(l) as { name: string }).name);
    expect(names.filter((n) => n === "start")).toHaveLength(1);
    expect(names).toContain("finish");
    expect(slurmJobs()).toBe(before);
  });

  it("config check names a bad [exec.slurm] key", () => {
    const bad = join(cluster.dir, "bad.toml");
    writeFileSync(bad, `[exec.slurm]\npoll-period = "soon"\n`);
    const r = d.cli(["config", "check", bad]);
    expect(r.status).not.toBe(0);
    expect(r.stderr + r.stdout).toMatch(/\[exec.slurm\].poll-period: must be a duration/);
  });
});

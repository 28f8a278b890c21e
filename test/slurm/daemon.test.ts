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
import { Api, listenerUrl } from "../e2e/http-util.js";
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
    writeFileSync(config, `[daemon]\nhttp = "127.0.0.1:0"\n\n[exec.slurm]\nslurm-conf = "${cluster.conf}"\npoll-period = "0.1s"\nmax-poll-period = "1s"\n`);
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
    // The start was read from the daemon's memory; it is durable once a later submission is
    // acknowledged (batches land in order), so the SIGKILL below cannot lose it.
    const barrier = d.cli(["submit", "--urgency", "hold", "true"], { cwd: work }).stdout.trim();
    d.cli(["cancel", barrier]);
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

  /**
   * The listener of the daemon running now: restarted by the test above, its log holds one
   * listener line per start, and the latest may not be written yet.
   */
  const liveApi = async (token: string): Promise<Api> => {
    await listenerUrl(d);
    const end = Date.now() + 30_000;
    for (;;) {
      const api = new Api([...d.log.matchAll(/http: listening on (https?:\/\/\S+)/g)].pop()![1]!);
      try {
        if ((await api.call("GET", "/metrics", token)).status === 200) return api;
      } catch {
        // the previous daemon's port: its line is older than this daemon's
      }
      api.close();
      if (Date.now() > end) throw new Error(`no live http listener in the daemon's log:\n${d.log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it("/metrics counts jobs on Slurm by the Slurm state of the last poll (jobtap_slurm_jobs)", async () => {
    const token = d.cli(["token", "create", "--scope", "read"]).stdout.trim();
    const api = await liveApi(token);
    const flag = join(work, "metrics-go");
    const submit = (args: string[]) => d.cli(["submit", "--exec", "slurm", ...args], { cwd: work }).stdout.trim();
    const held = [submit(["--setattr", 'exec.slurm.args=["--hold"]', "--", "true"]), submit(["--setattr", 'exec.slurm.args=["--hold"]', "--", "true"])];
    const running = submit(["--", "sh", "-c", `while [ ! -e ${flag} ]; do sleep 0.1; done`]);
    const scrape = async () => (await api.call("GET", "/metrics", token)).text;
    let text = "";
    const seen = async () => {
      text = await scrape();
      return /^jobtap_slurm_jobs\{state="PENDING"\} 2$/m.test(text) && /^jobtap_slurm_jobs\{state="RUNNING"\} 1$/m.test(text);
    };
    const end = Date.now() + 60_000;
    while (!(await seen())) {
      if (Date.now() > end) throw new Error(`jobtap_slurm_jobs never showed 2 PENDING and 1 RUNNING:\n${text.split("\n").filter((l) => l.includes("slurm")).join("\n")}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(text).toMatch(/^# TYPE jobtap_slurm_jobs gauge$/m);
    mkdirSync(flag);
    for (const id of held) d.cli(["cancel", id]);
    await waitFor(() => [...held, running].every((id) => d.job(id)?.state === "INACTIVE"), 60_000, "the jobs to end");
    // Ended jobs are no longer tracked: no series left.
    expect(await scrape()).not.toMatch(/^jobtap_slurm_jobs\{/m);
    api.close();
  });

  it("config check names a bad [exec.slurm] key", () => {
    const bad = join(cluster.dir, "bad.toml");
    writeFileSync(bad, `[exec.slurm]\npoll-period = "soon"\n`);
    const r = d.cli(["config", "check", bad]);
    expect(r.status).not.toBe(0);
    expect(r.stderr + r.stdout).toMatch(/\[exec.slurm\].poll-period: must be a duration/);
  });
});

/**
 * .exec-slurm's `job.explain` (issue 36) on a real single-node Slurm cluster: a job pending
 * in Slurm names its Slurm id and the state and Reason squeue gave at the last poll
 * (BeginTime for a `--begin` in the future, the node's resources taken by another job); a
 * job that ended names Slurm's final state and reason, also after a restart (saved in its
 * exec eventlog). Real manager and store; the clock is real because Slurm's is.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import type { Jobspec } from "../../src/manager/port/records.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { waitFor } from "../e2e/harness.js";
import { skipSlurm, TestCluster } from "../slurm/cluster.js";

describe.skipIf(skipSlurm)("job why: Slurm jobs", { timeout: 120_000 }, () => {
  let cluster: TestCluster;
  let statedir: string;
  let work: string;
  const open: JobManager[] = [];
  const config = () => ({ exec: { slurm: { "slurm-conf": cluster.conf, "poll-period": 0.1, "max-poll-period": 0.5 } } });
  const start = async (): Promise<JobManager> => {
    const cfg = config();
    const plugins = jobtapPlugins({ config: cfg, pluginPath: [], log: () => undefined });
    const m = await createJobManager({ statedir, config: cfg, resources: { cores: 1 }, log: () => undefined, plugins });
    open.push(m);
    return m;
  };
  const jobspec = (command: string[], args: string[] = []): Jobspec => ({
    version: 1,
    resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
    tasks: [{ command, slot: "task", count: { per_slot: 1 } }],
    attributes: { system: { cwd: work, environment: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, exec: { name: "slurm", slurm: { args } } } },
  });
  const slurmId = (m: JobManager, id: JobId) => m.execEventlog(id).find((e) => e.name === "exec-state" && e.context?.slurm_jobid)?.context?.slurm_jobid as string | undefined;
  const squeue = (sid: string, fmt: string) => cluster.run("squeue", ["-h", "-t", "all", "-j", sid, "-o", fmt]).trim();
  /** Polls an async condition (job why is async) until it holds or the deadline passes. */
  const until = async (cond: () => Promise<boolean>, what: string) => {
    const end = Date.now() + 60_000;
    while (!(await cond())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const slurmReasons = async (m: JobManager, id: JobId) => (await m.why(id)).reasons.filter((r) => r.source === ".exec-slurm");

  beforeAll(() => {
    cluster = new TestCluster().start();
    work = join(cluster.dir, "work");
    mkdirSync(work);
    statedir = mkdtempSync(join(tmpdir(), "jobtap-why-slurm-"));
  }, 60_000);
  afterEach(async () => {
    for (const m of open.splice(0)) await m.close();
  });
  afterAll(() => {
    cluster?.stop();
    rmSync(statedir, { recursive: true, force: true });
  });

  it("a job pending in Slurm names its Slurm id, squeue's state and Reason", async () => {
    const m = await start();
    const later = await m.submit(jobspec(["true"], ["--begin=now+3600"]));
    // The node taken whole: the next job waits in Slurm for its resources.
    const big = await m.submit(jobspec(["sleep", "300"], ["--exclusive"]));
    await waitFor(() => m.eventlog(big).some((e) => e.name === "start"), 60_000, "the exclusive job to start");
    const waits = await m.submit(jobspec(["true"]));
    await until(async () => (await slurmReasons(m, waits))[0]?.code === "slurm-pending", "a poll to see the job pending");
    await until(async () => (await slurmReasons(m, later))[0]?.figures.slurm_reason === "BeginTime", "a poll to see BeginTime");

    const [b] = await slurmReasons(m, later);
    const sid = slurmId(m, later)!;
    expect(b).toMatchObject({ layer: "exec", code: "slurm-pending", figures: { slurm_jobid: sid, slurm_state: "PENDING", slurm_reason: "BeginTime" } });
    expect(b!.text).toMatch(new RegExp(`^Slurm job ${sid} is PENDING in Slurm, reason BeginTime \\(polled [0-9.]+s ago\\)$`));
    expect(typeof b!.figures.polled_ago_s).toBe("number");

    const [w] = await slurmReasons(m, waits);
    const wsid = slurmId(m, waits)!;
    const reason = squeue(wsid, "%r"); // Resources or Priority, as slurmctld decided
    expect(reason).toMatch(/^(Resources|Priority)$/);
    expect(w).toMatchObject({ layer: "exec", code: "slurm-pending", figures: { slurm_jobid: wsid, slurm_state: "PENDING", slurm_reason: reason } });
    expect(w!.text).toMatch(new RegExp(`^Slurm job ${wsid} is PENDING in Slurm, reason ${reason} `));

    const [r] = await slurmReasons(m, big);
    expect(r).toMatchObject({ layer: "exec", code: "slurm-running", figures: { slurm_jobid: slurmId(m, big)!, slurm_state: "RUNNING", slurm_reason: null } });
    expect(r!.text).toMatch(new RegExp(`^runs as Slurm job ${slurmId(m, big)!} \\(RUNNING\\) \\(polled`));
    for (const id of [later, big, waits]) m.cancel(id);
    await waitFor(() => [later, big, waits].every((id) => m.job(id).state === "INACTIVE"), 60_000, "the jobs to end");
  });

  it("an ended job names Slurm's final state and reason, also after a restart", async () => {
    let m = await start();
    const fails = await m.submit(jobspec(["sh", "-c", "exit 3"]));
    const held = await m.submit(jobspec(["true"], ["--hold"]));
    await until(async () => (await slurmReasons(m, held))[0]?.figures.slurm_reason === "JobHeldUser", "a poll to see the hold");
    cluster.run("scancel", [slurmId(m, held)!]); // cancelled on the Slurm side
    await waitFor(() => [fails, held].every((id) => m.job(id).state === "INACTIVE"), 60_000, "the jobs to end");
    const check = async (mm: JobManager) => {
      const [f] = await slurmReasons(mm, fails);
      const sid = slurmId(mm, fails)!;
      expect(f).toMatchObject({ layer: "end", code: "slurm-ended", figures: { slurm_jobid: sid, slurm_state: "FAILED", slurm_reason: "NonZeroExitCode" } });
      expect(f!.text).toBe(`Slurm job ${sid} ended FAILED, reason NonZeroExitCode`);
      const [c] = await slurmReasons(mm, held);
      expect(c).toMatchObject({ layer: "end", code: "slurm-ended", figures: { slurm_jobid: slurmId(mm, held)!, slurm_state: "CANCELLED" } });
      expect(c!.text).toMatch(new RegExp(`^Slurm job ${slurmId(mm, held)!} ended CANCELLED`));
      // Below the manager's own end line (the exception or exit code).
      const all = (await mm.why(fails)).reasons;
      expect(all.map((x) => `${x.layer}/${x.source}`)).toEqual(["end/manager", "end/.exec-slurm"]);
    };
    await check(m);
    await m.close();
    open.splice(0);
    m = await start();
    await check(m);
  });
});

/**
 * Jobs on Slurm through the whole job manager: the builtin .exec-slurm registers the
 * `slurm` executor, `attributes.system.exec.name = "slurm"` picks it, the eventlog tells the
 * truth (exec-state with the Slurm id, start, finish with the real status), cancel and time
 * limits end the Slurm job, and a restart reattaches running jobs by their saved Slurm id
 * without submitting anything again. Real cluster, real SQLite store, real clock; conditions
 * are polled with deadlines, no durations asserted.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import type { Jobspec } from "../../src/manager/port/records.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { waitFor } from "../e2e/harness.js";
import { skipSlurm, TestCluster } from "./cluster.js";

describe.skipIf(skipSlurm)("jobs on Slurm through the job manager", { timeout: 90_000 }, () => {
  let cluster: TestCluster;
  let statedir: string;
  let work: string;
  const open: JobManager[] = [];
  const config = () => ({ exec: { slurm: { "slurm-conf": cluster.conf, "poll-period": 0.1, "max-poll-period": 0.5 } } });

  const start = async (): Promise<JobManager> => {
    const cfg = config();
    const factory = jobtapPlugins({ config: cfg, pluginPath: [], log: () => undefined });
    // One local core: Slurm jobs must not need any (they bypass the local scheduler).
    const m = await createJobManager({ statedir, config: cfg, resources: { cores: 1 }, log: () => undefined, plugins: factory });
    open.push(m);
    return m;
  };
  const jobspec = (command: string[], system: Record<string, unknown> = {}): Jobspec => ({
    version: 1,
    resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
    tasks: [{ command, slot: "task", count: { per_slot: 1 } }],
    attributes: { system: { cwd: work, environment: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, exec: { name: "slurm" }, ...system } },
  });
  const names = (m: JobManager, id: JobId) => m.eventlog(id).map((e) => e.name);
  const slurmId = (m: JobManager, id: JobId) => m.execEventlog(id).find((e) => e.name === "exec-state")?.context?.slurm_jobid as string | undefined;
  const slurmJobs = () => cluster.run("squeue", ["-h", "-t", "all", "-o", "%i"]).trim().split("\n").length;

  beforeAll(() => {
    cluster = new TestCluster().start();
    work = join(cluster.dir, "work");
    mkdirSync(work);
  }, 60_000);
  afterEach(async () => {
    for (const m of open.splice(0)) await m.close();
  });
  afterAll(() => {
    cluster?.stop();
  });
  const freshStatedir = () => {
    statedir = mkdtempSync(join(tmpdir(), "jobtap-slurm-state-"));
    return () => rmSync(statedir, { recursive: true, force: true });
  };

  it("runs jobs on Slurm: output, exit status and the Slurm id in the eventlog; no local cores needed", async () => {
    const cleanup = freshStatedir();
    const m = await start();
    const out = join(work, "{{id}}.out");
    const a = await m.submit(jobspec(["sh", "-c", "echo from slurm; exit 5"], { shell: { options: { output: { stdout: { path: out } } } } }));
    const b = await m.submit(jobspec(["sleep", "1"]));
    const c = await m.submit(jobspec(["true"]));
    await waitFor(() => [a, b, c].every((id) => m.job(id).state === "INACTIVE"), 60_000, "the jobs to end");
    expect(m.job(a)).toMatchObject({ result: "FAILED", waitstatus: 5 << 8 });
    expect(m.job(c)).toMatchObject({ result: "COMPLETED", waitstatus: 0 });
    expect(readFileSync(join(work, `${formatJobId(a)}.out`), "utf8")).toBe("from slurm\n");
    expect(names(m, a)).toEqual(expect.arrayContaining(["alloc", "start", "finish", "release", "free", "clean"]));
    expect(slurmId(m, a)).toMatch(/^\d+$/);
    cleanup();
  });

  it("cancel scancels the Slurm job; a time limit is a timeout exception", async () => {
    const cleanup = freshStatedir();
    const m = await start();
    const a = await m.submit(jobspec(["sleep", "300"]));
    const b = await m.submit(jobspec(["sleep", "300"], { duration: 1 }));
    await waitFor(() => names(m, a).includes("start"), 30_000, "job a to start");
    m.cancel(a);
    await waitFor(() => [a, b].every((id) => m.job(id).state === "INACTIVE"), 60_000, "the jobs to end");
    expect(m.job(a).result).toBe("CANCELED");
    expect(m.job(b).result).toBe("TIMEOUT");
    for (const id of [a, b]) expect(cluster.run("squeue", ["-h", "-t", "all", "-j", slurmId(m, id)!, "-o", "%T"]).trim()).toBe("CANCELLED");
    cleanup();
  });

  it("a job Slurm refuses ends with an exception naming Slurm's message", async () => {
    const cleanup = freshStatedir();
    const m = await start();
    const a = await m.submit(jobspec(["true"], { exec: { name: "slurm", slurm: { partition: "nosuch" } } }));
    await waitFor(() => m.job(a).state === "INACTIVE", 30_000, "the job to end");
    const ex = m.eventlog(a).find((e) => e.name === "exception");
    expect(ex?.context).toMatchObject({ type: "exec", severity: 0 });
    expect(String(ex?.context?.note)).toMatch(/sbatch refused the job: .*invalid partition/i);
    await expect(m.submit(jobspec(["true"], { exec: { name: "slurm", slurm: { queue: "x" } } }))).rejects.toThrow(
      /attributes.system.exec.slurm.queue: unknown key/,
    );
    cleanup();
  });

  /** The job's fatal exception (type, note) once it is INACTIVE. */
  const fatal = (m: JobManager, id: JobId) => m.eventlog(id).find((e) => e.name === "exception" && e.context?.severity === 0)?.context;
  const slurmState = (m: JobManager, id: JobId) => cluster.run("squeue", ["-h", "-t", "all", "-j", slurmId(m, id)!, "-o", "%T"]).trim();

  it("Slurm's own time limit (TIMEOUT) is a timeout exception; the job ran, so it has start and finish", async () => {
    const cleanup = freshStatedir();
    const m = await start();
    // No jobtap duration (jobtap's own timer stays off): Slurm alone ends the job. Its
    // --time is whole minutes; the limit is then cut to 0 as an admin would, which
    // slurmctld enforces at its next time-limit pass (every 30 s).
    const a = await m.submit(jobspec(["sleep", "300"], { exec: { name: "slurm", slurm: { args: ["--time=1"] } } }));
    await waitFor(() => names(m, a).includes("start"), 30_000, "the job to start");
    cluster.run("scontrol", ["update", `jobid=${slurmId(m, a)!}`, "timelimit=0"]);
    await waitFor(() => m.job(a).state === "INACTIVE", 60_000, "Slurm to time the job out");
    expect(slurmState(m, a)).toBe("TIMEOUT");
    expect(fatal(m, a)).toMatchObject({ type: "timeout" });
    expect(String(fatal(m, a)?.note)).toMatch(/reached its Slurm time limit/);
    expect(m.job(a).result).toBe("TIMEOUT");
    expect(names(m, a)).toEqual(expect.arrayContaining(["start", "exception", "finish", "release"]));
    cleanup();
  });

  it("a job preempted in Slurm (PREEMPTED) is a preempt exception", async () => {
    const cleanup = freshStatedir();
    const m = await start();
    // The test cluster's "urgent" partition preempts (cancels) "debug" jobs in its way;
    // both jobs want the whole node.
    const low = await m.submit(jobspec(["sleep", "300"], { exec: { name: "slurm", slurm: { args: ["--exclusive"] } } }));
    await waitFor(() => names(m, low).includes("start"), 30_000, "the low-tier job to start");
    const high = await m.submit(jobspec(["true"], { exec: { name: "slurm", slurm: { partition: "urgent", args: ["--exclusive"] } } }));
    await waitFor(() => [low, high].every((id) => m.job(id).state === "INACTIVE"), 60_000, "both jobs to end");
    expect(slurmState(m, low)).toBe("PREEMPTED");
    expect(fatal(m, low)).toMatchObject({ type: "preempt" });
    expect(String(fatal(m, low)?.note)).toMatch(/was preempted/);
    expect(names(m, low)).toEqual(expect.arrayContaining(["start", "exception", "finish", "release"]));
    expect(m.job(high)).toMatchObject({ result: "COMPLETED" });
    cleanup();
  });

  it("the job's node set down in Slurm (NODE_FAIL) is a node-fail exception", async () => {
    const cleanup = freshStatedir();
    const m = await start();
    // --no-requeue: Slurm would otherwise put the job back in its queue.
    const a = await m.submit(jobspec(["sleep", "300"], { exec: { name: "slurm", slurm: { args: ["--no-requeue"] } } }));
    await waitFor(() => names(m, a).includes("start"), 30_000, "the job to start");
    const node = cluster.nodeName();
    cluster.run("scontrol", ["update", `nodename=${node}`, "state=down", "reason=jobtap-test"]);
    try {
      await waitFor(() => m.job(a).state === "INACTIVE", 30_000, "the job to end");
    } finally {
      await cluster.resumeNode(node);
    }
    expect(slurmState(m, a)).toBe("NODE_FAIL");
    expect(fatal(m, a)).toMatchObject({ type: "node-fail" });
    expect(String(fatal(m, a)?.note)).toMatch(/its node failed/);
    cleanup();
  });

  it("a restart reattaches jobs running on Slurm by their saved id; nothing is submitted twice", async () => {
    const cleanup = freshStatedir();
    const first = await start();
    const flag = join(work, "restart-go");
    const a = await first.submit(jobspec(["sh", "-c", `while [ ! -e ${flag} ]; do sleep 0.1; done; exit 4`]));
    const b = await first.submit(jobspec(["sh", "-c", `while [ ! -e ${flag} ]; do sleep 0.1; done`], { exec: { name: "slurm", slurm: { args: ["--hold"] } } }));
    await waitFor(() => names(first, a).includes("start") && slurmId(first, b) !== undefined, 30_000, "a to start and b to be held in Slurm");
    const ids = [slurmId(first, a), slurmId(first, b)];
    await open.splice(0)[0]!.close();
    const before = slurmJobs();

    const second = await start();
    expect(second.job(a).state).toBe("RUN");
    cluster.run("scontrol", ["release", ids[1]!]);
    mkdirSync(flag);
    await waitFor(() => [a, b].every((id) => second.job(id).state === "INACTIVE"), 60_000, "the reattached jobs to end");
    expect(second.job(a)).toMatchObject({ result: "FAILED", waitstatus: 4 << 8 });
    expect(second.job(b)).toMatchObject({ result: "COMPLETED" });
    expect(names(second, a).filter((n) => n === "start")).toHaveLength(1);
    expect(names(second, b).filter((n) => n === "start")).toHaveLength(1);
    expect([slurmId(second, a), slurmId(second, b)]).toEqual(ids);
    expect(slurmJobs()).toBe(before);
    cleanup();
  });
});

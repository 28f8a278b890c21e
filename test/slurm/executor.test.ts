/**
 * The slurm executor against a real local cluster (scripts/slurm-cluster.sh), driven
 * directly with a recording report: submission, output and exit status, failures, cancel,
 * the time limit, Slurm-side cancels, refused jobs, reattach by the saved id or by the
 * comment, and slurmctld being down (Slurm-side ends, TIMEOUT, PREEMPTED and NODE_FAIL, are
 * tested through the manager: manager.test.ts). Conditions are polled with deadlines; no
 * timings.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RealClock, SimulatedClock } from "../../src/manager/base/clock.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { defaultSlurmConfig } from "../../plugins-builtin/exec-slurm/config.js";
import { FINAL_STATE_KEY, SAVED_ID_KEY, SlurmExecutor, type SlurmExecConfig } from "../../plugins-builtin/exec-slurm/executor.js";
import type { ExecJob, ExecReport } from "../../src/plugin.js";
import type { Jobspec } from "../../src/manager/port/records.js";
import { waitFor } from "../e2e/harness.js";
import { skipSlurm, TestCluster } from "./cluster.js";

type Entry = { id: JobId; name: string; context?: Record<string, unknown> };

/** Records what the executor reports, as the manager would post it. */
class Recorder implements ExecReport {
  readonly entries: Entry[] = [];
  readonly logs: string[] = [];
  killOnException?: (id: JobId) => void;
  start(id: JobId) {
    this.entries.push({ id, name: "start" });
  }
  finish(id: JobId, status: number) {
    this.entries.push({ id, name: "finish", context: { status } });
  }
  release(id: JobId) {
    this.entries.push({ id, name: "release" });
  }
  exception(id: JobId, type: string, note: string) {
    this.entries.push({ id, name: "exception", context: { type, note } });
    // The manager answers a fatal exception by killing the job on its executor.
    this.killOnException?.(id);
  }
  /** Slurm's final state and reason per job (the last `save`, kept apart from the sequence). */
  readonly finals = new Map<JobId, Record<string, unknown>>();
  save(id: JobId, data: Record<string, unknown>) {
    if (FINAL_STATE_KEY in data) this.finals.set(id, data);
    else this.entries.push({ id, name: "exec-state", context: data });
  }
  log(_level: string, message: string) {
    this.logs.push(message);
  }
  of(id: JobId): Entry[] {
    return this.entries.filter((e) => e.id === id);
  }
  names(id: JobId): string[] {
    return this.of(id).map((e) => e.name);
  }
  released(id: JobId): boolean {
    return this.names(id).includes("release");
  }
}

let nextId = 1000n;

describe.skipIf(skipSlurm)("slurm executor on a real cluster", { timeout: 60_000 }, () => {
  let cluster: TestCluster;
  let work: string;
  const executors: SlurmExecutor[] = [];
  const config = (over: Partial<SlurmExecConfig> = {}): SlurmExecConfig => ({
    ...defaultSlurmConfig(),
    site: { slurmConf: cluster.conf, commandTimeoutMs: 10_000 },
    pollPeriodMs: 100,
    maxPollPeriodMs: 400,
    ...over,
  });
  const newExecutor = (rec: Recorder, over: Partial<SlurmExecConfig> = {}) => {
    const ex = new SlurmExecutor(new RealClock(), config(over), (_l, m) => rec.logs.push(m));
    rec.killOnException = (id) => ex.kill(id);
    executors.push(ex);
    return ex;
  };
  const job = (command: string[], extra: { duration?: number; system?: Record<string, unknown>; saved?: Record<string, unknown> } = {}): ExecJob => {
    const jobspec: Jobspec = {
      version: 1,
      resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
      tasks: [{ command, slot: "task", count: { per_slot: 1 } }],
      attributes: {
        system: { cwd: work, environment: { PATH: process.env.PATH ?? "/usr/bin:/bin", GREETING: "hi, there" }, ...extra.system },
      },
    };
    return { id: nextId++ as JobId, userid: 0, jobspec, R: undefined, duration: extra.duration ?? 0, saved: extra.saved ?? {} };
  };
  const slurmIdOf = (rec: Recorder, id: JobId) => rec.of(id).find((e) => e.name === "exec-state")?.context?.[SAVED_ID_KEY] as string | undefined;
  const squeueState = (slurmId: string) => cluster.run("squeue", ["-h", "-t", "all", "-j", slurmId, "-o", "%T"]).trim();

  beforeAll(() => {
    // Sixteen job slots: "many jobs" runs its twelve at once instead of two at a time.
    cluster = new TestCluster({ cpus: 16 }).start();
    work = join(cluster.dir, "work");
    mkdirSync(work);
  }, 60_000);
  afterAll(() => {
    for (const ex of executors) ex.close();
    cluster?.stop();
  });

  it("runs a job: its output, environment and exit status come back", async () => {
    const rec = new Recorder();
    const ex = newExecutor(rec);
    const j = job(["sh", "-c", 'echo "$GREETING from $JOBTAP_JOB_ID"; exit 3'], {
      system: { shell: { options: { output: { stdout: { path: "out-{{id}}.txt" } } } } },
    });
    ex.start(j, rec);
    await waitFor(() => rec.released(j.id), 30_000, "the job to be released");
    expect(rec.names(j.id)).toEqual(["exec-state", "start", "finish", "release"]);
    expect(rec.of(j.id)[2]!.context).toEqual({ status: 3 << 8 });
    expect(slurmIdOf(rec, j.id)).toMatch(/^\d+$/);
    // Slurm's final word is saved with the job before it is released (job why quotes it).
    expect(rec.finals.get(j.id)).toEqual({ slurm_state: "FAILED", slurm_reason: "NonZeroExitCode" });
    const f58 = (await import("../../src/manager/base/ids.js")).formatJobId(j.id);
    expect(readFileSync(join(work, `out-${f58}.txt`), "utf8")).toBe(`hi, there from ${f58}\n`);
    expect(ex.jobs()).toEqual([]);
  });

  it("many jobs are tracked with one squeue per poll", async () => {
    const rec = new Recorder();
    const ex = newExecutor(rec, { submitConcurrency: 8 });
    const jobs = Array.from({ length: 12 }, (_, i) => job(["sh", "-c", `exit ${i}`]));
    for (const j of jobs) ex.start(j, rec);
    await waitFor(() => jobs.every((j) => rec.released(j.id)), 45_000, "every job to be released");
    jobs.forEach((j, i) => expect(rec.of(j.id).find((e) => e.name === "finish")?.context).toEqual({ status: i << 8 }));
  });

  it("sbatch refusing a job is an exception naming Slurm's message; nothing starts", async () => {
    const rec = new Recorder();
    const ex = newExecutor(rec);
    const j = job(["true"], { system: { exec: { name: "slurm", slurm: { partition: "nosuchpartition" } } } });
    ex.start(j, rec);
    await waitFor(() => rec.released(j.id), 30_000, "the refused job to be released");
    expect(rec.names(j.id)).toEqual(["exception", "release"]);
    expect(rec.of(j.id)[0]!.context).toMatchObject({ type: "exec" });
    expect(String(rec.of(j.id)[0]!.context!.note)).toMatch(/sbatch refused the job: .*invalid partition/i);
  });

  it("sbatch refusing too many cores is an exception naming Slurm's message", async () => {
    const rec = new Recorder();
    const ex = newExecutor(rec);
    const j = job(["true"]);
    j.jobspec.resources = [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 10_000 }] }];
    ex.start(j, rec);
    await waitFor(() => rec.released(j.id), 30_000, "the refused job to be released");
    expect(rec.names(j.id)).toEqual(["exception", "release"]);
    expect(String(rec.of(j.id)[0]!.context!.note)).toMatch(/sbatch refused the job: .*more processors requested than permitted/i);
  });

  it("slurmctld stalled while sbatch runs: the killed sbatch's job is found by comment, never submitted twice", async () => {
    const rec = new Recorder();
    // sbatch is killed after 1 s; the stalled slurmctld still holds its request.
    const ex = newExecutor(rec, { site: { slurmConf: cluster.conf, commandTimeoutMs: 1_000 } });
    const j = job(["true"]);
    const comment = `jobtap:${j.id}`;
    const pid = Number(readFileSync(join(cluster.dir, "run", "slurmctld.pid"), "utf8").trim());
    process.kill(pid, "SIGSTOP");
    try {
      ex.start(j, rec);
      await waitFor(() => rec.logs.some((m) => /sbatch did not complete/.test(m)), 30_000, "sbatch to be killed");
    } finally {
      process.kill(pid, "SIGCONT");
    }
    await waitFor(() => rec.released(j.id), 30_000, "the job to be released");
    expect(rec.names(j.id)).toEqual(["exec-state", "start", "finish", "release"]);
    const withComment = cluster.run("squeue", ["-h", "-t", "all", "-O", "JobID:|,Comment:|"]).split("\n").filter((l) => l.split("|")[1] === comment);
    expect(withComment).toHaveLength(1);
  });

  it("cancel: kill scancels the Slurm job; finish carries the signal", async () => {
    const rec = new Recorder();
    const ex = newExecutor(rec);
    const j = job(["sleep", "300"]);
    ex.start(j, rec);
    await waitFor(() => rec.names(j.id).includes("start"), 30_000, "the job to start");
    ex.kill(j.id);
    await waitFor(() => rec.released(j.id), 30_000, "the cancelled job to be released");
    expect(rec.names(j.id)).toEqual(["exec-state", "start", "finish", "release"]);
    expect(squeueState(slurmIdOf(rec, j.id)!)).toBe("CANCELLED");
    const status = rec.of(j.id)[2]!.context!.status as number;
    expect(status === 0 ? "exited 0" : status).not.toBe("exited 0");
  });

  it("a job cancelled while pending in Slurm is released without start", async () => {
    const rec = new Recorder();
    const ex = newExecutor(rec);
    // --hold keeps it pending in Slurm.
    const j = job(["true"], { system: { exec: { name: "slurm", slurm: { args: ["--hold"] } } } });
    ex.start(j, rec);
    await waitFor(() => slurmIdOf(rec, j.id) !== undefined, 30_000, "the job to be submitted");
    ex.kill(j.id);
    await waitFor(() => rec.released(j.id), 30_000, "the cancelled job to be released");
    expect(rec.names(j.id)).toEqual(["exec-state", "release"]);
  });

  it("time limit: a timeout exception, then scancel", async () => {
    const rec = new Recorder();
    const ex = newExecutor(rec);
    const j = job(["sleep", "300"], { duration: 1 });
    ex.start(j, rec);
    await waitFor(() => rec.released(j.id), 30_000, "the timed-out job to be released");
    expect(rec.names(j.id)).toEqual(["exec-state", "start", "exception", "finish", "release"]);
    expect(rec.of(j.id)[2]!.context).toMatchObject({ type: "timeout" });
    expect(squeueState(slurmIdOf(rec, j.id)!)).toBe("CANCELLED");
  });

  it("a job cancelled on the Slurm side is a cancel exception", async () => {
    const rec = new Recorder();
    const ex = newExecutor(rec);
    const j = job(["sleep", "300"]);
    ex.start(j, rec);
    await waitFor(() => rec.names(j.id).includes("start"), 30_000, "the job to start");
    cluster.run("scancel", [slurmIdOf(rec, j.id)!]);
    await waitFor(() => rec.released(j.id), 30_000, "the job to be released");
    expect(rec.names(j.id)).toEqual(["exec-state", "start", "exception", "finish", "release"]);
    expect(rec.of(j.id)[2]!.context).toMatchObject({ type: "cancel" });
    expect(String(rec.of(j.id)[2]!.context!.note)).toMatch(/cancelled on the Slurm side/);
  });

  it("a command that cannot be executed fails the job with its status", async () => {
    const rec = new Recorder();
    const ex = newExecutor(rec);
    const j = job(["/nonexistent/command"]);
    ex.start(j, rec);
    await waitFor(() => rec.released(j.id), 30_000, "the job to be released");
    expect(rec.names(j.id)).toEqual(["exec-state", "start", "finish", "release"]);
    expect(rec.of(j.id)[2]!.context).toEqual({ status: 127 << 8 });
  });

  it("reattach by the saved id: nothing is submitted again, the job is followed to its end", async () => {
    const rec = new Recorder();
    const first = newExecutor(rec);
    const flag = join(work, "reattach-go");
    const j = job(["sh", "-c", `while [ ! -e ${flag} ]; do sleep 0.1; done; exit 7`]);
    first.start(j, rec);
    await waitFor(() => rec.names(j.id).includes("start"), 30_000, "the job to start");
    first.close();
    const slurmId = slurmIdOf(rec, j.id)!;
    const before = cluster.run("squeue", ["-h", "-t", "all", "-o", "%i"]).trim().split("\n").length;
    const rec2 = new Recorder();
    const second = newExecutor(rec2);
    second.reattach({ ...j, startedAt: Date.now() / 1000, saved: { [SAVED_ID_KEY]: slurmId } }, rec2);
    await waitFor(() => second.jobs()[0]?.phase === "tracked", 10_000, "the job to be tracked");
    mkdirSync(flag);
    await waitFor(() => rec2.released(j.id), 30_000, "the reattached job to be released");
    expect(rec2.names(j.id)).toEqual(["finish", "release"]);
    expect(rec2.of(j.id)[0]!.context).toEqual({ status: 7 << 8 });
    expect(cluster.run("squeue", ["-h", "-t", "all", "-o", "%i"]).trim().split("\n").length).toBe(before);
  });

  it("reattach without a saved id finds the job by its comment instead of resubmitting", async () => {
    const rec = new Recorder();
    const first = newExecutor(rec);
    const j = job(["sleep", "300"]);
    first.start(j, rec);
    await waitFor(() => slurmIdOf(rec, j.id) !== undefined, 30_000, "the job to be submitted");
    first.close();
    const rec2 = new Recorder();
    const second = newExecutor(rec2);
    second.reattach({ ...j, saved: {} }, rec2);
    await waitFor(() => rec2.names(j.id).includes("exec-state"), 30_000, "the job to be found");
    expect(slurmIdOf(rec2, j.id)).toBe(slurmIdOf(rec, j.id));
    await waitFor(() => rec2.names(j.id).includes("start"), 30_000, "the job to start");
    second.kill(j.id);
    await waitFor(() => rec2.released(j.id), 30_000, "the job to be released");
  });

  it("a saved id Slurm does not know is a vanished job", async () => {
    const rec = new Recorder();
    const ex = newExecutor(rec);
    const j = job(["true"]);
    ex.reattach({ ...j, startedAt: Date.now() / 1000, saved: { [SAVED_ID_KEY]: "987654" } }, rec);
    await waitFor(() => rec.released(j.id), 30_000, "the job to be released");
    expect(rec.names(j.id)).toEqual(["exception", "finish", "release"]);
    expect(String(rec.of(j.id)[0]!.context!.note)).toMatch(/Slurm job 987654 vanished/);
  });

  it("squeue failing for good (the executor's SLURM_CONF broken): after max-poll-failures the jobs end with Slurm's error, a cancel too", async () => {
    const rec = new Recorder();
    const ex = newExecutor(rec, { maxPollFailures: 3 });
    const running = job(["sleep", "300"]);
    const cancelled = job(["sleep", "300"]);
    ex.start(running, rec);
    ex.start(cancelled, rec);
    await waitFor(() => rec.names(running.id).includes("start") && rec.names(cancelled.id).includes("start"), 30_000, "the jobs to start");
    // From now on every Slurm command of this executor has no configuration source.
    // squeue retries a missing slurm.conf for a minute: each command is killed after 2 s.
    ex.reconfigure(config({ site: { slurmConf: join(work, "no-such-slurm.conf"), commandTimeoutMs: 2_000 }, maxPollFailures: 3 }));
    ex.kill(cancelled.id);
    await waitFor(() => rec.released(running.id) && rec.released(cancelled.id), 30_000, "both jobs to be given up");
    for (const j of [running, cancelled]) {
      expect(rec.names(j.id)).toEqual(["exec-state", "start", "exception", "finish", "release"]);
      const note = String(rec.of(j.id)[2]!.context!.note);
      expect(note).toMatch(new RegExp(`^Slurm job ${slurmIdOf(rec, j.id)}: Slurm could not be asked 3 times in a row \\((squeue|scancel): `));
      expect(note).toMatch(/no-such-slurm\.conf|configuration/i);
    }
    expect(rec.logs.filter((m) => /3 Slurm polls failed in a row/.test(m))).toHaveLength(1);
    for (const j of [running, cancelled]) cluster.run("scancel", [slurmIdOf(rec, j.id)!]);
  });

  it("slurmctld not answering: polls back off (doubling up to max-poll-period), then resume at the poll period", async () => {
    // Timers on a simulated clock, whose every delay is recorded; Slurm's commands are real.
    class RecordingClock extends SimulatedClock {
      readonly delays: number[] = [];
      override setTimeout(fn: () => void, ms: number) {
        this.delays.push(ms);
        return super.setTimeout(fn, ms);
      }
    }
    const clock = new RecordingClock();
    const rec = new Recorder();
    const ex = new SlurmExecutor(clock, config({ site: { slurmConf: cluster.conf, commandTimeoutMs: 1_000 } }), (_l, m) => rec.logs.push(m));
    executors.push(ex);
    const slurmId = cluster.run("sbatch", ["--parsable", "--output=/dev/null", "--wrap=sleep 300"]).trim();
    await waitFor(() => squeueState(slurmId) === "RUNNING", 30_000, "the Slurm job to run");
    const j = job(["sleep", "300"]);
    ex.reattach({ ...j, startedAt: clock.now() / 1000, saved: { [SAVED_ID_KEY]: slurmId } }, rec);
    /** Fires the next poll and waits for it to schedule the one after; returns that delay. */
    const nextPoll = async (): Promise<number> => {
      const seen = clock.delays.length;
      await clock.advance(clock.delays.at(-1)!);
      await waitFor(() => clock.delays.length > seen, 30_000, "the next poll to be scheduled");
      return clock.delays.at(-1)!;
    };
    expect(await nextPoll()).toBe(100);
    const pid = Number(readFileSync(join(cluster.dir, "run", "slurmctld.pid"), "utf8").trim());
    process.kill(pid, "SIGSTOP");
    const delays: number[] = [];
    try {
      // Each squeue is killed after command-timeout (1 s): a failed poll.
      for (let i = 0; i < 4; i++) delays.push(await nextPoll());
    } finally {
      process.kill(pid, "SIGCONT");
    }
    expect(delays).toEqual([200, 400, 400, 400]);
    expect(rec.logs.filter((m) => /squeue failed, jobs keep their state and polls back off/.test(m))).toHaveLength(1);
    expect(rec.names(j.id)).toEqual([]);
    expect(await nextPoll()).toBe(100);
    expect(rec.names(j.id)).toEqual([]);
    ex.close();
    cluster.run("scancel", [slurmId]);
  });

  it("slurmctld down: jobs keep their state, polls back off, then the job is followed again", async () => {
    const rec = new Recorder();
    const ex = newExecutor(rec);
    const flag = join(work, "down-go");
    const j = job(["sh", "-c", `while [ ! -e ${flag} ]; do sleep 0.1; done; exit 0`]);
    ex.start(j, rec);
    await waitFor(() => rec.names(j.id).includes("start"), 30_000, "the job to start");
    const pid = readFileSync(join(cluster.dir, "run", "slurmctld.pid"), "utf8").trim();
    process.kill(Number(pid), "SIGTERM");
    await waitFor(() => !cluster.processes().includes(Number(pid)), 10_000, "slurmctld to stop");
    await waitFor(() => rec.logs.some((m) => /squeue failed, jobs keep their state/.test(m)), 30_000, "a failed poll");
    expect(rec.names(j.id)).toEqual(["exec-state", "start"]);
    cluster.restartController();
    mkdirSync(flag);
    await waitFor(() => rec.released(j.id), 45_000, "the job to be released after slurmctld is back");
    expect(rec.names(j.id)).toEqual(["exec-state", "start", "finish", "release"]);
    expect(rec.of(j.id)[2]!.context).toEqual({ status: 0 });
  });

  // Last: it wipes every job the cluster knows.
  it("a running job slurmctld forgot (restarted with its state cleared) is a vanished job", async () => {
    const rec = new Recorder();
    const ex = newExecutor(rec);
    const j = job(["sleep", "300"]);
    ex.start(j, rec);
    await waitFor(() => rec.names(j.id).includes("start"), 30_000, "the job to start");
    const pid = Number(readFileSync(join(cluster.dir, "run", "slurmctld.pid"), "utf8").trim());
    process.kill(pid, "SIGTERM");
    await waitFor(() => !cluster.processes().includes(pid), 10_000, "slurmctld to stop");
    cluster.restartController(true);
    await waitFor(() => rec.released(j.id), 45_000, "the forgotten job to be released");
    expect(rec.names(j.id)).toEqual(["exec-state", "start", "exception", "finish", "release"]);
    expect(rec.of(j.id)[2]!.context).toMatchObject({ type: "exec" });
    expect(String(rec.of(j.id)[2]!.context!.note)).toMatch(new RegExp(`Slurm job ${slurmIdOf(rec, j.id)} vanished`));
    expect(rec.finals.has(j.id)).toBe(false);
  });
});

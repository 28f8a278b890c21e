/** exec-slurm without a cluster: jobspec → sbatch, squeue/sacct, states, [exec.slurm], routes, the helper. */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import type { Jobspec } from "../../src/manager/port/records.js";
import { readSlurmConfig } from "../../plugins-builtin/exec-slurm/config.js";
import { parseSlurmGridResource, slurmRouting } from "../../plugins-builtin/exec-slurm/route.js";
import { SpawnPool } from "../../plugins-builtin/exec-slurm/spawner.js";
import { outcomeOf, parseSacct, parseSqueue } from "../../plugins-builtin/exec-slurm/status.js";
import { batchScript, sbatchRequest, shellQuote, slurmTime } from "../../plugins-builtin/exec-slurm/submit.js";

function jobspec(system: Record<string, unknown> = {}, slot: Record<string, unknown>[] = [{ type: "core", count: 1 }], count = 1): Jobspec {
  return {
    version: 1,
    resources: [{ type: "slot", count, label: "task", with: slot }],
    tasks: [{ command: ["python3", "-c", "print('it''s')"], slot: "task", count: { per_slot: 1 } }],
    attributes: { system },
  };
}

const request = (js: Jobspec, duration = 0, site = {}) => sbatchRequest(js, "ƒAB", "42", duration, site, { PATH: "/bin", HOME: "/root" });

describe("jobspec → sbatch", () => {
  it("maps tasks, cores, gpus, memory, duration, name, cwd, output and the comment", () => {
    const js = jobspec(
      {
        cwd: "/data/run",
        job: { name: "sim" },
        shell: { options: { output: { stdout: { path: "out-{{id}}.txt" }, stderr: { path: "/logs/100%.err" } } } },
        environment: { A: "x,y=z" },
      },
      [{ type: "core", count: 4 }, { type: "gpu", count: 2 }, { type: "memory", count: 2, unit: "GB" }],
      3,
    );
    const r = request(js, 90);
    expect(r.args).toEqual([
      "--parsable",
      "--job-name=sim",
      "--comment=jobtap:42",
      "--ntasks=3",
      "--cpus-per-task=4",
      "--gpus-per-task=2",
      "--mem-per-cpu=512M",
      "--time=2",
      "--chdir=/data/run",
      "--output=out-ƒAB.txt",
      "--error=/logs/100%%.err",
      "--export=ALL",
    ]);
    // The environment goes whole, as sbatch's own (values with commas survive).
    expect(r.env).toEqual({ A: "x,y=z", JOBTAP_JOB_ID: "ƒAB" });
    expect(r.script).toBe(`#!/bin/sh\n# submitted by jobtap\nexec srun python3 -c ${shellQuote("print('it''s')")}\n`);
  });

  it("a single task is exec'd directly, with the daemon's environment when the job has none", () => {
    const r = request(jobspec());
    expect(r.script).toContain("\nexec python3 ");
    expect(r.env).toEqual({ PATH: "/bin", HOME: "/root", JOBTAP_JOB_ID: "ƒAB" });
    expect(r.args).toContain("--job-name=python3");
    expect(r.args.some((a) => a.startsWith("--time"))).toBe(false);
  });

  it("the job's partition/account/qos win over the site's; extra args come after", () => {
    const site = { partition: "batch", account: "site", qos: "low", args: ["--exclusive"] };
    const js = jobspec({ exec: { name: "slurm", slurm: { partition: "gpu", args: ["--nice=10"] } } });
    const r = request(js, 0, site);
    expect(r.args.slice(-6)).toEqual(["--partition=gpu", "--account=site", "--qos=low", "--exclusive", "--nice=10", "--export=ALL"]);
  });

  it("bad job settings are errors naming the attribute", () => {
    expect(() => request(jobspec({ exec: { name: "slurm", slurm: { partiton: "x" } } }))).toThrow(/attributes.system.exec.slurm.partiton: unknown key/);
    expect(() => request(jobspec({ exec: { name: "slurm", slurm: { args: "--x" } } }))).toThrow(/exec.slurm.args: must be an array of strings/);
    const noCommand = { ...jobspec(), tasks: [{ command: [], slot: "task" }] };
    expect(() => request(noCommand)).toThrow(/tasks\[0\].command/);
  });

  it("time rounds up to whole minutes; quoting survives /bin/sh", () => {
    expect([slurmTime(0), slurmTime(1), slurmTime(60), slurmTime(61), slurmTime(Infinity)]).toEqual([undefined, "1", "1", "2", undefined]);
    const words = ["a b", "it's", "$HOME", "`x`", "\\", "", "ƒ"];
    const out = spawnSync("sh", ["-c", `printf '%s\\n' ${words.map(shellQuote).join(" ")}`], { encoding: "utf8" }).stdout;
    expect(out).toBe(words.map((w) => `${w}\n`).join(""));
    expect(batchScript(["true"], 1)).toMatch(/\nexec true\n$/);
  });
});

describe("squeue and sacct", () => {
  it("parses squeue --Format lines, ignoring others", () => {
    const m = parseSqueue("12|FAILED|768|NonZeroExitCode|\nsqueue: warning\n13|PENDING|0|Priority|\n");
    expect([...m.keys()]).toEqual(["12", "13"]);
    expect(m.get("12")).toEqual({ slurmId: "12", state: "FAILED", waitStatus: 768, reason: "NonZeroExitCode" });
  });

  it("parses sacct: code:signal becomes a wait status; 'CANCELLED by 0' is CANCELLED", () => {
    const m = parseSacct("7|COMPLETED|0:0|None\n8|FAILED|2:0|None\n9|CANCELLED by 0|0:15|None\n9.batch|CANCELLED|0:15|\n");
    expect(m.get("8")!.waitStatus).toBe(2 << 8);
    expect(m.get("9")).toMatchObject({ state: "CANCELLED", waitStatus: 15 });
    expect(m.has("9.batch")).toBe(false);
  });

  it("maps Slurm states to waiting, running, or an end with the matching exception", () => {
    const o = (state: string, killed = false) => outcomeOf({ slurmId: "5", state, waitStatus: 0, reason: "None" }, "5", killed);
    expect(o("PENDING")).toEqual({ kind: "waiting" });
    expect(o("REQUEUED")).toEqual({ kind: "waiting" });
    expect(o("RUNNING")).toEqual({ kind: "running" });
    expect(o("COMPLETING")).toEqual({ kind: "running" });
    expect(o("COMPLETED")).toEqual({ kind: "ended" });
    expect(o("FAILED")).toEqual({ kind: "ended" });
    expect(o("CANCELLED", true)).toEqual({ kind: "ended" });
    const types = ["CANCELLED", "TIMEOUT", "DEADLINE", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "OUT_OF_MEMORY", "WEIRD"].map(
      (s) => (o(s) as { exception?: { type: string } }).exception?.type,
    );
    expect(types).toEqual(["cancel", "timeout", "timeout", "node-fail", "preempt", "exec", "exec", "exec"]);
    expect(outcomeOf({ slurmId: "5", state: "NODE_FAIL", waitStatus: 0, reason: "NodeDown" }, "5", false)).toEqual({
      kind: "ended",
      exception: { type: "node-fail", note: "Slurm job 5 ended: its node failed (NodeDown)" },
    });
  });
});

describe("[exec.slurm]", () => {
  it("reads every key", () => {
    const c = readSlurmConfig({
      exec: {
        slurm: {
          bindir: "/opt/slurm/bin",
          "slurm-conf": "/etc/slurm/x.conf",
          partition: "p",
          account: "a",
          qos: "q",
          "sbatch-args": ["--exclusive"],
          "poll-period": "2s",
          "max-poll-period": "1m",
          "command-timeout": 10,
          "submit-concurrency": 2,
          "max-poll-failures": 4,
        },
      },
    });
    expect(c).toEqual({
      site: { bindir: "/opt/slurm/bin", slurmConf: "/etc/slurm/x.conf", commandTimeoutMs: 10_000 },
      choices: { partition: "p", account: "a", qos: "q", args: ["--exclusive"] },
      pollPeriodMs: 2000,
      maxPollPeriodMs: 60_000,
      maxPollFailures: 4,
      submitConcurrency: 2,
    });
  });

  it("every error names its TOML path", () => {
    const bad = (slurm: unknown) => () => readSlurmConfig({ exec: { slurm } });
    expect(bad({ parition: "x" })).toThrow(/^\[exec.slurm\].parition: unknown key/);
    expect(bad({ "poll-period": "soon" })).toThrow(/^\[exec.slurm\].poll-period: must be a duration/);
    expect(bad({ "poll-period": 0 })).toThrow(/^\[exec.slurm\].poll-period: must be more than 0/);
    expect(bad({ partition: 3 })).toThrow(/^\[exec.slurm\].partition: must be a non-empty string/);
    expect(bad({ "sbatch-args": "--x" })).toThrow(/^\[exec.slurm\].sbatch-args: must be an array of strings/);
    expect(bad({ "submit-concurrency": 0 })).toThrow(/^\[exec.slurm\].submit-concurrency: must be an integer >= 1/);
    expect(bad({ "max-poll-failures": 1.5 })).toThrow(/^\[exec.slurm\].max-poll-failures: must be an integer >= 1, got 1.5/);
    expect(bad("x")).toThrow(/^\[exec.slurm\]: must be a table/);
  });
});

describe("router destination GridResource = \"batch slurm [partition]\"", () => {
  it("parses the GridResource", () => {
    expect(parseSlurmGridResource("batch slurm")).toEqual({});
    expect(parseSlurmGridResource("  batch  SLURM gpu ")).toEqual({ partition: "gpu" });
    expect(parseSlurmGridResource("batch pbs")).toBeUndefined();
    expect(parseSlurmGridResource("condor ce.example.org ce.example.org:9619")).toBeUndefined();
    expect(parseSlurmGridResource("batch slurm a b")).toEqual({ error: 'GridResource "batch slurm a b": expected "batch slurm [partition]"' });
    expect(parseSlurmGridResource("batch slurm a;b")).toMatchObject({ error: expect.stringMatching(/not a partition name/) });
  });

  it("maps the routed ad to the copy's Slurm settings", () => {
    const ad = { batchqueue: "short", BatchProject: "physics", BatchExtraSubmitArgs: " --nice=5  --exclusive ", BatchRuntime: 600 };
    expect(slurmRouting({}, ad)).toEqual({
      exec: { name: "slurm", slurm: { partition: "short", account: "physics", args: ["--nice=5", "--exclusive"] } },
      duration: 600,
    });
    expect(slurmRouting({ partition: "gpu" }, ad)).toMatchObject({ exec: { slurm: { partition: "gpu" } } });
    expect(slurmRouting({}, {})).toEqual({ exec: { name: "slurm", slurm: {} } });
    expect(slurmRouting({}, { BatchRuntime: "long" })).toEqual({ error: 'BatchRuntime: must be a number of seconds > 0, got "long"' });
  });
});

describe("the commands' helper process", () => {
  it("hands back a command's status and output; output over the cap is a failure, never a partial answer", async () => {
    const small = new SpawnPool(1, 16);
    const run = (pool: SpawnPool, text: string) =>
      pool.run({ file: "/bin/sh", args: ["-c", `printf '%s' "$1"; exit 3`, "sh", text], env: { PATH: "/usr/bin:/bin" }, input: "", timeoutMs: 10_000 });
    try {
      expect(await run(small, "12|RUNNING|0|")).toEqual({ status: 3, stdout: "12|RUNNING|0|", stderr: "" });
      expect(await run(small, "12|RUNNING|0|None|\n13|")).toEqual({ status: null, stdout: "", stderr: "/bin/sh: output over 16 bytes, not read" });
    } finally {
      small.close();
    }
  });
});

import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseCondorConfig, readCondorConfigFile } from "../../src/condor/config-reader.js";
import { cronBool, cronTableFromConfig, parseCronEnv, parseCronPeriod, splitCronArgs } from "../../plugins-builtin/condor-cron/table.js";

const example = readCondorConfigFile(fileURLToPath(new URL("./fixtures/cron-example.config", import.meta.url)), {
  defaults: { LIBEXEC: "/usr/libexec/condor" },
});

const base = { env: {}, reconfig: false, kill: false, reconfigRerun: false, prefix: "", args: [] };

describe("the seed startd/schedd/benchmark cron example", () => {
  it("startd cron: three jobs with their modes, periods, loads and flags", () => {
    const t = cronTableFromConfig(example, "STARTD_CRON_");
    expect(t.maxJobLoad).toBe(0.2);
    expect(t.skipped).toEqual([]);
    expect(t.jobs).toEqual([
      {
        ...base,
        name: "test",
        executable: "/modules/test",
        mode: "OneShot",
        reconfigRerun: true,
        prefix: "test_",
        kill: true,
        args: ["abc", "123"],
        slots: [1],
        jobLoad: 0.01,
      },
      { ...base, name: "date", executable: "/modules/date", mode: "Periodic", period: 15, jobLoad: 0.01 },
      { ...base, name: "foo", executable: "/modules/foo", mode: "Periodic", period: 600, prefix: "Foo", jobLoad: 0.2 },
    ]);
  });

  it("benchmarks: OnDemand jobs with load 1.0", () => {
    const t = cronTableFromConfig(example, "BENCHMARKS_");
    expect(t.maxJobLoad).toBe(1);
    expect(t.jobs).toEqual([
      { ...base, name: "mips", executable: "/usr/libexec/condor/condor_mips", mode: "OnDemand", jobLoad: 1 },
      { ...base, name: "kflops", executable: "/usr/libexec/condor/condor_kflops", mode: "OnDemand", jobLoad: 1 },
    ]);
  });

  it("schedd cron: a OneShot job ignores its PERIOD", () => {
    const t = cronTableFromConfig(example, "SCHEDD_CRON_");
    expect(t.maxJobLoad).toBe(0.1);
    expect(t.jobs).toEqual([
      {
        ...base,
        name: "test",
        executable: "/modules/test",
        mode: "OneShot",
        reconfigRerun: true,
        prefix: "test_",
        kill: true,
        args: ["abc", "123"],
        jobLoad: 0.01,
        notes: [`SCHEDD_CRON_test_PERIOD (${fileURLToPath(new URL("./fixtures/cron-example.config", import.meta.url))}:62) is ignored for a OneShot job`],
      },
    ]);
  });
});

describe("cron job validation", () => {
  it("skips bad jobs with the reason and the knob's location", () => {
    const c = parseCondorConfig(
      [
        "STARTD_CRON_JOBLIST = noexe badmode badperiod noperiod ok badcond",
        "STARTD_CRON_BADMODE_EXECUTABLE = /x",
        "STARTD_CRON_BADMODE_MODE = Sometimes",
        "STARTD_CRON_BADPERIOD_EXECUTABLE = /x",
        "STARTD_CRON_BADPERIOD_PERIOD = 5d",
        "STARTD_CRON_NOPERIOD_EXECUTABLE = /x",
        "STARTD_CRON_OK_EXECUTABLE = /x",
        "STARTD_CRON_OK_MODE = waitforexit",
        "STARTD_CRON_OK_PERIOD = 0",
        'STARTD_CRON_OK_ENV = "A=1 B=\'two words\'"',
        "STARTD_CRON_OK_SLOTS = 1, x",
        "STARTD_CRON_OK_METRICS = SUM:Cpus, PEAK:Memory, MAX:Disk",
        "STARTD_CRON_BADCOND_EXECUTABLE = /x",
        "STARTD_CRON_BADCOND_MODE = OneShot",
        "STARTD_CRON_BADCOND_CONDITION = (a ==",
      ].join("\n"),
      { file: "cron.cfg" },
    );
    const t = cronTableFromConfig(c, "STARTD_CRON_");
    expect(t.skipped).toEqual([
      { job: "noexe", reason: "STARTD_CRON_noexe_EXECUTABLE is not set" },
      { job: "badmode", reason: "STARTD_CRON_badmode_MODE = Sometimes (cron.cfg:3) is not Periodic, WaitForExit, OneShot or OnDemand" },
      { job: "badperiod", reason: "STARTD_CRON_badperiod_PERIOD = 5d (cron.cfg:5) is not a period (N, Ns, Nm, Nh)" },
      { job: "noperiod", reason: "STARTD_CRON_noperiod_PERIOD must be set and non-zero for a Periodic job" },
      { job: "badcond", reason: expect.stringMatching(/^STARTD_CRON_badcond_CONDITION \(cron\.cfg:15\) does not parse/) },
    ]);
    expect(t.jobs).toHaveLength(1);
    expect(t.jobs[0]).toMatchObject({
      name: "ok",
      mode: "WaitForExit",
      period: 0,
      env: { A: "1", B: "two words" },
      metrics: [{ kind: "SUM", name: "Cpus" }, { kind: "PEAK", name: "Memory" }],
      notes: ['STARTD_CRON_ok_METRICS (cron.cfg:12): item "MAX:Disk" is not SUM:<Name> or PEAK:<Name>; ignored'],
    });
    expect(t.jobs[0]!.slots).toBeUndefined();
  });

  it("HTCondor's small parsers: booleans by first letter, periods, args and env", () => {
    expect([cronBool("True"), cronBool("t"), cronBool("yes"), cronBool("1"), cronBool(undefined)]).toEqual([true, true, false, false, false]);
    expect([parseCronPeriod("15s"), parseCronPeriod("10M"), parseCronPeriod("1h"), parseCronPeriod("300"), parseCronPeriod("x")]).toEqual([
      15, 600, 3600, 300, undefined,
    ]);
    expect(splitCronArgs(`"a 'b c' 'it''s'"`)).toEqual(["a", "b c", "it's"]);
    expect(parseCronEnv("A=1;B=x y")).toEqual({ A: "1", B: "x y" });
    expect(() => parseCronEnv("JUNK")).toThrow(/"JUNK" is not NAME=value/);
  });
});

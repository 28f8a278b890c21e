import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ClassAd, PluginContext } from "../../src/plugin.js";
import { host, settle, writeScript, type TestHost } from "./helpers.js";

let h: TestHost | undefined;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "jobtap-cron-"));
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const script = (name: string, body: string): string => writeScript(dir, name, body);

/** Lets real processes run for a while without moving simulated time. */
async function realWait(t: TestHost, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await t.advance(0);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const lines = (path: string) => (existsSync(path) ? readFileSync(path, "utf8").split("\n").filter((l) => l !== "") : []);
/** An attribute's value, undefined when the ad lacks it. */
const attr = (ad: ClassAd | undefined, name: string) => (ad?.has(name) ? ad.evaluate(name) : undefined);
const slotAttr = (t: TestHost, slot: number, name: string) => attr(t.manager.hostAds?.slotAd(slot), name);
const machineAttr = (t: TestHost, name: string) => attr(t.manager.hostAds?.machineAd(), name);
const cronHost = (conf: Record<string, unknown>, slots = 1) =>
  host({}, { plugin: "condor-cron", conf, slots: [{ count: slots, cores: 1 }] });
const condorFile = (text: string) => {
  const path = join(dir, "50-cron");
  writeFileSync(path, text);
  return path;
};
const list = async (t: TestHost) => (await t.plugins.query("condor-cron")) as { jobs: Array<Record<string, unknown>>; skipped: Array<Record<string, unknown>> };

describe("condor-cron: the HTCondor manual's example, pasted", () => {
  it("runs the startd, benchmark and schedd jobs and publishes into slot and machine ads", async () => {
    mkdirSync(join(dir, "modules"));
    mkdirSync(join(dir, "libexec"));
    script("modules/test", `echo "Args = \\"$*\\""\necho "Name = \\"$STARTD_CRON_NAME $SCHEDD_CRON_NAME\\""\necho "ConfigVal = \\"$STARTD_CONFIG_VAL$SCHEDD_CONFIG_VAL\\""`);
    script("modules/date", `echo run >> ${dir}/date.log\necho "Date = $(wc -l < ${dir}/date.log)"`);
    script("modules/foo", `echo "Load = 42"`);
    script("libexec/condor_mips", `echo "Mips = 1000"`);
    script("libexec/condor_kflops", `echo "KFlops = 500"`);
    const manual = readFileSync(new URL("../fixtures/condor-cron-manual.txt", import.meta.url), "utf8");
    const file = condorFile(`ROOT = ${dir}\nRELEASE_DIR = /usr\nLIBEXEC = ${dir}/libexec\n${manual}`);
    const t = (h = await cronHost({ condor_config: file }, 2));
    await settle(t, () => slotAttr(t, 1, "test_Args") !== undefined && slotAttr(t, 1, "FooLoad") !== undefined && slotAttr(t, 2, "Mips") !== undefined && machineAttr(t, "test_Args") !== undefined);
    // argv: the job name, then ARGS; PREFIX on every attribute; SLOTS = 1.
    expect(slotAttr(t, 1, "test_Args")).toBe("test abc 123");
    expect(slotAttr(t, 1, "test_Name")).toBe("STARTD ");
    expect(slotAttr(t, 1, "test_ConfigVal")).toBe("/usr/bin/condor_config_val");
    expect(typeof slotAttr(t, 1, "test_LastUpdate")).toBe("bigint");
    expect(slotAttr(t, 2, "test_Args")).toBeUndefined();
    expect(slotAttr(t, 2, "DateDate") ?? slotAttr(t, 2, "Date")).toBe(1n);
    expect(slotAttr(t, 1, "FooLoad")).toBe(42n);
    expect(slotAttr(t, 2, "KFlops")).toBe(500n);
    // The schedd job goes to the machine ad, not the slots.
    expect(machineAttr(t, "test_Args")).toBe("test abc 123");
    expect(machineAttr(t, "test_Name")).toBe(" SCHEDD");
    // date every 15 s (its period); foo's 10 m period has not come round again.
    await settle(t, () => lines(join(dir, "date.log")).length >= 3, 500);
    expect(t.clock.now() - Date.UTC(2026, 0, 1)).toBeGreaterThanOrEqual(30_000);
    const rows = (await list(t)).jobs;
    expect(rows.map((r) => `${String(r.manager)}:${String(r.name)}:${String(r.mode)}`)).toEqual([
      "startd:test:OneShot",
      "startd:date:Periodic",
      "startd:foo:Periodic",
      "schedd:test:OneShot",
      "benchmarks:mips:OnDemand",
      "benchmarks:kflops:OnDemand",
    ]);
    expect(rows.find((r) => r.name === "foo")!.runs).toBe(1);
    expect(rows.find((r) => r.name === "date")!.period).toBe(15);
  });
});

describe("condor-cron: scheduling on the clock", () => {
  it("Periodic: runs at start, then every PERIOD from its start times", async () => {
    const log = join(dir, "runs.log");
    const exe = script("probe", `echo x >> ${log}\necho "Runs = 1"`);
    const t = (h = await cronHost({ startd: { jobs: { probe: { executable: exe, period: "10s" } } } }));
    await settle(t, () => lines(log).length === 1, 1);
    // The run's start by the clock (the log line may appear a few simulated ms later).
    const start = ((await list(t)).jobs[0]!.last_run as number) * 1000;
    await settle(t, () => t.clock.now() - start >= 9_900, 100);
    await realWait(t, 300);
    expect(lines(log)).toHaveLength(1);
    await settle(t, () => lines(log).length === 2, 10);
    expect(((await list(t)).jobs[0]!.last_run as number) * 1000 - start).toBe(10_000);
  });

  it("WaitForExit: publishes each record as it completes, restarts PERIOD after exit", async () => {
    const go = join(dir, "go");
    const log = join(dir, "runs.log");
    const exe = script("wfe", `echo x >> ${log}\necho "Phase = 1"\necho "-"\nwhile [ ! -e ${go} ]; do sleep 0.02; done\nrm -f ${go}\necho "Phase = 2"`);
    const t = (h = await cronHost({ startd: { jobs: { wfe: { executable: exe, mode: "WaitForExit", period: "5s" } } } }));
    await settle(t, () => slotAttr(t, 1, "Phase") === 1n, 1);
    writeFileSync(go, "");
    await settle(t, () => slotAttr(t, 1, "Phase") === 2n, 1);
    await realWait(t, 100);
    const exitedAt = t.clock.now();
    expect(lines(log)).toHaveLength(1);
    await settle(t, () => lines(log).length === 2, 100);
    expect(t.clock.now() - exitedAt).toBeGreaterThanOrEqual(4_900);
  });

  it("OneShot: once; again on reconfig only with RECONFIG_RERUN", async () => {
    const a = join(dir, "a.log");
    const b = join(dir, "b.log");
    const ea = script("a", `echo x >> ${a}\necho "A = 1"`);
    const eb = script("b", `echo x >> ${b}\necho "B = 1"`);
    const file = condorFile(
      `STARTD_CRON_JOBLIST = a b\nSTARTD_CRON_a_EXECUTABLE = ${ea}\nSTARTD_CRON_a_MODE = OneShot\nSTARTD_CRON_a_RECONFIG_RERUN = True\n` +
        `STARTD_CRON_b_EXECUTABLE = ${eb}\nSTARTD_CRON_b_MODE = OneShot\nSTARTD_CRON_MAX_JOB_LOAD = 1\n`,
    );
    const t = (h = await cronHost({ condor_config: file }));
    await settle(t, () => lines(a).length === 1 && lines(b).length === 1);
    await settle(t, () => t.clock.now() >= Date.UTC(2026, 0, 1) + 3_600_000, 60_000);
    expect([lines(a).length, lines(b).length]).toEqual([1, 1]);
    await t.plugins.reloadConfig({});
    await settle(t, () => lines(a).length === 2);
    await realWait(t, 200);
    expect(lines(b)).toHaveLength(1);
  });

  it("MAX_JOB_LOAD: a job that does not fit waits until another exits", async () => {
    const go = join(dir, "go");
    const first = script("first", `while [ ! -e ${go} ]; do sleep 0.02; done\necho "First = 1"`);
    const second = script("second", `echo "Second = 1"`);
    const t = (h = await cronHost({
      startd: { max_job_load: 0.1, jobs: { first: { executable: first, period: 600, job_load: 0.1 }, second: { executable: second, period: 600, job_load: 0.05 } } },
    }));
    await settle(t, () => t.clock.now() >= Date.UTC(2026, 0, 1) + 5_000, 100);
    await realWait(t, 200);
    expect(slotAttr(t, 1, "Second")).toBeUndefined();
    const rows = (await list(t)).jobs;
    expect(rows.map((r) => r.state)).toEqual(["running", "ready"]);
    writeFileSync(go, "");
    await settle(t, () => slotAttr(t, 1, "Second") === 1n);
    expect(slotAttr(t, 1, "First")).toBe(1n);
  });

  it("KILL: a Periodic job still running at its next period is killed and run again; without KILL the period is skipped", async () => {
    const klog = join(dir, "k.log");
    const slog = join(dir, "s.log");
    const k = script("k", `echo x >> ${klog}\nexec sleep 60`);
    const s = script("s", `echo x >> ${slog}\nexec sleep 60`);
    const t = (h = await cronHost({
      startd: { max_job_load: 1, jobs: { k: { executable: k, period: "2s", kill: true }, s: { executable: s, period: "2s" } } },
    }));
    await settle(t, () => lines(klog).length === 1 && lines(slog).length === 1, 1);
    await settle(t, () => lines(klog).length === 2, 50);
    expect(lines(slog)).toHaveLength(1);
    expect((await list(t)).jobs.find((r) => r.name === "k")!.last_exit).toMatch(/killed by SIGTERM/);
    expect(t.log.some((l) => l.includes("startd cron job k: still running at its next period: killed"))).toBe(true);
  });
});

describe("condor-cron: output protocol and merge rules", () => {
  it("the manual's tagged records: slot1 1, slot2 2, every other slot 10", async () => {
    const exe = script("v", `printf 'Value=1\\nSlotId=1\\n-s1\\nValue=2\\nSlotId=2\\n-s2\\nValue=10\\n- update:true\\n'`);
    const t = (h = await cronHost({ startd: { jobs: { v: { executable: exe, period: "1h" } } } }, 3));
    await settle(t, () => slotAttr(t, 3, "Value") !== undefined);
    expect([1, 2, 3].map((s) => slotAttr(t, s, "Value"))).toEqual([1n, 2n, 10n]);
    // Selector attributes are never merged.
    expect(slotAttr(t, 3, "SlotId")).toBe(3n);
    expect((await list(t)).jobs[0]!.ads).toEqual(["startd:v", "startd:v.s1", "startd:v.s2"]);
  });

  it("SlotMergeConstraint, SlotName prefix, SLOTS filter; schedd output goes to the machine ad", async () => {
    const exe = script(
      "m",
      `echo 'Con = 1'\necho 'SlotMergeConstraint = TARGET.SlotID >= 2'\necho '- c'\necho 'Pre = 1'\necho 'SlotName = "slot1"'\necho '- n'\necho 'Every = 1'`,
    );
    const sched = script("sc", `echo 'QueueHealth = "ok"'\necho '- ignoredtag'`);
    const t = (h = await cronHost({
      startd: { max_job_load: 1, jobs: { m: { executable: exe, period: "1h", slots: [1, 2] } } },
      schedd: { jobs: { sc: { executable: sched, mode: "OneShot" } } },
    }, 3));
    await settle(t, () => slotAttr(t, 1, "Every") !== undefined && machineAttr(t, "QueueHealth") !== undefined);
    expect([1, 2, 3].map((s) => slotAttr(t, s, "Con"))).toEqual([undefined, 1n, undefined]);
    expect([1, 2, 3].map((s) => slotAttr(t, s, "Pre"))).toEqual([1n, undefined, undefined]);
    expect([1, 2, 3].map((s) => slotAttr(t, s, "Every"))).toEqual([1n, 1n, undefined]);
    expect(slotAttr(t, 1, "QueueHealth")).toBeUndefined();
    expect(machineAttr(t, "QueueHealth")).toBe("ok");
  });

  it("bad output: bad lines and a record without a valid attribute are dropped and logged, the rest kept; a non-zero exit still publishes", async () => {
    const exe = script("bad", `echo 'Good = 1'\necho 'this is garbage'\necho '- first'\necho '= 3'\necho '- t'\necho 'Half = 2'\nexit 37`);
    const t = (h = await cronHost({ startd: { jobs: { bad: { executable: exe, period: "1h" } } } }));
    await settle(t, () => (t.log.some((l) => l.includes("exited with status 37"))));
    expect(slotAttr(t, 1, "Good")).toBe(1n);
    expect(slotAttr(t, 1, "Half")).toBe(2n);
    expect(t.log.some((l) => /startd cron job bad: output line 2: .*this is garbage.*line skipped/.test(l))).toBe(true);
    expect(t.log.some((l) => /startd cron job bad: output line 4: .*record has no valid attribute/.test(l))).toBe(true);
    expect(t.log.some((l) => /startd cron job bad: exited with status 37; its 2 record\(s\) were published/.test(l))).toBe(true);
  });

  it("a flood is capped, a job killed by a signal and a vanished executable are logged by name; others go on", async () => {
    const flood = script("flood", `echo 'Early = 1'\necho '-'\nyes 'Junk = 1' | head -c 3000000`);
    const sig = script("sig", `echo 'Before = 1'\nkill -9 $$`);
    const gone = script("gone", `echo 'Gone = 1'`);
    const ok = join(dir, "ok.log");
    const fine = script("fine", `echo x >> ${ok}\necho 'Fine = 1'`);
    const t = (h = await cronHost({
      output_cap: 100_000,
      startd: {
        max_job_load: 1,
        jobs: {
          flood: { executable: flood, period: "1h" },
          sig: { executable: sig, period: "1h" },
          gone: { executable: gone, period: "10s" },
          fine: { executable: fine, period: "10s" },
        },
      },
    }));
    await settle(t, () => slotAttr(t, 1, "Gone") === 1n && t.log.some((l) => l.includes("startd cron job sig: killed by SIGKILL")));
    rmSync(gone);
    await settle(t, () => lines(ok).length >= 2, 100);
    await settle(t, () => t.log.some((l) => /startd cron job gone: (refused|could not be started)/.test(l)), 100);
    await settle(t, () => (t.log.some((l) => l.includes("startd cron job flood: output passed 100000 bytes"))));
    expect(slotAttr(t, 1, "Early")).toBe(1n);
    expect(slotAttr(t, 1, "Before")).toBe(1n);
    const flooded = (await list(t)).jobs.find((r) => r.name === "flood")!;
    expect(flooded.last_output_bytes as number).toBeGreaterThan(100_000);
    expect(t.manager.job).toBeDefined();
  });

  it("a bad job definition is skipped naming the knob and its file:line; the others run", async () => {
    const exe = script("ok", `echo 'Ok = 1'`);
    const file = condorFile(
      `STARTD_CRON_JOBLIST = good badmode badperiod nocmd badcond\nSTARTD_CRON_good_EXECUTABLE = ${exe}\nSTARTD_CRON_good_PERIOD = 1h\n` +
        `STARTD_CRON_badmode_EXECUTABLE = ${exe}\nSTARTD_CRON_badmode_MODE = Sometimes\n` +
        `STARTD_CRON_badperiod_EXECUTABLE = ${exe}\nSTARTD_CRON_badperiod_PERIOD = 5d\n` +
        `STARTD_CRON_badcond_EXECUTABLE = ${exe}\nSTARTD_CRON_badcond_PERIOD = 1m\nSTARTD_CRON_badcond_CONDITION = (1 +\n`,
    );
    const t = (h = await cronHost({ condor_config: file }));
    await settle(t, () => slotAttr(t, 1, "Ok") === 1n);
    const skipped = (await list(t)).skipped.map((s) => `${String(s.job)}: ${String(s.reason)}`);
    expect(skipped).toEqual([
      `badmode: STARTD_CRON_badmode_MODE = Sometimes (${file}:5) is not Periodic, WaitForExit, OneShot or OnDemand`,
      `badperiod: STARTD_CRON_badperiod_PERIOD = 5d (${file}:7) is not a period (N, Ns, Nm, Nh)`,
      "nocmd: STARTD_CRON_nocmd_EXECUTABLE is not set",
      expect.stringMatching(new RegExp(`^badcond: STARTD_CRON_badcond_CONDITION \\(${file}:10\\) does not parse`)),
    ]);
    expect(t.log.some((l) => l.includes(`startd cron job badmode skipped: STARTD_CRON_badmode_MODE = Sometimes (${file}:5)`))).toBe(true);
    expect((await list(t)).jobs.map((r) => r.name)).toEqual(["good"]);
  });

  it("a bad TOML conf fails the load naming the key; a bad job in TOML names its TOML path", async () => {
    await expect(cronHost({ startd: { jobs: { x: { executable: "/bin/true", perod: "1m" } } } })).rejects.toThrow("conf.startd.jobs.x.perod: unknown key");
    await expect(cronHost({ condor_config: join(dir, "missing") })).rejects.toThrow(/condor-cron: .*missing: cannot read/);
    const t = (h = await cronHost({ startd: { jobs: { x: { executable: "/bin/true", period: "soon" } } } }));
    expect((await list(t)).skipped[0]!.reason).toBe("STARTD_CRON_x_PERIOD = soon (conf.startd.jobs.x.period) is not a period (N, Ns, Nm, Nh)");
  });
});

describe("condor-cron: the process's knobs", () => {
  it("ENV, CWD and CONFIG_VAL_PROG reach the process; without CWD it runs in the manager's directory", async () => {
    mkdirSync(join(dir, "work"));
    const exe = script("where", `echo "Cwd = \\"$(pwd)\\""\necho "Greeting = \\"$GREETING\\""\necho "Prog = \\"$STARTD_CONFIG_VAL\\""`);
    const t = (h = await cronHost({
      startd: {
        config_val: "/manager/config_val",
        jobs: {
          here: { executable: exe, mode: "OneShot", cwd: join(dir, "work"), env: { GREETING: "hi there" }, config_val_prog: "/job/config_val", prefix: "Here" },
          plain: { executable: exe, mode: "OneShot", prefix: "Plain" },
        },
      },
    }));
    await settle(t, () => slotAttr(t, 1, "HereCwd") !== undefined && slotAttr(t, 1, "PlainCwd") !== undefined);
    expect(slotAttr(t, 1, "HereCwd")).toBe(join(dir, "work"));
    expect(slotAttr(t, 1, "HereGreeting")).toBe("hi there");
    expect(slotAttr(t, 1, "HereProg")).toBe("/job/config_val");
    expect(slotAttr(t, 1, "PlainCwd")).toBe(process.cwd());
    expect(slotAttr(t, 1, "PlainGreeting")).toBe("");
    expect(slotAttr(t, 1, "PlainProg")).toBe("/manager/config_val");
  });

  it("LOG_NON_ZERO_EXIT: a failing run's stdout and stderr lines are logged at warn; without it stderr is only debug", async () => {
    const exe = script("fail", `echo 'Out = 1'\necho 'second line'\necho 'it broke' >&2\nexit 3`);
    const job = { executable: exe, mode: "OneShot" };
    let t = (h = await cronHost({ startd: { log_non_zero_exit: true, jobs: { f: job } } }));
    await settle(t, () => t.log.some((l) => l.includes("startd cron job f: exited with status 3")));
    const logged = (t2: TestHost) => t2.log.filter((l) => l.includes("startd cron job f: std"));
    expect(logged(t)).toEqual([
      "warn: condor-cron: startd cron job f: stdout: Out = 1",
      "warn: condor-cron: startd cron job f: stdout: second line",
      "warn: condor-cron: startd cron job f: stderr: it broke",
    ]);
    await t.close();
    t = h = await cronHost({ startd: { jobs: { f: job } } });
    await settle(t, () => t.log.some((l) => l.includes("startd cron job f: exited with status 3")));
    expect(logged(t)).toEqual(["debug: condor-cron: startd cron job f: stderr: it broke"]);
    expect(t.log.filter((l) => l.startsWith("warn") && l.includes("it broke"))).toEqual([]);
  });
});

describe("condor-cron: resource monitors (METRICS)", () => {
  it("samples aggregate into the stored ads, per slot; per-job usage while a job runs; a non-numeric value is logged and ignored", async () => {
    const sample = join(dir, "sample");
    const record = (tag: string, slot: number, secs: string, peak?: number) =>
      `UptimeGPUsSeconds = ${secs}\n${peak === undefined ? "" : `UptimeGPUsMemoryPeakUsage = ${peak}\n`}SlotMergeConstraint = TARGET.SlotID == ${slot}\n- ${tag}\n`;
    const samples = (a: [string, number], b: [string, number], c: string) => writeFileSync(sample, record("GPU0", 1, ...a) + record("GPU1", 1, ...b) + record("GPU2", 2, c));
    samples(["3", 100], ["4", 200], "5");
    const exe = script("monitor", `cat ${sample}`);
    const t = (h = await cronHost({ startd: { jobs: { gpus: { executable: exe, period: "10s", metrics: ["SUM:GPUs", "PEAK:GPUsMemory", "MAX:Disk"] } } } }, 2));
    expect(t.log.filter((l) => l.includes("MAX:Disk"))).toEqual([
      'warn: condor-cron: startd cron job gpus: STARTD_CRON_gpus_METRICS (conf.startd.jobs.gpus.metrics): item "MAX:Disk" is not SUM:<Name> or PEAK:<Name>; ignored',
    ]);
    const t0 = t.clock.now();
    /**
     * Moves the clock to t0 + `s` seconds (a period's start), then lets the run finish in
     * real time without moving the clock, until `cond` (so LastUpdate is exactly t0 + s).
     */
    const at = async (s: number, cond: () => boolean) => {
      await t.advance(t0 + s * 1000 - t.clock.now());
      let idle = false;
      await settle(t, () => (void list(t).then((l) => (idle = l.jobs[0]!.state === "idle")), idle && cond()), 0);
    };
    // First samples: stored as they are; a slot gets the sum (SUM) and max (PEAK) of its instances.
    await at(0, () => slotAttr(t, 1, "UptimeGPUsSeconds") === 7 && slotAttr(t, 2, "UptimeGPUsSeconds") === 5);
    expect(slotAttr(t, 1, "UptimeGPUsMemoryPeakUsage")).toBe(200);
    expect(slotAttr(t, 1, "DeviceGPUsMemoryPeakUsage")).toBe(200);
    expect(slotAttr(t, 1, "SlotMergeConstraint")).toBeUndefined();
    // Second samples aggregate: sums grow, peaks keep the max; "oops" is logged and ignored.
    samples(["6", 50], ["1", 300], '"oops"');
    await at(10, () => slotAttr(t, 1, "UptimeGPUsSeconds") === 14);
    expect(slotAttr(t, 1, "UptimeGPUsMemoryPeakUsage")).toBe(300);
    expect(slotAttr(t, 2, "UptimeGPUsSeconds")).toBe(5);
    expect(t.log).toContain('warn: condor-cron: startd cron job gpus: record gpus.GPU2: metric UptimeGPUsSeconds is not a number ("oops"); ignored');
    expect(slotAttr(t, 1, "GPUsMemoryUsage")).toBe(300); // peak since the monitor started: no job has run
    // A job starts on slot 1: its per-job figures start at the next sample.
    const job = await t.submit({ runDuration: 15, system: { slot: 1 } });
    await settle(t, () => t.job(job).state === "RUN", 0);
    samples(["2", 70], ["2", 80], "1");
    await at(20, () => slotAttr(t, 1, "UptimeGPUsSeconds") === 18);
    expect(slotAttr(t, 1, "StartOfJobUptimeGPUsSeconds")).toBe(14);
    expect(slotAttr(t, 1, "FirstUpdateUptimeGPUsSeconds")).toBe(BigInt(Math.floor(t0 / 1000) + 10));
    expect(slotAttr(t, 1, "LastUpdateUptimeGPUsSeconds")).toBe(BigInt(Math.floor(t0 / 1000) + 20));
    expect(slotAttr(t, 1, "GPUsAverageUsage")).toBe(0.4); // (18 - 14) / (20 s - 10 s)
    expect(slotAttr(t, 1, "UptimeGPUsSecondsAverageUsage")).toBe(0.4);
    expect(slotAttr(t, 1, "GPUsMemoryUsage")).toBe(80); // the job's peak, not the monitor's 300
    expect(slotAttr(t, 1, "UptimeGPUsMemoryPeakUsage")).toBe(300);
    expect(slotAttr(t, 1, "DeviceGPUsAverageUsage")).toBe(18 / 20);
    // slot 2 runs no job: no per-job figures
    expect(slotAttr(t, 2, "UptimeGPUsSeconds")).toBe(6);
    expect(slotAttr(t, 2, "StartOfJobUptimeGPUsSeconds")).toBeUndefined();
    // The job ends: its per-job figures go.
    await settle(t, () => t.job(job).state === "INACTIVE", 100);
    expect(slotAttr(t, 1, "StartOfJobUptimeGPUsSeconds")).toBeUndefined();
    expect(slotAttr(t, 1, "GPUsAverageUsage")).toBeUndefined();
    expect(slotAttr(t, 1, "GPUsMemoryUsage")).toBeUndefined();
    expect(slotAttr(t, 1, "UptimeGPUsSeconds")).toBe(18);
    // The ads are per slot: `jobtap cron list` names them.
    expect((await list(t)).jobs[0]!.ads).toEqual(["startd:gpus:slot1", "startd:gpus:slot2"]);
  });
});

describe("condor-cron: where jobs are started", () => {
  it("by a spawn helper process by default, by the manager with spawn_helpers = 0; a bad count fails the load", async () => {
    const exe = script("parent", "echo \"Parent = $PPID\"");
    const conf = { startd: { jobs: { p: { executable: exe, mode: "OneShot" } } } };
    let t = (h = await cronHost(conf));
    await settle(t, () => slotAttr(t, 1, "Parent") !== undefined);
    expect(slotAttr(t, 1, "Parent")).not.toBe(BigInt(process.pid));
    await t.close();
    t = h = await cronHost({ ...conf, spawn_helpers: 0 });
    await settle(t, () => slotAttr(t, 1, "Parent") !== undefined);
    expect(slotAttr(t, 1, "Parent")).toBe(BigInt(process.pid));
    await expect(cronHost({ ...conf, spawn_helpers: 1.5 })).rejects.toThrow("conf.spawn_helpers: must be an integer from 0 to 64, got 1.5");
  });
});

describe("condor-cron: CONDITION, reconfig, benchmarks, other plugins", () => {
  it("CONDITION is evaluated against the machine ad each time the job would start", async () => {
    const exe = script("c", `echo 'Ran = 1'`);
    const t = (h = await cronHost({
      startd: {
        max_job_load: 1,
        jobs: { big: { executable: exe, period: "1m", condition: "TotalCpus > 100", prefix: "Big" }, small: { executable: exe, period: "1m", condition: "TotalCpus >= 1" } },
      },
    }));
    await settle(t, () => slotAttr(t, 1, "Ran") === 1n);
    await settle(t, () => t.clock.now() >= Date.UTC(2026, 0, 1) + 180_000, 1000);
    expect(slotAttr(t, 1, "BigRan")).toBeUndefined();
    expect((await list(t)).jobs.find((r) => r.name === "big")!.runs).toBe(0);
  });

  it("reconfig: new jobs start, unlisted jobs stop and lose their ads, a changed mode replaces the job, RECONFIG sends SIGHUP", async () => {
    const a = script("a", `echo 'A = 1'`);
    const b = script("b", `echo 'B = 1'`);
    const hup = join(dir, "hup");
    const w = script("w", `trap 'echo hup > ${hup}' HUP\necho 'W = 1'\necho '-'\nwhile [ ! -e ${hup} ]; do sleep 0.02; done\necho 'W = 2'`);
    const file = condorFile(`STARTD_CRON_MAX_JOB_LOAD = 1\nSTARTD_CRON_JOBLIST = a w\nSTARTD_CRON_a_EXECUTABLE = ${a}\nSTARTD_CRON_a_PERIOD = 1h\nSTARTD_CRON_w_EXECUTABLE = ${w}\nSTARTD_CRON_w_MODE = WaitForExit\nSTARTD_CRON_w_PERIOD = 1h\nSTARTD_CRON_w_RECONFIG = true\n`);
    const t = (h = await cronHost({ condor_config: file }));
    await settle(t, () => slotAttr(t, 1, "A") === 1n && slotAttr(t, 1, "W") === 1n);
    writeFileSync(file, `STARTD_CRON_MAX_JOB_LOAD = 1\nSTARTD_CRON_JOBLIST = b w\nSTARTD_CRON_b_EXECUTABLE = ${b}\nSTARTD_CRON_b_MODE = OneShot\nSTARTD_CRON_w_EXECUTABLE = ${w}\nSTARTD_CRON_w_MODE = WaitForExit\nSTARTD_CRON_w_PERIOD = 1h\nSTARTD_CRON_w_RECONFIG = true\n`);
    await t.plugins.reloadConfig({});
    await settle(t, () => slotAttr(t, 1, "B") === 1n && slotAttr(t, 1, "W") === 2n);
    expect(slotAttr(t, 1, "A")).toBeUndefined();
    expect((await list(t)).jobs.map((r) => `${String(r.name)}:${String(r.mode)}`)).toEqual(["w:WaitForExit", "b:OneShot"]);
    // Mode change: b becomes Periodic (a new job object: its run count starts again).
    writeFileSync(file, `STARTD_CRON_JOBLIST = b\nSTARTD_CRON_b_EXECUTABLE = ${b}\nSTARTD_CRON_b_MODE = Periodic\nSTARTD_CRON_b_PERIOD = 30s\n`);
    await t.plugins.reloadConfig({});
    await settle(t, () => (t.log.some((l) => l.includes("startd cron job b: mode OneShot → Periodic, replaced"))));
    expect(slotAttr(t, 1, "W")).toBeUndefined();
    await settle(t, () => t.clock.now() >= Date.UTC(2026, 0, 1) + 200_000, 1000);
    const rows = (await list(t)).jobs;
    expect(rows.map((r) => `${String(r.name)}:${String(r.mode)}`)).toEqual(["b:Periodic"]);
    expect(rows[0]!.runs as number).toBeGreaterThanOrEqual(5);
  });

  it("benchmarks run at start when the host is idle, publish LastBenchmark, and startd jobs wait for them", async () => {
    const go = join(dir, "go");
    const order = join(dir, "order.log");
    const bench = script("bench", `echo bench >> ${order}\nwhile [ ! -e ${go} ]; do sleep 0.02; done\necho 'Mips = 777'`);
    const probe = script("probe", `echo probe >> ${order}\necho 'Probe = 1'`);
    const t = (h = await cronHost({
      benchmarks: { jobs: { mips: { executable: bench, mode: "OnDemand" } } },
      startd: { jobs: { probe: { executable: probe, period: "1h" } } },
    }));
    await settle(t, () => lines(order).length >= 1, 1);
    await realWait(t, 200);
    expect(lines(order)).toEqual(["bench"]);
    writeFileSync(go, "");
    await settle(t, () => slotAttr(t, 1, "Probe") === 1n);
    expect(lines(order)).toEqual(["bench", "probe"]);
    expect(slotAttr(t, 1, "Mips")).toBe(777n);
    expect(Number(slotAttr(t, 1, "LastBenchmark"))).toBeGreaterThan(0);
  });

  it("a priority plugin reads a cron-published attribute at once", async () => {
    const flag = join(dir, "healthy");
    writeFileSync(flag, "true");
    const exe = script("gpu", `echo "GpuHealthy = $(cat ${flag})"`);
    const t = (h = await cronHost({ startd: { jobs: { gpu: { executable: exe, period: "1m" } } } }));
    await t.plugins.loadDefinition("gpu-priority", (p: PluginContext) => {
      p.on("job.state.priority", (job) => ({ priority: p.slotAd(1)?.evaluate("GpuHealthy") === true ? job.urgency + 1000 : 0 }));
    }, {});
    await settle(t, () => slotAttr(t, 1, "GpuHealthy") === true);
    const fast = await t.submit({ runDuration: 1 });
    await settle(t, () => t.job(fast).priority !== undefined);
    expect(t.job(fast).priority).toBe(1016);
    writeFileSync(flag, "false");
    await settle(t, () => slotAttr(t, 1, "GpuHealthy") === false, 1000);
    const slow = await t.submit({ runDuration: 1 });
    await settle(t, () => t.job(slow).priority !== undefined);
    expect(t.job(slow).priority).toBe(0);
  });

  it("removing the plugin kills running jobs and withdraws its ads", async () => {
    const exe = script("l", `echo 'Long = 1'\necho '-'\nexec sleep 60`);
    const t = (h = await cronHost({ startd: { jobs: { l: { executable: exe, period: "1h" } } } }));
    await settle(t, () => slotAttr(t, 1, "Long") === 1n);
    await t.plugins.remove("condor-cron");
    expect(slotAttr(t, 1, "Long")).toBeUndefined();
  });
});

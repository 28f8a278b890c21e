import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { formatJobId, parseJobId, readHookAds, type ClassAd } from "../../src/plugin.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { parseUserLog } from "./userlog-parse.js";
import { host, settle as settleUntil, writeScript, type TestHost } from "./helpers.js";

let h: TestHost | undefined;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "jobtap-fetch-"));
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  // The close waits for the plugin's hooks (REPLY_FETCH, JOB_EXIT are fire-and-forget) to
  // be killed and reaped; the retries stay as a guard against a hook's own children.
  rmSync(dir, { recursive: true, force: true, maxRetries: 30, retryDelay: 100 });
});

const script = (name: string, body: string): string => writeScript(dir, name, body);
const settle = (t: TestHost, cond: () => boolean, stepMs = 10, realMs = 15_000): Promise<void> =>
  settleUntil(t, cond, stepMs, realMs, () => `log:\n${t.log.slice(0, 30).join("\n")}\nfiles: ${readdirSync(dir).join(" ")}`);

const lines = (path: string) => (existsSync(path) ? readFileSync(path, "utf8").split("\n").filter((l) => l !== "") : []);
const attr = (ad: ClassAd | undefined, name: string) => (ad?.has(name) ? ad.evaluate(name) : undefined);
const slotAttr = (t: TestHost, slot: number, name: string) => attr(t.manager.hostAds?.slotAd(slot), name);
const fetchHost = (conf: Record<string, unknown>, slots = 1) =>
  host({}, { plugin: "condor-fetch", conf, slots: [{ count: slots, cores: 1 }], resources: { cores: Math.max(slots, 1) } });
type Query = { slots: Array<{ slot: number; claim: { id: string; rank: number; job: string | null } | null; fetches: number; discarded: number }> };
const query = async (t: TestHost) => (await t.plugins.query("condor-fetch")) as unknown as Query;
const claimJob = async (t: TestHost, slot = 1): Promise<JobId | undefined> => {
  const j = (await query(t)).slots.find((s) => s.slot === slot)?.claim?.job;
  return j ? parseJobId(j) : undefined;
};

/** Submits a raw jobspec, moving simulated time until its batch is durable. */
async function submitRaw(t: TestHost, jobspec: Record<string, unknown>): Promise<JobId> {
  let id: JobId | undefined;
  void t.manager.submit(jobspec).then((x) => (id = x));
  await settle(t, () => id !== undefined, 1);
  return id!;
}

/** Every job's id, oldest first. */
const allJobs = (t: TestHost): JobId[] => t.manager.jobs({}).map((j) => j.id).sort((a, b) => (a < b ? -1 : 1));

/** A spool work source: FETCH_WORK hands out (and removes) the first `*.ad` file, in name order. */
function spool(extra = ""): { fetch: string; reply: string; evict: string; exit: string; spoolDir: string } {
  const spoolDir = join(dir, "spool");
  require("node:fs").mkdirSync(spoolDir);
  return {
    spoolDir,
    fetch: script("fetch_work", `cat > ${dir}/fetch.tmp\nmv ${dir}/fetch.tmp ${dir}/fetch.stdin\necho x >> ${dir}/fetch.log\nfor f in ${spoolDir}/*.ad; do\n  [ -e "$f" ] || exit 0\n  mv "$f" "$f.$$" 2>/dev/null || continue\n  cat "$f.$$"\n  rm -f "$f.$$"\n  break\ndone\n${extra}`),
    reply: script("reply_fetch", `n=$(ls ${dir} | grep -c '^reply\\.')\ncat > ${dir}/reply.tmp.$$\nmv ${dir}/reply.tmp.$$ ${dir}/reply.$n.stdin\necho "$1" >> ${dir}/reply.log`),
    evict: script("evict_claim", `n=$(ls ${dir} | grep -c '^evict\\.')\ncat > ${dir}/evict.tmp.$$\nmv ${dir}/evict.tmp.$$ ${dir}/evict.$n.stdin\necho evict >> ${dir}/evict.log`),
    exit: script("job_exit", `cat > ${dir}/exit.tmp.$$\nmv ${dir}/exit.tmp.$$ ${dir}/exit.stdin\necho "$1" >> ${dir}/exit.log`),
  };
}

const jobAdText = (name: string, extra = "") => `Cmd = "/bin/sh"\nArguments = "-c 'echo ${name} >> ${dir}/ran.log'"\nJobName = "${name}"\n${extra}`;

describe("condor-fetch: configuration", () => {
  it("a pasted HTCondor config names a bad knob with file:line", async () => {
    const file = join(dir, "50-fetch");
    writeFileSync(file, `STARTD_JOB_HOOK_KEYWORD = TEST\nTEST_HOOK_FETCH_WORK = /bin/true\nFetchWorkDelay = ifThenElse(State ==\n`);
    await expect(fetchHost({ condor_config: file })).rejects.toThrow(`${file}:3: FetchWorkDelay`);
    writeFileSync(file, `TEST_HOOK_FETCH_WORK = relative/fetch\n`);
    await expect(fetchHost({ condor_config: file })).rejects.toThrow(`${file}:1: TEST_HOOK_FETCH_WORK = relative/fetch: a hook path must be absolute`);
    writeFileSync(file, `SLOT3_JOB_HOOK_KEYWORD = TEST\n`);
    await expect(fetchHost({ condor_config: file }, 2)).rejects.toThrow(`${file}:1: SLOT3_JOB_HOOK_KEYWORD: no slot 3 on this host (it has slots 1, 2)`);
    writeFileSync(file, `STARTER_UPDATE_INTERVAL = 5m\n`);
    await expect(fetchHost({ condor_config: file })).rejects.toThrow(`${file}:1: STARTER_UPDATE_INTERVAL = 5m: must be a whole number of seconds`);
  });

  it("TOML keys become the same knobs; an unknown key is named", async () => {
    await expect(fetchHost({ keywrod: "TEST" })).rejects.toThrow("conf.keywrod: unknown key");
    await expect(fetchHost({ hooks: { TEST: { fetch_wrok: "/bin/true" } } })).rejects.toThrow("conf.hooks.TEST.fetch_wrok: unknown key");
    await expect(fetchHost({ start: "1 +" })).rejects.toThrow("conf.start: START = 1 +: not a ClassAd expression");
  });
});

describe("condor-fetch: the fetch loop", () => {
  it("fetches per slot, runs the accepted job pinned to the slot with HookKeyword and the fetched ad, then JOB_EXIT exit", async () => {
    const s = spool();
    writeFileSync(join(s.spoolDir, "a.ad"), jobAdText("alpha", `Project = "physics"\nEnv = "GREETING=hi"\n`));
    const t = (h = await fetchHost({ keyword: "TEST", fetch_work_delay: "0", hooks: { TEST: { fetch_work: s.fetch, reply_fetch: s.reply, evict_claim: s.evict, job_exit: s.exit } } }, 2));
    await settle(t, () => lines(join(dir, "ran.log")).length === 1 && lines(join(dir, "reply.log")).length === 1);
    expect(lines(join(dir, "reply.log"))).toEqual(["accept"]);
    const [id, ...more] = allJobs(t);
    expect(more).toEqual([]);
    const ad = t.manager.jobAd(id!)!;
    expect(attr(ad, "HookKeyword")).toBe("TEST");
    expect(attr(ad, "Project")).toBe("physics");
    expect(attr(ad, "JobName")).toBe("alpha");
    expect(typeof attr(ad, "FetchClaimId")).toBe("string");
    await settle(t, () => t.job(id!).state === "INACTIVE");
    expect(lines(join(dir, "exit.log")), t.log.join("\n")).toEqual(["exit"]);
    // The fetch loop's stdin was the slot ad; the slot ad publishes the fetch times.
    const stdin = readHookAds(readFileSync(join(dir, "fetch.stdin"), "utf8"))[0]!.ad;
    expect(String(stdin.evaluate("Name"))).toMatch(/^slot[12]@/);
    expect(typeof slotAttr(t, 1, "LastFetchWorkSpawned")).toBe("bigint");
    expect(typeof slotAttr(t, 1, "LastFetchWorkCompleted")).toBe("bigint");
    expect(slotAttr(t, 1, "NextFetchWorkDelay")).toBe(0n);
  });
});

describe("condor-fetch: fetched job ads", () => {
  it("relative Cmd, In, Out and Err are read in Iwd; In is the job's stdin; KillSig stops it", async () => {
    const s = spool();
    const iwd = join(dir, "work");
    require("node:fs").mkdirSync(iwd);
    writeScript(iwd, "prog.sh", `cat\necho "$@"\ntrap 'echo got-usr1 >> ${dir}/signal.log; exit 3' USR1\ntouch ${dir}/running\nwhile true; do sleep 0.05; done`);
    writeFileSync(join(iwd, "in.txt"), "from stdin\n");
    writeFileSync(join(s.spoolDir, "a.ad"), `Cmd = "prog.sh"\nArguments = "one two"\nIwd = "${iwd}"\nIn = "in.txt"\nOut = "out.txt"\nErr = "err.txt"\nKillSig = "SIGUSR1"\n`);
    const t = (h = await fetchHost({ keyword: "TEST", fetch_work_delay: "5", hooks: { TEST: { fetch_work: s.fetch, reply_fetch: s.reply } } }));
    await settle(t, () => existsSync(join(dir, "running")), 10);
    const [id] = allJobs(t);
    const ad = t.manager.jobAd(id!);
    expect(attr(ad, "Cmd")).toBe(join(iwd, "prog.sh"));
    expect(attr(ad, "Out")).toBe(join(iwd, "out.txt"));
    t.manager.cancel(id!);
    await settle(t, () => t.job(id!).state === "INACTIVE", 10);
    expect(lines(join(dir, "signal.log"))).toEqual(["got-usr1"]);
    expect(readFileSync(join(iwd, "out.txt"), "utf8")).toBe("from stdin\none two\n");
    expect(existsSync(join(iwd, "err.txt"))).toBe(true);
  });

  it("StarterUserLog (relative to Iwd) gets the job's events in HTCondor's format; StarterUserLogUseXML = true is rejected by name", async () => {
    const s = spool();
    writeFileSync(join(s.spoolDir, "a.ad"), `Cmd = "/bin/true"\nStarterUserLogUseXML = true\nStarterUserLog = "/tmp/never.log"\n`);
    writeFileSync(join(s.spoolDir, "b.ad"), `Cmd = "/bin/sh"\nArguments = "-c 'exit 4'"\nIwd = "${dir}"\nStarterUserLog = "starter.log"\n`);
    const t = (h = await fetchHost({ keyword: "TEST", fetch_work_delay: "1", hooks: { TEST: { fetch_work: s.fetch, reply_fetch: s.reply } } }));
    await settle(t, () => lines(join(dir, "reply.log")).length === 2 && allJobs(t).length === 1 && t.job(allJobs(t)[0]!).state === "INACTIVE", 100);
    expect(lines(join(dir, "reply.log"))).toEqual(["reject", "accept"]);
    expect(t.log.join("\n")).toContain("job rejected: job ad: StarterUserLogUseXML = true: jobtap writes user logs in HTCondor's text format only");
    const events = parseUserLog(readFileSync(join(dir, "starter.log"), "utf8"));
    expect(events.map((e) => e.event)).toEqual([0, 1, 5]);
    expect(events[2]!.body[0]).toBe("\t(1) Normal termination (return value 4)");
    expect(events[1]!.body[0]).toMatch(/^\tSlotName: slot1@/);
    expect(events[0]!.cluster).toBe(t.manager.jobAd(allJobs(t)[0]!).evaluate("ClusterId"));
  });

  it("rejects an ad whose RequestDisk exceeds the slot's Disk, a relative Out without Iwd, or an unknown KillSig", async () => {
    const s = spool();
    writeFileSync(join(s.spoolDir, "a.ad"), `Cmd = "/bin/true"\nRequestDisk = 1125899906842624\n`);
    writeFileSync(join(s.spoolDir, "b.ad"), `Cmd = "/bin/true"\nOut = "out.txt"\n`);
    writeFileSync(join(s.spoolDir, "c.ad"), `Cmd = "/bin/true"\nKillSig = "SIGNOPE"\n`);
    writeFileSync(join(s.spoolDir, "d.ad"), `Cmd = "/bin/true"\nRequestDisk = 1024\nKillSig = 10\n`);
    const t = (h = await fetchHost({ keyword: "TEST", fetch_work_delay: "1", hooks: { TEST: { fetch_work: s.fetch, reply_fetch: s.reply } } }));
    await settle(t, () => lines(join(dir, "reply.log")).length === 4, 100);
    expect(lines(join(dir, "reply.log"))).toEqual(["reject", "reject", "reject", "accept"]);
    const log = t.log.join("\n");
    expect(log).toMatch(/job rejected: job ad: RequestDisk 1125899906842624 KiB is more than the slot's Disk \d+ KiB/);
    expect(log).toContain(`job rejected: job ad: Out "out.txt" is relative and the ad has no Iwd`);
    expect(log).toContain(`job rejected: job ad: KillSig "SIGNOPE" is not a signal`);
    expect(allJobs(t)).toHaveLength(1);
  });
});

describe("condor-fetch: delay, policy and preemption", () => {
  it("FetchWorkDelay defaults to 300 s; one fetch in flight per slot", async () => {
    const s = spool();
    const t = (h = await fetchHost({ keyword: "TEST", hooks: { TEST: { fetch_work: s.fetch } } }));
    await settle(t, () => lines(join(dir, "fetch.log")).length === 1);
    const first = t.clock.now();
    await settle(t, () => t.clock.now() - first >= 299_000, 1000);
    expect(lines(join(dir, "fetch.log"))).toHaveLength(1);
    await settle(t, () => lines(join(dir, "fetch.log")).length === 2, 100);
    expect(t.clock.now() - first).toBeGreaterThanOrEqual(300_000);
    expect(slotAttr(t, 1, "NextFetchWorkDelay")).toBe(300n);
  });

  it("a FetchWorkDelay expression over the slot ad; a locally false Start does not fetch", async () => {
    const s = spool();
    const t = (h = await fetchHost({ keyword: "TEST", fetch_work_delay: 'ifThenElse(State == "Claimed", 5, 20)', start: "MY.Enabled =!= false", hooks: { TEST: { fetch_work: s.fetch } } }));
    await settle(t, () => lines(join(dir, "fetch.log")).length === 2, 500);
    expect(slotAttr(t, 1, "NextFetchWorkDelay")).toBe(20n);
    t.manager.hostAds!.publish("test:off", new (await import("../../src/classad/classad.js")).ClassAd([["Enabled", false]]), { slotIds: [1] });
    const n = lines(join(dir, "fetch.log")).length;
    const at = t.clock.now();
    await settle(t, () => t.clock.now() - at > 100_000, 1000);
    expect(lines(join(dir, "fetch.log"))).toHaveLength(n);
  });

  it("Start rejects (REPLY_FETCH reject); an ad without Cmd is rejected and logged with slot, keyword and hook", async () => {
    const s = spool();
    writeFileSync(join(s.spoolDir, "a.ad"), jobAdText("bio", `Project = "bio"\n`));
    writeFileSync(join(s.spoolDir, "b.ad"), `Project = "physics"\n`);
    writeFileSync(join(s.spoolDir, "c.ad"), jobAdText("phys", `Project = "physics"\n`));
    const t = (h = await fetchHost({ keyword: "TEST", fetch_work_delay: "1", start: 'TARGET.Project == "physics"', hooks: { TEST: { fetch_work: s.fetch, reply_fetch: s.reply } } }));
    await settle(t, () => lines(join(dir, "ran.log")).length === 1 && lines(join(dir, "reply.log")).length === 3, 100);
    expect(lines(join(dir, "reply.log"))).toEqual(["reject", "reject", "accept"]);
    expect(lines(join(dir, "ran.log"))).toEqual(["phys"]);
    expect(t.log.join("\n")).toContain("slot 1 (slot1@");
    expect(t.log.join("\n")).toMatch(/keyword TEST FETCH_WORK: job rejected: job ad: Cmd must be a non-empty string/);
    expect(allJobs(t)).toHaveLength(1);
  });

  it("REPLY_FETCH stdin is the job ad, -----, the slot ad and the ClaimId line, byte for byte", async () => {
    const s = spool();
    const text = jobAdText("alpha", `Rank2 = 1 + 2\n`);
    writeFileSync(join(s.spoolDir, "a.ad"), text);
    const t = (h = await fetchHost({ keyword: "TEST", hooks: { TEST: { fetch_work: s.fetch, reply_fetch: s.reply } } }));
    await settle(t, () => existsSync(join(dir, "reply.0.stdin")) && allJobs(t).length === 1);
    const stdin = readFileSync(join(dir, "reply.0.stdin"), "utf8");
    const [jobPart, rest] = stdin.split("\n-----\n") as [string, string];
    expect(`${jobPart}\n`).toBe(`Cmd = "/bin/sh"\nArguments = "-c 'echo alpha >> ${dir}/ran.log'"\nJobName = "alpha"\nRank2 = 1 + 2\nHookKeyword = "TEST"\n`);
    const claim = attr(t.manager.jobAd(allJobs(t)[0]!), "FetchClaimId");
    expect(rest.endsWith(`\nClaimId = "${String(claim)}"\n`)).toBe(true);
    const slot = readHookAds(rest)[0]!.ad;
    expect(String(slot.evaluate("Name"))).toMatch(/^slot1@/);
    expect(stdin.split("\n").filter((l) => l === "-----")).toHaveLength(1);
  });

  it("bad replies (half ad, nonsense, huge, hang) are discarded whole and logged; the slot fetches again after its delay", async () => {
    const mode = join(dir, "mode");
    // Each mode is served once, then the source has no work.
    const fetch = script("fetch_work", `m=$(cat ${mode})\necho none > ${mode}\ncase $m in\nhalf) printf 'Cmd = "/bin/sh\\nArgs = -c\\n';;\nnonsense) echo 'this is not an ad';;\nhuge) head -c 2000000 /dev/zero | tr '\\\\0' 'A' | sed 's/^/X = "/;s/$/"/';;\nhang) sleep 1000;;\nok) echo 'Cmd = "/bin/true"';;\nesac`);
    const reply = script("reply_fetch", `echo "$1" >> ${dir}/reply.log`);
    writeFileSync(mode, "none");
    const t = (h = await fetchHost({ keyword: "TEST", fetch_work_delay: "2", hooks: { TEST: { fetch_work: fetch, reply_fetch: reply } } }));
    const discarded = () => t.log.filter((l) => l.includes("FETCH_WORK: reply discarded")).length;
    let n = 0;
    for (const m of ["half", "nonsense", "huge", "hang"]) {
      writeFileSync(mode, m);
      await settle(t, () => discarded() === n + 1, 200);
      n++;
    }
    const log = t.log.join("\n");
    expect(log).toMatch(/slot 1 \(slot1@[^)]*\) keyword TEST FETCH_WORK: reply discarded: line 1: attribute Cmd: ClassAd syntax error/);
    expect(log).toMatch(/keyword TEST FETCH_WORK: reply discarded: line 1: no '=' in the line/);
    expect(log).toMatch(/keyword TEST FETCH_WORK: reply discarded: output over/);
    expect(log).toMatch(/keyword TEST FETCH_WORK: reply discarded: killed at its time limit/);
    expect(lines(join(dir, "reply.log"))).toEqual([]);
    expect(allJobs(t)).toEqual([]);
    writeFileSync(mode, "ok");
    await settle(t, () => lines(join(dir, "reply.log")).length === 1 && allJobs(t).length === 1, 1000);
    expect(lines(join(dir, "reply.log"))).toEqual(["accept"]);
  });

  it("work of a strictly higher Rank preempts the claim's job: JOB_EXIT evict, EVICT_CLAIM, then the new job runs", async () => {
    const s = spool();
    writeFileSync(join(s.spoolDir, "a.ad"), `Cmd = "/bin/sh"\nArguments = "-c 'echo low >> ${dir}/ran.log; sleep 1000'"\nPrio = 1\n`);
    const t = (h = await fetchHost({ keyword: "TEST", fetch_work_delay: "10", rank: "TARGET.Prio", hooks: { TEST: { fetch_work: s.fetch, reply_fetch: s.reply, evict_claim: s.evict, job_exit: s.exit } } }));
    await settle(t, () => lines(join(dir, "ran.log")).length === 1, 100);
    const [low] = allJobs(t);
    writeFileSync(join(s.spoolDir, "b.ad"), `Cmd = "/bin/sh"\nArguments = "-c 'echo same >> ${dir}/ran.log'"\nPrio = 1\n`);
    await settle(t, () => lines(join(dir, "reply.log")).length === 2, 500);
    expect(lines(join(dir, "reply.log"))).toEqual(["accept", "reject"]);
    writeFileSync(join(s.spoolDir, "c.ad"), `Cmd = "/bin/sh"\nArguments = "-c 'echo high >> ${dir}/ran.log'"\nPrio = 5\n`);
    await settle(t, () => lines(join(dir, "ran.log")).includes("high") && lines(join(dir, "evict.log")).length === 1 && lines(join(dir, "exit.log")).length >= 1, 500);
    expect(lines(join(dir, "reply.log"))).toEqual(["accept", "reject", "accept"]);
    expect(t.job(low!).state).toBe("INACTIVE");
    expect(t.eventlog(low!).find((e) => e.name === "exception")?.context).toMatchObject({ type: "evict", severity: 0 });
    expect(lines(join(dir, "exit.log"))[0]).toBe("evict");
    expect(lines(join(dir, "evict.log"))).toHaveLength(1);
    const evicted = readHookAds(readFileSync(join(dir, "evict.0.stdin"), "utf8"));
    expect(evicted[0]!.ad.evaluate("Prio")).toBe(1n);
    expect(evicted[1]!.ad.evaluate("ClaimId")).toBe(attr(t.manager.jobAd(low!), "FetchClaimId"));
    expect(lines(join(dir, "ran.log"))).toEqual(["low", "high"]);
  });
});

describe("condor-fetch: starter hooks", () => {
  const starterHost = (hooks: Record<string, string | number>, extra: Record<string, unknown> = {}) =>
    host({}, { plugin: "condor-fetch", conf: { hooks: { TEST: hooks }, ...extra } });
  const withKeyword = { classad: { HookKeyword: '"TEST"' } };

  it("PREPARE_JOB_BEFORE_TRANSFER then PREPARE_JOB (with its ARGS) get the job ad and rewrite the job before start", async () => {
    const before = script("before", `cat > ${dir}/before.stdin\necho before >> ${dir}/order.log\necho 'Stage = "one"'`);
    writeFileSync(join(dir, "prepare.out"), `Cmd = "/bin/echo"\nArguments = "hello 'big world'"\nFoo = 6 * 7\nbad line\nLost = 1\n`);
    const prepare = script("prepare", `cat > ${dir}/prepare.stdin\necho "prepare $*" >> ${dir}/order.log\ncat ${dir}/prepare.out`);
    const t = (h = await starterHost({ prepare_job_before_transfer: before, prepare_job: prepare, prepare_job_args: "-v 'two words'" }));
    const id = await t.submit({ runDuration: 1, ...withKeyword });
    await settle(t, () => t.job(id).state === "INACTIVE");
    expect(lines(join(dir, "order.log"))).toEqual(["before", "prepare -v two words"]);
    expect(readHookAds(readFileSync(join(dir, "before.stdin"), "utf8"))[0]!.ad.evaluate("HookKeyword")).toBe("TEST");
    // PREPARE_JOB saw BEFORE_TRANSFER's output merged in.
    expect(readHookAds(readFileSync(join(dir, "prepare.stdin"), "utf8"))[0]!.ad.evaluate("Stage")).toBe("one");
    expect((t.manager.jobspec(id).tasks[0] as { command: string[] }).command).toEqual(["/bin/echo", "hello", "big world"]);
    const ad = t.manager.jobAd(id);
    expect(attr(ad, "Foo")).toBe(42n);
    expect(attr(ad, "Stage")).toBe("one");
    expect(attr(ad, "Lost")).toBeUndefined(); // parsing stopped at the bad line
    const names = t.events(id);
    expect(names.indexOf("jobspec-update")).toBeLessThan(names.indexOf("prolog-finish"));
    expect(names.indexOf("prolog-finish")).toBeLessThan(names.indexOf("start"));
    expect(t.job(id).result).toBe("COMPLETED");
  });

  it("keyword resolution: STARTER_JOB_HOOK_KEYWORD overrides; an unknown HookKeyword falls back to the default keyword", async () => {
    const mark = (n: string) => script(n, `echo ${n} >> ${dir}/order.log`);
    const t = (h = await host({}, { plugin: "condor-fetch", conf: { starter_default_keyword: "DEF", hooks: { TEST: { prepare_job: mark("test") }, DEF: { prepare_job: mark("def") } } } }));
    const a = await t.submit({ runDuration: 1, ...withKeyword });
    await settle(t, () => t.job(a).state === "INACTIVE");
    const b = await t.submit({ runDuration: 1, classad: { HookKeyword: '"BOGUS"' } });
    await settle(t, () => t.job(b).state === "INACTIVE");
    const c = await t.submit({ runDuration: 1 });
    await settle(t, () => t.job(c).state === "INACTIVE");
    expect(lines(join(dir, "order.log"))).toEqual(["test", "def", "def"]);
    await t.close();
    const u = (h = await host({}, { plugin: "condor-fetch", conf: { starter_keyword: "DEF", hooks: { TEST: { prepare_job: mark("test") }, DEF: { prepare_job: mark("def") } } } }));
    const d = await u.submit({ runDuration: 1, ...withKeyword });
    await settle(u, () => u.job(d).state === "INACTIVE");
    expect(lines(join(dir, "order.log"))).toEqual(["test", "def", "def", "def"]);
  });

  it("HookStatusCode 1-299 holds: the job ends and a held copy has HoldReasonCode 19 and HoldReasonSubCode = status", async () => {
    const prepare = script("prepare", `echo 'HookStatusCode = 42'\necho 'HookStatusMessage = "no license"'`);
    const t = (h = await starterHost({ prepare_job: prepare }));
    const id = await t.submit({ runDuration: 1, ...withKeyword });
    await settle(t, () => t.job(id).state === "INACTIVE" && allJobs(t).length === 2);
    expect(t.events(id)).not.toContain("start");
    const exc = t.eventlog(id).find((e) => e.name === "exception")!.context!;
    expect(exc).toMatchObject({ type: "hold", severity: 0 });
    expect(String(exc.note)).toMatch(/^PREPARE_JOB \(prepare\) failed \(reported status 42\): no license \(held again as ƒ/);
    const copy = allJobs(t).find((j) => j !== id)!;
    await settle(t, () => attr(t.manager.jobAd(copy), "HoldReasonCode") === 19n);
    const ad = t.manager.jobAd(copy);
    expect(attr(ad, "JobStatus")).toBe(5n);
    expect(attr(ad, "HoldReasonSubCode")).toBe(42n);
    expect(String(attr(ad, "HoldReason"))).toContain("no license");
    expect(attr(ad, "HookKeyword")).toBe("TEST");
    expect(attr(ad, "RequeuedFromJobId")).toBe(formatJobId(id));
  });

  it("HookStatusCode >= 300 sends the job back to pending: a copy runs (PREPARE_JOB again) and completes", async () => {
    const prepare = script("prepare", `echo x >> ${dir}/prepare.log\nif [ $(wc -l < ${dir}/prepare.log) -eq 1 ]; then echo 'HookStatusCode = 300'; fi`);
    const t = (h = await starterHost({ prepare_job: prepare }));
    const id = await t.submit({ runDuration: 1, ...withKeyword });
    await settle(t, () => allJobs(t).length === 2 && allJobs(t).every((j) => t.job(j).state === "INACTIVE"), 100);
    expect(t.eventlog(id).find((e) => e.name === "exception")!.context).toMatchObject({ type: "requeue", severity: 0 });
    expect(String(t.eventlog(id).find((e) => e.name === "exception")!.context!.note)).toMatch(/pending again as ƒ\w+, runs in 20 s\)$/);
    const copy = allJobs(t).find((j) => j !== id)!;
    expect(t.job(copy).result).toBe("COMPLETED");
    expect(t.events(id)).not.toContain("start");
    expect(t.events(copy).filter((e) => e === "start")).toHaveLength(1);
    expect(lines(join(dir, "prepare.log"))).toHaveLength(2);
  });

  it("a PREPARE_JOB answering 300 for ever: each copy waits a doubling cool-down, and after max_requeues the copy is held naming the count", async () => {
    const prepare = script("prepare", `echo x >> ${dir}/prepare.log\necho 'HookStatusCode = 300'\necho 'HookStatusMessage = "busy"'`);
    const t = (h = await starterHost({ prepare_job: prepare }, { requeue_delay: 2, requeue_delay_max: 5, max_requeues: 3 }));
    const id = await t.submit({ runDuration: 1, ...withKeyword });
    const held = () => allJobs(t).some((j) => attr(t.manager.jobAd(j), "JobStatus") === 5n);
    await settle(t, () => held() && allJobs(t).filter((j) => t.job(j).state !== "INACTIVE").length === 1, 100);
    // Let simulated time run on: nothing else starts (no runaway).
    const at = t.clock.now();
    await settle(t, () => t.clock.now() - at > 60_000, 1000);
    const jobs = allJobs(t);
    expect(jobs).toHaveLength(5);
    expect(jobs[0]).toBe(id);
    expect(lines(join(dir, "prepare.log"))).toHaveLength(4);
    const attempts = jobs.slice(0, 4);
    const ts = (j: JobId, name: string) => t.eventlog(j).find((e) => e.name === name)!.timestamp;
    // Each copy waits from its submission to its attempt: 2, 4, then 5 (capped) seconds.
    const waits = attempts.slice(1).map((j) => ts(j, "prolog-start") - ts(j, "submit"));
    expect(waits[0]).toBeGreaterThanOrEqual(2);
    expect(waits[0]).toBeLessThan(4);
    expect(waits[1]).toBeGreaterThanOrEqual(4);
    expect(waits[1]).toBeLessThan(5);
    expect(waits[2]).toBeGreaterThanOrEqual(5);
    expect(waits[2]).toBeLessThan(8);
    attempts.slice(1).forEach((j, i) => {
      const ad = t.manager.jobAd(j);
      expect(attr(ad, "NumVacates")).toBe(BigInt(i + 1));
      expect(attr(ad, "NumShadowStarts")).toBe(BigInt(i + 1));
      expect(attr(ad, "NumJobStarts")).toBe(0n);
      expect(Number(attr(ad, "JobCoolDownExpiration"))).toBeGreaterThanOrEqual(ts(j, "submit") + waits[i]! - 1);
      expect(String(attr(ad, "VacateReason"))).toContain("busy");
      expect(t.eventlog(attempts[i]!).find((e) => e.name === "exception")!.context).toMatchObject({ type: "requeue", severity: 0 });
    });
    const last = jobs[4]!;
    const ad = t.manager.jobAd(last);
    expect(attr(ad, "JobStatus")).toBe(5n);
    expect(attr(ad, "NumShadowStarts")).toBe(4n);
    expect(attr(ad, "HoldReasonCode")).toBe(19n);
    expect(attr(ad, "HoldReasonSubCode")).toBe(300n);
    expect(String(attr(ad, "HoldReason"))).toContain("requeued 3 times already (max_requeues = 3)");
    expect(t.eventlog(attempts[3]!).find((e) => e.name === "exception")!.context).toMatchObject({ type: "hold", severity: 0 });
  });

  it("requeue knobs are whole numbers and the cap is not below the first delay", async () => {
    await expect(starterHost({ prepare_job: "/bin/true" }, { max_requeues: "many" })).rejects.toThrow("conf.max_requeues: JOBTAP_MAX_REQUEUES = many: must be a whole number");
    await expect(starterHost({ prepare_job: "/bin/true" }, { requeue_delay: 60, requeue_delay_max: 30 })).rejects.toThrow("conf.requeue_delay_max: JOBTAP_REQUEUE_DELAY_MAX = 30: must not be below SYSTEM_COOLDOWN_DURATION (60)");
    await expect(starterHost({ prepare_job: "/bin/true" }, { requeue_delay: "5m" })).rejects.toThrow("conf.requeue_delay: SYSTEM_COOLDOWN_DURATION = 5m: must be a whole number of seconds");
  });

  it("plugin remove while PREPARE_JOB runs kills the hook and finishes the prolog: the job starts and completes", async () => {
    const prepare = script("prepare", `echo $$ > ${dir}/prepare.pid\nexec sleep 1000`);
    const t = (h = await starterHost({ prepare_job: prepare }));
    const id = await t.submit({ runDuration: 1, ...withKeyword });
    await settle(t, () => existsSync(join(dir, "prepare.pid")) && t.events(id).includes("prolog-start"));
    expect(t.plugins.remove("condor-fetch")).toEqual(["condor-fetch"]);
    await settle(t, () => t.job(id).state === "INACTIVE");
    expect(t.job(id).result).toBe("COMPLETED");
    const names = t.events(id);
    expect(names.indexOf("prolog-finish")).toBeLessThan(names.indexOf("start"));
    const pid = Number(readFileSync(join(dir, "prepare.pid"), "utf8"));
    await settle(t, () => !existsSync(`/proc/${pid}`) || readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.startsWith("Z"));
  });

  it("a PREPARE_JOB that fails to run or is killed holds the job", async () => {
    const prepare = script("prepare", `kill -9 $$`);
    const t = (h = await starterHost({ prepare_job: prepare }));
    const id = await t.submit({ runDuration: 1, ...withKeyword });
    await settle(t, () => t.job(id).state === "INACTIVE" && allJobs(t).length === 2);
    expect(String(t.eventlog(id).find((e) => e.name === "exception")!.context!.note)).toMatch(/^PREPARE_JOB \(prepare\) failed \(killed by SIGKILL\)/);
    const copy = allJobs(t).find((j) => j !== id)!;
    await settle(t, () => attr(t.manager.jobAd(copy), "HoldReasonSubCode") === -9n);
    expect(t.log.join("\n")).toMatch(/job ƒ\w+: PREPARE_JOB \(prepare\) failed \(killed by SIGKILL\)/);
  });

  it("a PREPARE_JOB that hangs is killed at 300 s and the job held (status -1)", async () => {
    const prepare = script("prepare", `exec sleep 1000`);
    const t = (h = await starterHost({ prepare_job: prepare }));
    const id = await t.submit({ runDuration: 1, ...withKeyword });
    await settle(t, () => t.events(id).includes("prolog-start"));
    const at = t.clock.now();
    await settle(t, () => t.job(id).state === "INACTIVE" && allJobs(t).length === 2, 1000);
    expect(t.clock.now() - at).toBeGreaterThanOrEqual(300_000);
    expect(String(t.eventlog(id).find((e) => e.name === "exception")!.context!.note)).toMatch(/^PREPARE_JOB \(prepare\) failed \(killed by SIGTERM at its time limit\)/);
    const copy = allJobs(t).find((j) => j !== id)!;
    await settle(t, () => attr(t.manager.jobAd(copy), "HoldReasonSubCode") === -1n);
  });

  it("UPDATE_JOB_INFO first after 8 s then every 300 s, with usage from /proc; JOB_EXIT remove on cancel", async () => {
    const update = script("update", `n=$(ls ${dir} | grep -c '^update\\.')\ncat > ${dir}/u.tmp\nmv ${dir}/u.tmp ${dir}/update.$n`);
    const exit = script("exit", `cat > ${dir}/exit.tmp\nmv ${dir}/exit.tmp ${dir}/exit.stdin\necho "$1" >> ${dir}/exit.log`);
    const t = (h = await starterHost({ update_job_info: update, job_exit: exit }));
    const id = await submitRaw(t, {
      version: 1,
      resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
      tasks: [{ command: ["/bin/sh", "-c", "exec sleep 1000"], slot: "task", count: { per_slot: 1 } }],
      attributes: { system: { cwd: dir }, user: { classad: { HookKeyword: '"TEST"' } } },
    });
    await settle(t, () => t.events(id).includes("start"));
    const start = t.clock.now();
    const updates = () => readdirSync(dir).filter((f) => /^update\.\d+$/.test(f)).length;
    await settle(t, () => t.clock.now() - start >= 7_900, 100);
    await new Promise((r) => setTimeout(r, 300));
    expect(updates()).toBe(0);
    await settle(t, () => updates() === 1, 10);
    expect(t.clock.now() - start).toBeGreaterThanOrEqual(8_000);
    const first = readHookAds(readFileSync(join(dir, "update.0"), "utf8"))[0]!.ad;
    expect(first.evaluate("JobState")).toBe("Running");
    expect(Number(first.evaluate("JobPid"))).toBeGreaterThan(1);
    expect(first.evaluate("NumPids")).toBe(1n);
    expect(Number(first.evaluate("ImageSize"))).toBeGreaterThan(0);
    expect(typeof first.evaluate("RemoteUserCpu")).toBe("number");
    await settle(t, () => t.clock.now() - start >= 307_000, 1000);
    await new Promise((r) => setTimeout(r, 300));
    expect(updates()).toBe(1);
    await settle(t, () => updates() === 2, 10);
    expect(t.clock.now() - start).toBeGreaterThanOrEqual(308_000);
    t.manager.cancel(id);
    await settle(t, () => t.job(id).state === "INACTIVE");
    expect(lines(join(dir, "exit.log"))).toEqual(["remove"]);
    const ad = readHookAds(readFileSync(join(dir, "exit.stdin"), "utf8"))[0]!.ad;
    expect(ad.evaluate("ExitBySignal")).toBe(true);
    expect(String(ad.evaluate("ExitReason"))).toMatch(/^cancel/);
    expect(Number(ad.evaluate("JobDuration"))).toBeGreaterThanOrEqual(308);
  });

  it("JOB_EXIT's stdin carries the job's final usage (JobPid, CPU, ImageSize) and NumPids counts its whole process tree", async () => {
    const exit = script("exit", `cat > ${dir}/exit.tmp\nmv ${dir}/exit.tmp ${dir}/exit.stdin`);
    const t = (h = await starterHost({ job_exit: exit }));
    const busy = `sleep 1000 & (sleep 1000 &) ; i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done; touch ${dir}/busy-done; exec sleep 1000`;
    const id = await submitRaw(t, {
      version: 1,
      resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
      tasks: [{ command: ["/bin/sh", "-c", busy], slot: "task", count: { per_slot: 1 } }],
      attributes: { system: { cwd: dir }, user: { classad: { HookKeyword: '"TEST"' } } },
    });
    await settle(t, () => existsSync(join(dir, "busy-done")), 10, 60_000);
    // A sample after the busy loop (every 5 s of the manager's clock).
    const at = t.clock.now();
    await settle(t, () => t.clock.now() - at > 6_000, 100);
    t.manager.cancel(id);
    await settle(t, () => t.job(id).state === "INACTIVE" && existsSync(join(dir, "exit.stdin")));
    const ad = readHookAds(readFileSync(join(dir, "exit.stdin"), "utf8"))[0]!.ad;
    expect(Number(ad.evaluate("JobPid"))).toBeGreaterThan(1);
    expect(ad.evaluate("NumPids")).toBe(3n);
    expect(Number(ad.evaluate("RemoteUserCpu")) + Number(ad.evaluate("RemoteSysCpu"))).toBeGreaterThan(0);
    expect(Number(ad.evaluate("ImageSize"))).toBeGreaterThan(0);
    expect(ad.evaluate("JobState")).toBe("Exited");
  });

  it("JOB_EXIT gets exit, hold (time limit), evict; a hung JOB_EXIT is abandoned after its timeout", async () => {
    const exit = script("exit", `echo "$1" >> ${dir}/exit.log\n[ "$1" = evict ] && sleep 1000\nexit 0`);
    const t = (h = await starterHost({ job_exit: exit, job_exit_timeout: 5 }));
    const a = await t.submit({ runDuration: 1, ...withKeyword });
    await settle(t, () => t.job(a).state === "INACTIVE");
    const b = await t.submit({ runDuration: 100, system: { duration: 2 }, ...withKeyword });
    await settle(t, () => t.job(b).state === "INACTIVE");
    const c = await t.submit({ runDuration: 100, ...withKeyword });
    await settle(t, () => t.events(c).includes("start"));
    t.manager.raise(c, { type: "evict", severity: 0, note: "vacate" });
    await settle(t, () => t.events(c).includes("epilog-start"));
    const at = t.clock.now();
    await settle(t, () => t.job(c).state === "INACTIVE", 100);
    expect(t.clock.now() - at).toBeGreaterThanOrEqual(5_000);
    expect(lines(join(dir, "exit.log"))).toEqual(["exit", "hold", "evict"]);
    expect(t.log.join("\n")).toMatch(/keyword TEST JOB_EXIT evict: killed by SIGTERM at its time limit/);
  });
});

describe("condor-fetch: claims", () => {
  it("an idle claim is reused by the next work (same ClaimId); no work vacates it with EVICT_CLAIM", async () => {
    const s = spool();
    writeFileSync(join(s.spoolDir, "a.ad"), jobAdText("a"));
    writeFileSync(join(s.spoolDir, "b.ad"), jobAdText("b"));
    const t = (h = await fetchHost({ keyword: "TEST", fetch_work_delay: 'ifThenElse(State == "Claimed" && Activity == "Idle", 0, 30)', hooks: { TEST: { fetch_work: s.fetch, reply_fetch: s.reply, evict_claim: s.evict } } }));
    await settle(t, () => lines(join(dir, "evict.log")).length === 1, 10);
    expect(lines(join(dir, "ran.log"))).toEqual(["a", "b"]);
    const [a, b] = allJobs(t);
    const claim = attr(t.manager.jobAd(a!), "FetchClaimId");
    expect(attr(t.manager.jobAd(b!), "FetchClaimId")).toBe(claim);
    const evicted = readHookAds(readFileSync(join(dir, "evict.0.stdin"), "utf8"));
    expect(evicted[0]!.ad.evaluate("JobName")).toBe("b");
    expect(evicted[1]!.ad.evaluate("ClaimId")).toBe(claim);
    expect(slotAttr(t, 1, "State")).toBe("Unclaimed");
    expect((await query(t)).slots[0]!.claim).toBeNull();
  });
});

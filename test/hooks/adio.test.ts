import { describe, expect, it } from "vitest";
import { ClassAd, evalAttr, parseOldAd, printOldAd } from "../../src/classad/index.js";
import { CRON_MAX_LINE, CronOutputReader, parseRecordArgs, readCronOutput, writeCronRecord } from "../../plugins-builtin/condor-cron/output.js";
import { JOB_HOOK_SEPARATOR, readHookAd, readHookAds, ROUTER_HOOK_SEPARATOR, writeHookAds } from "../../src/hooks/index.js";

const v = (ad: ClassAd, name: string) => evalAttr(ad, name);

describe("hook ClassAd text: ads and separators", () => {
  const job = parseOldAd('Cmd = "/bin/sleep"\nRequestCpus = 2\nOwner = "alice"\n');
  const slot = parseOldAd('Name = "slot1@host"\nCpus = 4\n');

  it("writes ads with five dashes for job hooks, six for router hooks, and reads them back", () => {
    const text = writeHookAds([job, slot]);
    expect(text).toBe(`${printOldAd(job)}-----\n${printOldAd(slot)}`);
    const back = readHookAds(text);
    expect(back.map((a) => a.ad.size)).toEqual([3, 2]);
    expect(v(back[0]!.ad, "RequestCpus")).toBe(2n);
    expect(v(back[1]!.ad, "Name")).toBe("slot1@host");
    expect(back[1]!.firstLine).toBe(5);
    const routed = writeHookAds(['[ Name = "Route1"; TargetUniverse = 5 ]', job], ROUTER_HOOK_SEPARATOR);
    expect(routed.split("\n")[1]).toBe("------");
    const [route, original] = readHookAds(routed, ROUTER_HOOK_SEPARATOR);
    expect(v(route!.ad, "TargetUniverse")).toBe(5n);
    expect(v(original!.ad, "Owner")).toBe("alice");
  });

  it("a string part is written as given, ended with a newline (REPLY_FETCH's ClaimId line)", () => {
    const text = writeHookAds([job, `${printOldAd(slot)}ClaimId = "<1.2.3.4:5>#1"`]);
    const [, s] = readHookAds(text, JOB_HOOK_SEPARATOR);
    expect(text.endsWith('ClaimId = "<1.2.3.4:5>#1"\n')).toBe(true);
    expect(v(s!.ad, "ClaimId")).toBe("<1.2.3.4:5>#1");
  });

  it("a separator of the other length is a bad line of the ad, reported with its number", () => {
    const [only] = readHookAds(`A = 1\n------\nB = 2\n`, JOB_HOOK_SEPARATOR).map((a) => a);
    expect(only!.failed).toEqual([{ line: 2, text: "------", message: "no '=' in the line" }]);
    expect(only!.ad.size).toBe(2);
  });

  it("half an ad (output cut mid-line): good lines kept, the cut line reported", () => {
    const { ad, failed } = readHookAd('Cmd = "/bin/true"\nRequestCpus = 1\nArgs = "--alpha --be');
    expect(ad.names()).toEqual(["Cmd", "RequestCpus"]);
    expect(failed.map((f) => f.line)).toEqual([3]);
    expect(failed[0]!.message).toContain("Args");
  });

  it("garbage: every bad line reported with its line number, nothing invented", () => {
    const garbage = "\u0000\u0001binary\u00ff\n= 3\n'Quoted' = 1\nok = 7\n}{][\nx = (1 +\n";
    const { ad, failed } = readHookAd(garbage);
    expect(ad.names()).toEqual(["ok"]);
    expect(failed.map((f) => f.line)).toEqual([1, 2, 3, 5, 6]);
    expect(failed[1]!.message).toBe("empty attribute name");
  });

  it("empty output is no ads; blank parts keep their position; a trailing separator adds nothing", () => {
    expect(readHookAds("")).toEqual([]);
    expect(readHookAds("\n  \n")).toEqual([]);
    const ads = readHookAds("-----\nB = 2\n-----\n");
    expect(ads.map((a) => a.ad.size)).toEqual([0, 1]);
    expect(readHookAd("").ad.size).toBe(0);
  });

  it("a new-style part that does not parse is one failed line, at its first line", () => {
    const [bad, good] = readHookAds("[ a = 1; b = ]\n------\nC = 3\n", ROUTER_HOOK_SEPARATOR);
    expect(bad!.ad.size).toBe(0);
    expect(bad!.failed).toHaveLength(1);
    expect(bad!.failed[0]!.line).toBe(1);
    expect(good!.failed).toEqual([]);
  });
});

describe("cron output records (- [tag] [update:bool])", () => {
  it("splits records, tags and update flags; the last record may end at end of output", () => {
    const out = "Value = 1\nSlotId = 1\n-s1\nValue = 2\nSlotId = 2\n- s2 update:false\nValue = 10\n- update:true\nTail = \"t\"\n";
    const { records, failed } = readCronOutput(out);
    expect(failed).toEqual([]);
    expect(records.map((r) => [r.tag, r.update, v(r.ad, "Value") ?? null])).toEqual([
      ["s1", undefined, 1n],
      ["s2", false, 2n],
      [undefined, true, 10n],
      [undefined, undefined, evalAttr(new ClassAd(), "Value")],
    ]);
    expect(v(records[3]!.ad, "Tail")).toBe("t");
    expect(records[1]!.args).toBe("s2 update:false");
  });

  it("update forms: the tag comes first, bare word, booleans, 1/0, an expression over the record, a bad value (true)", () => {
    const ad = parseOldAd("Load = 3\n");
    // as in HTCondor, a first token without ':' is the tag, even the word update
    expect(parseRecordArgs("update", ad)).toEqual({ tag: "update", update: undefined });
    expect(parseRecordArgs("t update", ad)).toEqual({ tag: "t", update: true });
    expect(parseRecordArgs("update:true update:false", ad)).toEqual({ tag: undefined, update: false });
    expect(parseRecordArgs("tag,update:0", ad)).toEqual({ tag: "tag", update: false });
    // tokens split at blanks: this is update:Load (3, true) and two stray tokens
    expect(parseRecordArgs("update:Load > 2", ad)).toEqual({ tag: undefined, update: true });
    expect(parseRecordArgs("t update:Load>5", ad)).toEqual({ tag: "t", update: false });
    expect(parseRecordArgs("t update:\"x\"", ad)).toEqual({ tag: "t", update: true });
    expect(parseRecordArgs("t Update:false", ad)).toEqual({ tag: "t", update: undefined });
    expect(parseRecordArgs("", ad)).toEqual({ tag: undefined, update: undefined });
  });

  it("empty records are not returned; their tag does not leak into the next record", () => {
    const { records } = readCronOutput("- first\n-\nA = 1\n-\n\n\nB = 2\n- second\n");
    expect(records.map((r) => [r.tag, r.ad.names()])).toEqual([
      [undefined, ["A"]],
      ["second", ["B"]],
    ]);
  });

  it("bad lines are reported with their line numbers; the rest of the record still counts", () => {
    const { records, failed } = readCronOutput("A = 1\ngarbage here\nB = 2\n-\n???\n- x\n");
    expect(records).toHaveLength(1);
    expect(records[0]!.ad.names()).toEqual(["A", "B"]);
    expect(records[0]!.failed.map((f) => f.line)).toEqual([2]);
    expect(failed.map((f) => f.line)).toEqual([2, 5]);
  });

  it("PREFIX goes in front of every attribute line", () => {
    const { records } = readCronOutput("Temp = 40\n- gpu0\n", { prefix: "Sensor_" });
    expect(records[0]!.ad.names()).toEqual(["Sensor_Temp"]);
  });

  it("lines end at newline or NUL; a line over 64 KiB is split", () => {
    const { records } = readCronOutput("A = 1\u0000B = 2\u0000-\u0000");
    expect(records[0]!.ad.names()).toEqual(["A", "B"]);
    const long = `L = "${"x".repeat(CRON_MAX_LINE)}"\nM = 1\n`;
    const r = readCronOutput(long);
    expect(r.records[0]!.ad.names()).toEqual(["M"]);
    expect(r.failed.map((f) => f.line)).toEqual([1, 2]);
  });

  it("streaming in arbitrary chunks gives what reading at once gives", () => {
    const out = "A = 1\nB = \"two\"\n- t1 update\nC = 3\r\nbad line\n-\nD = {1, 2}\nE = 5";
    const whole = readCronOutput(out).records.map((r) => [r.tag, r.update, printOldAd(r.ad)]);
    for (const size of [1, 2, 3, 7]) {
      const reader = new CronOutputReader();
      const got = [];
      for (let i = 0; i < out.length; i += size) got.push(...reader.push(out.slice(i, i + size)));
      got.push(...reader.end());
      expect(got.map((r) => [r.tag, r.update, printOldAd(r.ad)])).toEqual(whole);
    }
    expect(whole).toHaveLength(3);
  });

  it("half output (cut mid-line) and pure garbage", () => {
    const half = readCronOutput('A = 1\n- one\nB = "cut');
    expect(half.records.map((r) => r.ad.names())).toEqual([["A"]]);
    expect(half.failed.map((f) => f.line)).toEqual([3]);
    const junk = readCronOutput("\u00ff\u00fe\n%%%\n= =\n");
    expect(junk.records).toEqual([]);
    expect(junk.failed.map((f) => f.line)).toEqual([1, 2, 3]);
  });

  it("writeCronRecord writes what readCronOutput reads", () => {
    const ad = parseOldAd('Value = 1\nName = "slot1"\n');
    const text = writeCronRecord(ad, { tag: "s1", update: true }) + writeCronRecord(ad);
    expect(text.split("\n")[2]).toBe("- s1 update:true");
    const { records } = readCronOutput(text);
    expect(records.map((r) => [r.tag, r.update, r.ad.size])).toEqual([
      ["s1", true, 2],
      [undefined, undefined, 2],
    ]);
  });
});

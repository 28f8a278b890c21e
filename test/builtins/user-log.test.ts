/**
 * .user-log: a job whose ad names `UserLog` gets HTCondor's event log, parsed back here by
 * HTCondor's format rules (userlog-parse.ts): event numbers, cluster.proc.subproc, times.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { host, rejected, settle, type TestHost } from "./helpers.js";
import { parseUserLog } from "./userlog-parse.js";
import { formatUserLogEvent } from "../../src/condor/user-log.js";

let h: TestHost | undefined;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "jobtap-userlog-"));
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const log = (path: string) => parseUserLog(readFileSync(path, "utf8"));

describe(".user-log", () => {
  it("writes 000, 001 and 005 for a job that runs; 000, 012, 013 and 009 for one held, released and cancelled", async () => {
    const t = (h = await host());
    const path = join(dir, "job.log");
    const a = await t.submit({ runDuration: 2, classad: { UserLog: JSON.stringify(path) } });
    await settle(t, () => t.job(a).state === "INACTIVE");
    const b = await t.submit({ urgency: 0, classad: { UserLog: JSON.stringify(path) } });
    await t.advance(3000);
    t.manager.setUrgency(b, 16);
    t.manager.cancel(b);
    await settle(t, () => t.job(b).state === "INACTIVE");
    const events = log(path);
    expect(events.map((e) => e.event)).toEqual([0, 1, 5, 0, 12, 13, 9]);
    const cluster = (id: typeof a) => t.manager.jobAd(id).evaluate("ClusterId") as bigint;
    expect(events.slice(0, 3).every((e) => e.cluster === cluster(a) && e.proc === 0 && e.subproc === 0)).toBe(true);
    expect(events.slice(3).every((e) => e.cluster === cluster(b))).toBe(true);
    const ts = (id: typeof a, name: string) => Math.floor(t.eventlog(id).find((e) => e.name === name)!.timestamp);
    expect(events[0]!.time).toBe(ts(a, "submit"));
    expect(events[1]!.time).toBe(ts(a, "start"));
    expect(events[2]!.time).toBe(ts(a, "finish"));
    expect(events[1]!.text).toMatch(/^Job executing on host: <.+>$/);
    expect(events[2]!.text).toBe("Job terminated.");
    expect(events[2]!.body[0]).toBe("\t(1) Normal termination (return value 0)");
    expect(events[2]!.body[1]).toBe("\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage");
    expect(events[4]!.body).toEqual(["\tsubmitted on hold", "\tCode 15 Subcode 0"]);
    expect(events[6]!.text).toBe("Job was aborted.");
  });

  it("an abnormal termination and the rusage form", () => {
    const text = formatUserLogEvent({ cluster: 7n, proc: 0 }, 0, { type: "terminated", signal: 9, usage: { userCpu: 90061, sysCpu: 5 } });
    const [e] = parseUserLog(text);
    expect(e!.body.slice(0, 3)).toEqual(["\t(0) Abnormal termination (signal 9)", "\t(0) No core file", "\t\tUsr 1 01:01:01, Sys 0 00:00:05  -  Run Remote Usage"]);
    expect(text.startsWith("005 (007.000.000) ")).toBe(true);
  });

  it("refuses a relative log path and a guest's log at submit", async () => {
    const t = (h = await host());
    expect(await rejected(t, { classad: { UserLog: '"job.log"' } })).toContain("UserLog: must be an absolute path");
    expect(await rejected(t, { userid: 4242, classad: { UserLog: JSON.stringify(join(dir, "g.log")) } })).toContain("UserLog: a guest's job cannot have a user log");
  });
});

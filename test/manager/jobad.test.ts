import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import type { ClassAd } from "../../src/classad/index.js";
import { loadUserTable } from "../../src/manager/base/users.js";
import { isJobtapError } from "../../src/errors.js";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import { parseClassadAssignment } from "../../src/manager/ads/jobad.js";
import type { Jobspec } from "../../src/manager/port/records.js";
import { jobspec, simManager, submitNow, testJob, type SimManager } from "./helpers.js";

/** The value of an attribute, or "absent". */
function v(ad: ClassAd, name: string): unknown {
  return ad.has(name) ? ad.evaluate(name) : "absent";
}

const T0 = Date.UTC(2026, 0, 1) / 1000;

/** Seconds since the simulated clock's start. */
function at(s: SimManager): number {
  return Math.floor(s.clock.now() / 1000);
}

function withClassad(js: Jobspec, classad: Record<string, string>): Jobspec {
  js.attributes.user = { classad };
  return js;
}

describe("job ads: attributes in every state", () => {
  it("running, idle, held (submitted on hold, then held by the user), completed, removed", async () => {
    const s = await simManager({ resources: { cores: 1, gpus: 0, memory: 1 << 30 } });
    const owner = loadUserTable().name(1000);
    const running = await submitNow(s, testJob("100s", { wait_status: 3 << 8 }, { cwd: "/work/dir" }));
    await s.clock.advance(1);
    const idle = await submitNow(s, testJob("1s"));
    const heldAtSubmit = await submitNow(s, testJob("1s"), { urgency: 0 });
    await s.clock.advance(1);

    let ad = s.mgr.jobAd(running);
    expect(v(ad, "JobStatus")).toBe(2n);
    expect(v(ad, "JobId")).toBe(formatJobId(running));
    expect(v(ad, "ClusterId")).toBe(running as bigint);
    expect(v(ad, "ProcId")).toBe(0n);
    expect(v(ad, "GlobalJobId")).toBe(`${hostname()}#${running}.0#${T0}`);
    expect(v(ad, "Owner")).toBe(owner);
    expect(v(ad, "User")).toBe(`${owner}@${hostname()}`);
    expect(v(ad, "QDate")).toBe(BigInt(T0));
    expect(v(ad, "JobStartDate")).toBe(BigInt(T0));
    expect(v(ad, "EnteredCurrentStatus")).toBe(BigInt(T0));
    expect(v(ad, "NumJobStarts")).toBe(1n);
    expect(v(ad, "CompletionDate")).toBe(0n);
    expect(v(ad, "ExitCode")).toBe("absent");
    expect(v(ad, "RemoteWallClockTime")).toBe(0);
    expect(v(ad, "JobUniverse")).toBe(5n);
    expect(v(ad, "Iwd")).toBe("/work/dir");
    expect(v(ad, "HoldReason")).toBe("absent");

    // The second job waits for the cores the first one holds.
    ad = s.mgr.jobAd(idle);
    expect(v(ad, "JobStatus")).toBe(1n);
    expect(v(ad, "JobStartDate")).toBe("absent");
    expect(v(ad, "NumJobStarts")).toBe(0n);

    ad = s.mgr.jobAd(heldAtSubmit);
    expect(v(ad, "JobStatus")).toBe(5n);
    expect(v(ad, "HoldReasonCode")).toBe(15n);
    expect(v(ad, "HoldReason")).toMatch(/submitted on hold/);

    await s.clock.advance(9_000);
    s.mgr.setUrgency(idle, 0);
    ad = s.mgr.jobAd(idle);
    expect(v(ad, "JobStatus")).toBe(5n);
    expect(v(ad, "HoldReasonCode")).toBe(1n);
    expect(v(ad, "HoldReason")).toBe(`via jobtap urgency (by user ${owner})`);
    expect(v(ad, "EnteredCurrentStatus")).toBe(BigInt(at(s)));
    await s.clock.advance(5_000);
    s.mgr.setUrgency(idle, 16);
    ad = s.mgr.jobAd(idle);
    expect(v(ad, "JobStatus")).toBe(1n);
    expect(v(ad, "EnteredCurrentStatus")).toBe(BigInt(at(s)));
    expect(v(ad, "HoldReason")).toBe("absent");

    // A pending job cancelled: removed from the exception on.
    await s.clock.advance(1_000);
    s.mgr.cancel(heldAtSubmit);
    const removedAt = at(s);
    await s.clock.advance(1_000);
    ad = s.mgr.jobAd(heldAtSubmit);
    expect(s.mgr.job(heldAtSubmit).state).toBe("INACTIVE");
    expect(v(ad, "JobStatus")).toBe(3n);
    expect(v(ad, "EnteredCurrentStatus")).toBe(BigInt(removedAt));
    expect(v(ad, "CompletionDate")).toBe(0n);

    // The first job exits with status 3 at 100 s: completed, with its exit code and wall time.
    await s.clock.advance(100_000);
    expect(s.mgr.job(running).state).toBe("INACTIVE");
    ad = s.mgr.jobAd(running);
    expect(v(ad, "JobStatus")).toBe(4n);
    expect(v(ad, "ExitBySignal")).toBe(false);
    expect(v(ad, "ExitCode")).toBe(3n);
    expect(v(ad, "ExitSignal")).toBe("absent");
    expect(v(ad, "RemoteWallClockTime")).toBe(100);
    expect(v(ad, "CompletionDate")).toBe(BigInt(T0 + 100));
    expect(v(ad, "EnteredCurrentStatus")).toBe(BigInt(T0 + 100));
    await s.mgr.close();
  });

  it("a running job that is cancelled stays running until clean, then is removed; a signal exit is recorded", async () => {
    const s = await simManager();
    const id = await submitNow(s, testJob("1h"));
    await s.clock.advance(10_000);
    s.mgr.cancel(id);
    await s.clock.advance(10_000);
    const ad = s.mgr.jobAd(id);
    expect(v(ad, "JobStatus")).toBe(3n);
    expect(v(ad, "ExitBySignal")).toBe(true);
    expect(v(ad, "ExitSignal")).toBe(15n);
    expect(v(ad, "ExitCode")).toBe("absent");
    expect(v(ad, "RemoteWallClockTime")).toBe(10);
    expect(v(ad, "NumJobStarts")).toBe(1n);
    await s.mgr.close();
  });

  it("takes the request, command, arguments and output paths from the jobspec", async () => {
    const s = await simManager({ resources: { cores: 4, gpus: 2, memory: 8 * 2 ** 30 } });
    const js = jobspec(["/bin/echo", "one", "two words", "it's"], { cwd: "/data", exec: { test: { run_duration: "1h" } } }, { cores: 2, gpus: 1 });
    (js.resources[0] as { with: unknown[] }).with.push({ type: "memory", count: 1536, unit: "MB" });
    js.attributes.system!.shell = { options: { output: { stdout: { path: "out/{{id}}.log" } } } };
    const id = await submitNow(s, js);
    const ad = s.mgr.jobAd(id);
    expect(v(ad, "RequestCpus")).toBe(2n);
    expect(v(ad, "RequestGpus")).toBe(1n);
    expect(v(ad, "RequestMemory")).toBe(1536n);
    expect(v(ad, "Cmd")).toBe("/bin/echo");
    expect(v(ad, "Arguments")).toBe("one 'two words' 'it''s'");
    expect(v(ad, "Out")).toBe(`/data/out/${formatJobId(id)}.log`);
    expect(v(ad, "Err")).toMatch(new RegExp(`/${formatJobId(id)}/stderr$`));
    await s.mgr.close();
  });
});

describe("job ads: hold reasons given by a plugin", () => {
  it("an urgency-0 event carrying hold_reason and hold_reason_code sets HoldReason and HoldReasonCode", async () => {
    const s = await simManager({ resources: { cores: 1 } });
    await submitNow(s, testJob("1h"));
    const id = await submitNow(s, testJob("1h"));
    s.mgr.port.postEvent(id, "urgency", { urgency: 0, userid: 1000, hold_reason: "PREPARE_JOB hook exited with 5", hold_reason_code: 19 });
    const ad = s.mgr.jobAd(id);
    expect(v(ad, "JobStatus")).toBe(5n);
    expect(v(ad, "HoldReasonCode")).toBe(19n);
    expect(v(ad, "HoldReason")).toBe("PREPARE_JOB hook exited with 5");
    await s.mgr.close();
  });
});

describe("job ads: user attributes, caching, read-only", () => {
  it("carries every user attribute as an expression over the ad", async () => {
    const s = await simManager();
    const id = await submitNow(s, withClassad(testJob("1h"), { WantJobRouter: "true", Project: '"physics"', Twice: "RequestCpus * 2" }));
    const ad = s.mgr.jobAd(id);
    expect(v(ad, "WantJobRouter")).toBe(true);
    expect(v(ad, "project")).toBe("physics");
    expect(v(ad, "Twice")).toBe(2n);
    expect(ad.names()).toEqual(expect.arrayContaining(["WantJobRouter", "Project", "Twice", "JobStatus"]));
    await s.mgr.close();
  });

  it("rejects a user attribute that does not parse, naming the attribute, its text and column", async () => {
    const s = await simManager();
    await expect(s.mgr.submit(withClassad(testJob(0), { Good: "1", Bad: "(1 + " }))).rejects.toMatchObject({
      code: "BAD_JOBSPEC",
      message: expect.stringMatching(/attributes\.user\.classad\.Bad: ClassAd syntax error at column 12: .*end of input/),
    });
    await expect(s.mgr.submit(withClassad(testJob(0), { JobStatus: "7" }))).rejects.toMatchObject({
      code: "BAD_JOBSPEC",
      message: expect.stringMatching(/JobStatus is computed by jobtap/),
    });
    await expect(s.mgr.submit(withClassad(testJob(0), { X: 7 as unknown as string }))).rejects.toMatchObject({
      message: expect.stringMatching(/classad\.X: must be ClassAd expression text/),
    });
    expect(s.mgr.jobs()).toEqual([]);
    await s.mgr.close();
  });

  it("is shared until the job's next event, and read-only", async () => {
    const s = await simManager({ resources: { cores: 1 } });
    await submitNow(s, testJob("1h"));
    const id = await submitNow(s, testJob("1h"));
    const a = s.mgr.jobAd(id);
    expect(s.mgr.jobAd(id)).toBe(a);
    s.mgr.setUrgency(id, 5);
    const b = s.mgr.jobAd(id);
    expect(b).not.toBe(a);
    expect(v(a, "JobStatus")).toBe(1n); // the old snapshot is unchanged
    let code: string | undefined;
    try {
      b.set("JobStatus", 7n);
    } catch (e) {
      code = isJobtapError(e) ? e.code : "?";
    }
    expect(code).toBe("FROZEN_AD");
    // Every writer refuses, including the low-level ones the ad readers use.
    for (const write of [() => b.bind("X", b.lookup("JobStatus")!), () => b.delete("JobStatus"), () => b.clear(), () => b.setExpr("X", "1"), () => b.update(b.clone())]) {
      expect(write).toThrow(/read-only/);
    }
    const copy = b.clone();
    copy.set("JobStatus", 7n);
    expect(v(copy, "JobStatus")).toBe(7n);
    expect(v(s.mgr.jobAd(id), "JobStatus")).toBe(1n);
    expect(() => s.mgr.jobAd(12345n as JobId)).toThrow(/unknown job/);
    await s.mgr.close();
  });

  it("evaluates in matchmaking like any ad", async () => {
    const s = await simManager();
    const id = await submitNow(s, withClassad(testJob("1h"), { Requirements: "TARGET.Cpus >= RequestCpus" }));
    const { ClassAd, matches } = await import("../../src/classad/index.js");
    const machine = new ClassAd([["Cpus", 4n]]).setExpr("Requirements", "TARGET.JobUniverse == 5");
    expect(matches(s.mgr.jobAd(id), machine)).toBe(true);
    machine.set("Cpus", 0n);
    expect(matches(s.mgr.jobAd(id), machine)).toBe(false);
    await s.mgr.close();
  });
});

describe("--classad assignments", () => {
  it("accepts Name = expr, +Name=expr and MY.Name = expr", () => {
    expect(parseClassadAssignment("WantJobRouter = true")).toEqual({ name: "WantJobRouter", text: "true" });
    expect(parseClassadAssignment('+Project="x"')).toEqual({ name: "Project", text: '"x"' });
    expect(parseClassadAssignment("MY.Rank = TARGET.Memory / 1024 ")).toEqual({ name: "Rank", text: "TARGET.Memory / 1024" });
  });

  it("names the text and the column of a syntax error", () => {
    const err = (arg: string): string => {
      try {
        parseClassadAssignment(arg);
      } catch (e) {
        return (e as Error).message;
      }
      return "accepted";
    };
    expect(err("Foo = 1 +* 2")).toBe(`--classad 'Foo = 1 +* 2': ClassAd syntax error at column 10: expected an expression, found "*"`);
    expect(err("Foo")).toMatch(/--classad 'Foo': expected Name = expression/);
    expect(err("Foo = ")).toMatch(/missing expression/);
    expect(err("Foo == 1")).toMatch(/expected Name = expression/);
    expect(err("+JobStatus = 1")).toMatch(/JobStatus is computed by jobtap/);
  });
});

describe("jobspecFromAd: a job from a job ad", () => {
  it("round-trips: the ad of the job built from an ad carries the same command, requests, paths and user attributes", async () => {
    const { jobspecFromAd } = await import("../../src/manager/ads/jobspec-from-ad.js");
    const { parseOldAd } = await import("../../src/classad/index.js");
    const fetched = parseOldAd(
      [
        'Cmd = "/bin/echo"',
        `Arguments = "one 'two words'"`,
        'Iwd = "/data"',
        "RequestCpus = 2 * 1",
        "RequestMemory = 1536",
        'Out = "/data/out.log"',
        'HookKeyword = "FETCH"',
        "Rank = TARGET.Memory / 1024",
        "JobStatus = 1",
        "ClusterId = 17",
      ].join("\n"),
    );
    const js = jobspecFromAd(fetched, { system: { exec: { test: { run_duration: "1h" } } } });
    expect(js.tasks[0]).toMatchObject({ command: ["/bin/echo", "one", "two words"] });
    expect(js.attributes.user).toEqual({ classad: { HookKeyword: '"FETCH"', Rank: "TARGET.Memory / 1024" } });
    const s = await simManager({ resources: { cores: 4, gpus: 0, memory: 8 * 2 ** 30 } });
    const id = await submitNow(s, js);
    const ad = s.mgr.jobAd(id);
    expect(v(ad, "Cmd")).toBe("/bin/echo");
    expect(v(ad, "Arguments")).toBe("one 'two words'");
    expect(v(ad, "Iwd")).toBe("/data");
    expect(v(ad, "RequestCpus")).toBe(2n);
    expect(v(ad, "RequestMemory")).toBe(1536n);
    expect(v(ad, "Out")).toBe("/data/out.log");
    expect(v(ad, "HookKeyword")).toBe("FETCH");
    expect(v(ad, "ClusterId")).toBe(id as bigint); // computed again, not copied
    await s.mgr.close();
  });

  it("refuses an ad without Cmd or with a bad request", async () => {
    const { jobspecFromAd } = await import("../../src/manager/ads/jobspec-from-ad.js");
    const { parseOldAd } = await import("../../src/classad/index.js");
    expect(() => jobspecFromAd(parseOldAd("RequestCpus = 1"))).toThrow("job ad: Cmd must be a non-empty string");
    expect(() => jobspecFromAd(parseOldAd('Cmd = "x"\nRequestCpus = "many"'))).toThrow("job ad: RequestCpus must evaluate to a non-negative integer");
    expect(jobspecFromAd(parseOldAd('Cmd = "x"\nArgs = "a  b"')).tasks[0]).toMatchObject({ command: ["x", "a", "b"] });
  });
});

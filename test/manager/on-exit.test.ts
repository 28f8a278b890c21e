import { describe, expect, it } from "vitest";
import { formatJobId, parseJobId, type JobId } from "../../src/manager/base/ids.js";
import type { Jobspec } from "../../src/manager/port/records.js";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { parseExpr } from "../../src/classad/parser.js";
import { simManager, submitNow, tempDir, testJob, type SimManager } from "./helpers.js";

/** A test-executor job that runs 10 s and ends with `waitStatus`, with these ClassAd attributes. */
function exiting(waitStatus: number, classad: Record<string, string>): Jobspec {
  const js = testJob("10s", { wait_status: waitStatus });
  js.attributes.user = { classad };
  return js;
}

/** Runs the clock until the job is inactive. */
async function ended(s: SimManager, id: JobId): Promise<void> {
  for (let i = 0; i < 100 && s.mgr.job(id).state !== "INACTIVE"; i++) await s.clock.advance(500);
}

/** The copy named in the original's memo ("... (held again as ƒ...)"). */
function copyIn(s: SimManager, id: JobId): JobId | undefined {
  const memo = s.mgr.eventlog(id).find((e) => e.name === "memo");
  const m = /again as (\S+)\)/.exec(String(memo?.context?.policy ?? ""));
  return m ? parseJobId(m[1]!) : undefined;
}

describe("OnExitHold / OnExitRemove (evaluated when the job's task exits)", () => {
  it("OnExitHold true: the job ends and a copy is held with HoldReasonCode 3 and OnExitHoldReason/SubCode, seen before the next interval", async () => {
    const s = await simManager();
    const t0 = s.clock.now();
    const id = await submitNow(s, exiting(3 << 8, { OnExitHold: "ExitCode != 0 && ExitBySignal == false", OnExitHoldReason: 'strcat("exit code ", ExitCode)', OnExitHoldSubCode: "ExitCode" }));
    await ended(s, id);
    expect(s.clock.now() - t0).toBeLessThan(60_000);
    expect(s.mgr.jobAd(id).evaluate("JobStatus")).toBe(4n);
    const copy = copyIn(s, id)!;
    const ad = s.mgr.jobAd(copy);
    expect([ad.evaluate("JobStatus"), ad.evaluate("HoldReasonCode"), ad.evaluate("HoldReasonSubCode"), ad.evaluate("HoldReason")]).toEqual([5n, 3n, 3n, "exit code 3"]);
    expect(ad.evaluate("RequeuedFromJobId")).toBe(formatJobId(id));
  });

  it("OnExitRemove false: the job stays in the queue, as a pending copy that runs (HTCondor's idle again)", async () => {
    const s = await simManager();
    const id = await submitNow(s, exiting(1 << 8, { OnExitRemove: "ExitCode == 0 || RequeuedFromJobId =!= undefined" }));
    await ended(s, id);
    const copy = copyIn(s, id)!;
    expect(s.mgr.eventlog(id).find((e) => e.name === "memo")?.context?.policy).toMatch(
      /^The job attribute OnExitRemove expression 'ExitCode == 0 \|\| RequeuedFromJobId =!= undefined' evaluated to FALSE \(pending again as /,
    );
    await ended(s, copy);
    expect(s.mgr.jobAd(copy).evaluate("ExitCode")).toBe(1n);
    expect(copyIn(s, copy)).toBeUndefined();
  });

  it("OnExitRemove true or absent, or an exit by signal the expressions do not name, leaves the queue as before", async () => {
    const s = await simManager();
    const a = await submitNow(s, exiting(0, { OnExitRemove: "ExitCode == 0" }));
    const b = await submitNow(s, exiting(9, { OnExitHold: "ExitCode =!= undefined && ExitCode != 0" }));
    await ended(s, a);
    await ended(s, b);
    expect([copyIn(s, a), copyIn(s, b)]).toEqual([undefined, undefined]);
    expect([s.mgr.jobAd(b).evaluate("ExitBySignal"), s.mgr.jobAd(b).evaluate("ExitSignal")]).toEqual([true, 9n]);
  });

  it("the periodic expressions are evaluated at exit too, before OnExit*; a job ended by the policy is not evaluated again", async () => {
    const s = await simManager();
    const id = await submitNow(s, exiting(2 << 8, { PeriodicHold: "ExitCode =?= 2", OnExitHold: "true", OnExitHoldReason: '"not this one"' }));
    await ended(s, id);
    const ad = s.mgr.jobAd(copyIn(s, id)!);
    expect([ad.evaluate("HoldReasonCode"), ad.evaluate("HoldReason")]).toEqual([3n, "The job attribute PeriodicHold expression 'ExitCode =?= 2' evaluated to TRUE"]);
    const removed = await submitNow(s, testJob("1h"));
    s.mgr.cancel(removed);
    await ended(s, removed);
    const long = testJob("1h");
    long.attributes.user = { classad: { PeriodicRemove: "JobStatus == 2", OnExitRemove: "false" } };
    const killed = await submitNow(s, long);
    await s.clock.advance(60_000);
    await ended(s, killed);
    expect(s.mgr.jobAd(killed).evaluate("JobStatus")).toBe(3n);
    expect(s.logs.filter((l) => l.includes("again as"))).toHaveLength(1);
  });
});

describe("a restart while an exited job's copy is being submitted", () => {
  it("the job's policy epilog is closed after the restart and it has exactly one held copy", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const a = await simManager({ statedir: dir, store: "sqlite" });
      const id = await submitNow(a, exiting(5 << 8, { OnExitHold: "ExitCode == 5" }));
      for (let i = 0; i < 100 && !a.mgr.eventlog(id).some((e) => e.name === "epilog-start"); i++) await a.clock.advance(100);
      expect(a.mgr.job(id).state).toBe("CLEANUP");
      await a.mgr.close();
      const b = await simManager({ statedir: dir, store: "sqlite", clock: new SimulatedClock(a.clock.now()) });
      await ended(b, id);
      const copies = b.mgr.jobs().filter((j) => j.id !== id);
      expect(copies).toHaveLength(1);
      expect(b.mgr.jobAd(copies[0]!.id).evaluate("JobStatus")).toBe(5n);
      expect(b.mgr.eventlog(id).filter((e) => e.name === "epilog-finish")).toHaveLength(1);
      await b.mgr.close();
    } finally {
      cleanup();
    }
  });
});

describe("exit-time check: watched only while a job or the site has a policy (issue 35 (c))", () => {
  it("a classad-update giving a running job its first expression is checked at the job's exit", async () => {
    const s = await simManager();
    const id = await submitNow(s, exiting(1 << 8, {}));
    await s.clock.advance(1_000);
    s.mgr.port.postEvent(id, "classad-update", { attributes: { OnExitHold: "ExitCode != 0" } });
    await ended(s, id);
    expect(copyIn(s, id)).toBeDefined();
  });

  it("a reload that adds SYSTEM_PERIODIC_HOLD makes a job with no expression of its own checked at exit", async () => {
    const s = await simManager();
    const id = await submitNow(s, exiting(1 << 8, {}));
    await s.clock.advance(1_000);
    s.mgr.periodic.setSystem({ hold: { expr: parseExpr("ExitCode =!= undefined && ExitCode != 0", true) } });
    await ended(s, id);
    const copy = copyIn(s, id)!;
    expect(s.mgr.jobAd(copy).evaluate("HoldReasonCode")).toBe(26n);
  });

  it("with SYSTEM_PERIODIC_HOLD, a job submitted after a pass over an empty queue is checked at exit", async () => {
    const s = await simManager({ systemPeriodic: { hold: { expr: parseExpr("ExitCode =!= undefined && ExitCode != 0", true) } } });
    await s.clock.advance(61_000);
    const id = await submitNow(s, exiting(1 << 8, {}));
    await ended(s, id);
    expect(copyIn(s, id)).toBeDefined();
  });

  it("after every job with an expression ended (and a pass saw none), a new one is checked at exit again", async () => {
    const s = await simManager();
    const first = await submitNow(s, exiting(0, { OnExitHold: "false" }));
    await ended(s, first);
    await s.clock.advance(60_000);
    const second = await submitNow(s, exiting(1 << 8, { OnExitHold: "ExitCode != 0" }));
    await ended(s, second);
    expect(copyIn(s, second)).toBeDefined();
  });
});

/**
 * The local executor across restarts: jobs whose processes outlived the manager are found
 * again by pid and start time (no double booking), a reused pid is not mistaken for the job,
 * and a stored job that cannot be executed (spawn E2BIG) is that job's exception, also when
 * it is started during the restart itself. Real processes, real SQLite, simulated clock.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { procStartTime } from "../../src/manager/exec/proc.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { SqliteStore } from "../../src/manager/store/sqlite.js";
import { jobspec, simManager, submitNow, tempDir, testJob, type SimManager } from "./helpers.js";

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const BIG = "x".repeat(300 * 1024);

/** Waits (real time) for a job driven by real processes to become inactive. */
async function settle(s: SimManager, id: JobId) {
  // The clock moves too: processes start once the job's alloc is committed (batch window).
  for (let i = 0; i < 500 && s.mgr.job(id).state !== "INACTIVE"; i++) {
    await s.clock.advance(1);
    await new Promise((r) => setTimeout(r, 10));
  }
  return s.mgr.wait(id);
}

/**
 * Stores a copy of `template`'s eventlog and exec eventlog (the main one cut after
 * `cutAfter`) as a new job with `jobspec`, as if an earlier manager had written it, with
 * `edit` applied to each line. `oldFormat`: the exec eventlog's entries go into the main
 * eventlog before `start`, as stores written before the exec eventlog hold them.
 */
function storeCopy(
  dir: string,
  template: JobId,
  id: JobId,
  opts: { jobspec?: unknown; cutAfter?: string; edit?: (e: Record<string, unknown>) => Record<string, unknown>; oldFormat?: boolean },
) {
  const raw = new SqliteStore(join(dir, "jobtap.db"));
  const t = raw.load(template)!;
  const parse = (text: string) => text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Record<string, unknown>);
  const edit = opts.edit ?? ((e) => e);
  let lines = parse(t.eventlog);
  let exec = parse(t.exec ?? "").map(edit);
  if (opts.cutAfter) lines = lines.slice(0, lines.findIndex((e) => e.name === opts.cutAfter) + 1);
  lines = lines.map(edit);
  if (opts.oldFormat) {
    const start = lines.findIndex((e) => e.name === "start");
    lines.splice(start, 0, ...exec);
    exec = [];
  }
  const text = (ls: Array<Record<string, unknown>>) => ls.map((l) => `${JSON.stringify(l)}\n`).join("");
  raw.commit({
    newJobs: [{ id, jobspec: opts.jobspec === undefined ? t.jobspec : JSON.stringify(opts.jobspec) }],
    appends: new Map([[id, text(lines)]]),
    execAppends: exec.length > 0 ? new Map([[id, text(exec)]]) : new Map(),
    purged: [],
  });
  raw.close();
}

async function sim(dir: string, clock: SimulatedClock, cores = 1) {
  const s = await simManager({ statedir: dir, store: "sqlite", clock, resources: { cores } });
  cleanups.push(() => s.mgr.close());
  return s;
}

describe("local executor: restart", () => {
  it.each([
    ["its exec eventlog", false],
    ["an old store's main eventlog", true],
  ])("reattaches to a task still running (saved in %s): its core stays booked until it ends", async (_, oldFormat) => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const clock = new SimulatedClock();
    const a = await sim(dir, clock);
    const done = await submitNow(a, jobspec(["true"]));
    await settle(a, done);
    await a.mgr.close();

    const sleeper = spawn("sleep", ["30"], { stdio: "ignore" });
    cleanups.push(() => void sleeper.kill("SIGKILL"));
    const starttime = procStartTime(sleeper.pid!)!;
    const running = (done + 1n) as JobId;
    storeCopy(dir, done, running, {
      cutAfter: "start",
      edit: (e) => (e.name === "exec-state" ? { ...e, context: { tasks: [{ rank: 0, pid: sleeper.pid, starttime }] } } : e),
      oldFormat,
    });

    const b = await sim(dir, clock);
    expect(b.mgr.job(running).state).toBe("RUN");
    const next = await submitNow(b, jobspec(["true"]));
    await clock.advance(2000);
    expect(b.mgr.job(next).state).toBe("SCHED"); // the reattached task holds the only core
    expect(b.mgr.job(running).state).toBe("RUN");

    const exited = new Promise((r) => sleeper.once("exit", r));
    sleeper.kill("SIGTERM");
    await exited; // reaped by this process: its status is not the manager's to see
    await clock.advance(500);
    const r = await b.mgr.wait(running);
    expect(r.result).toBe("FAILED");
    expect(r.errstr).toMatch(new RegExp(`type=exec job process ${sleeper.pid} \\(task 0\\) ended while the job manager was not its parent: exit status unknown`));
    expect((await settle(b, next)).result).toBe("COMPLETED");
  });

  it("a reused pid (same pid, other start time) is not the job: it ends at restart, the process is left alone", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const clock = new SimulatedClock();
    const a = await sim(dir, clock);
    const done = await submitNow(a, jobspec(["true"]));
    await settle(a, done);
    await a.mgr.close();
    const lost = (done + 1n) as JobId;
    const mine = procStartTime(process.pid)!;
    storeCopy(dir, done, lost, {
      cutAfter: "start",
      edit: (e) => (e.name === "exec-state" ? { ...e, context: { tasks: [{ rank: 0, pid: process.pid, starttime: mine + 1 }] } } : e),
    });
    const b = await sim(dir, clock);
    const r = await b.mgr.wait(lost);
    expect(r.errstr).toMatch(/exit status unknown/);
    expect(b.mgr.eventlog(lost).map((e) => e.name)).not.toContain("finish");
    // Its core is free again.
    expect((await settle(b, await submitNow(b, jobspec(["true"])))).result).toBe("COMPLETED");
  });

  it("a running job with no saved pids (stopped within the batch window, or an older version) ends at restart", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const clock = new SimulatedClock();
    const a = await sim(dir, clock);
    const done = await submitNow(a, jobspec(["true"]));
    await settle(a, done);
    await a.mgr.close();
    const lost = (done + 1n) as JobId;
    storeCopy(dir, done, lost, { cutAfter: "start", edit: (e) => (e.name === "exec-state" ? { ...e, name: "older-version" } : e) });
    const b = await sim(dir, clock);
    const r = await b.mgr.wait(lost);
    expect(r.errstr).toMatch(/type=exec job processes cannot be found after a restart \(no process ids were saved for it/);
    expect((await settle(b, await submitNow(b, jobspec(["true"])))).result).toBe("COMPLETED");
  });

  it("spawn E2BIG is that job's exception, even for a stored job started during the restart", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const clock = new SimulatedClock();
    const a = await sim(dir, clock);
    // A 1-second test job holds the core, so this local job waits in SCHED when we stop.
    await submitNow(a, testJob("1s"));
    const waiting = await submitNow(a, jobspec(["true"]));
    expect(a.mgr.job(waiting).state).toBe("SCHED");
    await a.mgr.close();
    // The same job with a 300 KB environment variable, as a store written before any
    // submit-time limit would hold it.
    const big = (waiting + 1n) as JobId;
    storeCopy(dir, waiting, big, { jobspec: jobspec(["true"], { environment: { PATH: process.env.PATH ?? "/bin", X: BIG } }) });

    await clock.advance(5000); // the test job's run is over when the manager comes back
    const b = await sim(dir, clock, 3); // must not throw: both stored jobs start at once
    await clock.advance(1);
    expect((await settle(b, waiting)).result).toBe("COMPLETED");
    const r = await settle(b, big);
    expect(r.result).toBe("FAILED");
    expect(r.errstr).toMatch(/type=exec task 0: cannot execute "true": spawn E2BIG: the arguments and environment are too large to execute: environment variable X is 300\.0 KiB \(at most 128 KiB per string\)$/);
    expect(r.errstr).not.toMatch(/xxx/); // never the value: environments hold secrets
    // The manager goes on.
    expect((await settle(b, await submitNow(b, jobspec(["sh", "-c", `exit 0 # ${"y".repeat(1000)}`])))).result).toBe("COMPLETED");
  });
});

describe("restart never stops on one stored job", () => {
  it("a running job whose stored R cannot be read is moved to lost+found; the others come back", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const clock = new SimulatedClock();
    const a = await sim(dir, clock, 2);
    const good = await submitNow(a, testJob("1h"));
    expect(a.mgr.job(good).state).toBe("RUN");
    await a.mgr.close();
    const bad = (good + 1n) as JobId;
    storeCopy(dir, good, bad, {
      edit: (e) => (e.name === "alloc" ? { ...e, context: { R: { version: 1, execution: { R_lite: 5 } } } } : e),
    });
    const b = await sim(dir, clock, 2);
    expect(b.mgr.job(good).state).toBe("RUN");
    expect(() => b.mgr.job(bad)).toThrow(/unknown job/);
    expect(b.mgr.lostAndFound()).toEqual([{ id: bad, reason: expect.stringMatching(/^cannot be restored: .*iterable/) }]);
    expect(b.logs.some((l) => l.includes("moved to lost+found"))).toBe(true);
  });
});

/**
 * An isolated plugin in an endless loop (issue 32): the jobs waiting on it lose one handler
 * deadline, once. After the first missed deadline the plugin gets no calls (they fail fast,
 * as a failing handler of their topic) until its restarted worker has answered its replay;
 * a worker that loops again in the replay costs no job a second deadline, and counts as a
 * death for the restart policy. After the restart the plugin is on probation for its restart
 * window (isolate-probation.ts): its calls get the probation deadline (1 s), and missing it
 * unloads the plugin, so a plugin that keeps looping costs one deadline plus one probation
 * deadline in total.
 */
import { describe, expect, it } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import type { TestHost } from "../../src/testhost.js";
import { complete, isolatedHost, logged, realUntil, startSubmit, testSpec, until } from "./isolate-helpers.js";

const state = (h: TestHost) => h.plugins.list()[0]?.isolated;

/**
 * Submits a job named `name` and drives the simulated clock until it is accepted or
 * refused: 100 ms steps while no isolated call is in flight, 250 ms steps once the plugin
 * has logged its `n`th loop (it will not answer), else real time. Returns the simulated
 * time the submission took.
 */
async function timedSubmit(h: TestHost, name: string, n: number): Promise<{ ms: number; accepted: boolean }> {
  const t0 = h.clock.now();
  let done = false;
  let accepted = false;
  const system = { exec: { test: { run_duration: 0 } }, job: { name } };
  h.manager.submit({ ...testSpec(), attributes: { system } }).then(() => (done = accepted = true), () => (done = true));
  const looping = new RegExp(`looping in job\\.validate \\(${n}\\)`);
  const realEnd = Date.now() + 20_000;
  while (!done && Date.now() < realEnd) {
    if (h.plugins.isolatedInFlight() === 0) await h.advance(100);
    else if (h.log.some((l) => looping.test(l))) await h.advance(250);
    await new Promise((r) => setTimeout(r, 2));
  }
  expect(done).toBe(true);
  return { ms: h.clock.now() - t0, accepted };
}

describe("isolated plugin in an endless loop", () => {
  it("costs one deadline in total: jobs submitted while its restart replays fail fast", async () => {
    const h = await isolatedHost("iso-loop.js", { isolate: { restart: { max: 5, windowMs: 600_000 } } });
    // The looping job stays active (it runs 600 s), so every restart's replay loops on it.
    const accepted = startSubmit(h, "loop", 600);
    await logged(h, /looping in job\.new \(1\)/);
    await realUntil(() => h.plugins.isolatedInFlight() > 0);
    await h.advance(5001);
    const bad = await accepted();
    await logged(h, /job\.new did not settle within 5000 ms; the worker was terminated/);
    // The restarted worker is stuck in its replay of the looping job's job.new.
    await logged(h, /looping in job\.new \(2\)/);
    const t0 = h.clock.now();
    const ok = await startSubmit(h, "ok")();
    // Accepted with no deadline passing: job.new failed fast, as a failing handler does.
    expect(h.clock.now() - t0).toBeLessThan(5000);
    expect(h.log.join("\n")).toMatch(/job\.new: job \S+: isolated worker is gone/);
    await complete(h, ok);
    expect(h.job(ok).annotations).toBeFalsy();
    expect(h.job(bad).state).toBe("RUN");
    // Looping again in the replay missed the probation deadline: unloaded, not restarted
    // again and again while the policy allows.
    await until(h, () => state(h) === "failed", 20_000);
    expect(h.plugins.list()[0]?.reason).toMatch(/missed a deadline again on probation .*last: job\.new did not settle within 1000 ms \(probation/);
    expect(h.log.join("\n")).not.toMatch(/looping in job\.new \(3\)/);
  });

  it("counts a worker that loops again in its replay as a death: past the policy, unloaded", async () => {
    const h = await isolatedHost("iso-loop.js", { isolate: { restart: { max: 1, windowMs: 600_000 } } });
    const accepted = startSubmit(h, "loop", 600);
    await logged(h, /looping in job\.new \(1\)/);
    await realUntil(() => h.plugins.isolatedInFlight() > 0);
    await h.advance(5001);
    await accepted();
    await logged(h, /looping in job\.new \(2\)/);
    await until(h, () => h.plugins.list()[0]?.isolated === "failed", 20_000);
    expect(h.plugins.list()[0]).toEqual(expect.objectContaining({
      isolated: "failed",
      reason: expect.stringMatching(/died 2 times within 600 s \(restart max 1\); last: job\.new did not settle within 1000 ms \(probation/),
    }));
  });

  it("replays to the restarted worker the job that killed it and the jobs that reached job.new during its replay", async () => {
    const h = await isolatedHost("iso-replay-late.js", { isolate: { restart: { max: 5, windowMs: 600_000 } } });
    const slow = await startSubmit(h, "slow", 600)();
    // The clock moves only when the test says so from here on: the replay's wait on "slow"
    // ends at the last advance, once "late" is in.
    const submitted: Record<string, JobId> = {};
    const submit = (name: string) => {
      const system = { exec: { test: { run_duration: 600 } }, job: { name } };
      void h.manager.submit({ ...testSpec(), attributes: { system } }).then((id) => (submitted[name] = id));
    };
    submit("loop-once");
    await logged(h, /looping in job\.new/);
    await realUntil(() => h.plugins.isolatedInFlight() > 0);
    await h.advance(5001);
    // Its job.new was the call that killed the worker: the job is accepted (job.new cannot
    // refuse), so the restarted worker must be told of it.
    await logged(h, /replay waits on slow/);
    expect(state(h)).toBe("restarting");
    // Submitted while the replay waits: its own job.new reaches the dead worker and fails
    // fast; the replay must cover it before the new worker takes calls.
    submit("late");
    await logged(h, /job\.new: job \S+: isolated worker is gone/);
    expect(state(h)).toBe("restarting");
    await h.advance(500);
    await realUntil(() => state(h) === "running" && submitted.late !== undefined);
    const q = (await h.plugins.query("iso-replay-late.js")) as { starts: number; seen: string[] };
    expect(q.starts).toBe(2);
    expect(q.seen).toEqual(["slow", "loop-once", "late"]);
    expect([slow, submitted["loop-once"]!, submitted.late!].map((id) => h.job(id).state)).toEqual(["RUN", "RUN", "RUN"]);
  });

  it("loops on every job: one deadline plus one probation deadline in total, then unloaded", async () => {
    const h = await isolatedHost("iso-loop-validate.js", { isolate: { restart: { max: 5, windowMs: 600_000 } } });
    const delays: number[] = [];
    for (let n = 1; n <= 4 && state(h) !== "failed"; n++) {
      await realUntil(() => state(h) !== "restarting");
      delays.push((await timedSubmit(h, "loop", n)).ms);
    }
    // The first job waits the 5 s deadline, the next one the 1 s probation deadline.
    expect(delays.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(5000 + 1000 + 500);
    expect(h.plugins.list()[0]).toEqual(expect.objectContaining({
      isolated: "failed",
      reason: expect.stringMatching(/missed a deadline again on probation .*last: job\.validate did not settle within 1000 ms \(probation/),
    }));
    expect(h.log.join("\n")).toMatch(/error: plugin iso-loop-validate\.js: unloaded: isolated worker missed a deadline again on probation/);
    // Unloaded: nothing loops any more, and the jobs go on without it.
    const after = await timedSubmit(h, "loop", 3);
    expect(after.accepted).toBe(true);
    expect(after.ms).toBeLessThan(1000);
  });

  it("loops once, then behaves: restarted and kept, its later calls answered on probation", async () => {
    const h = await isolatedHost("iso-loop-validate.js", { isolate: { restart: { max: 5, windowMs: 600_000 } } });
    const first = await timedSubmit(h, "loop-once", 1);
    expect(first.ms).toBeGreaterThanOrEqual(5000);
    await logged(h, /job\.validate did not settle within 5000 ms; the worker was terminated/);
    await realUntil(() => state(h) === "running");
    for (const name of ["loop-once", "plain", "plain"]) {
      const r = await timedSubmit(h, name, 2);
      expect(r.accepted).toBe(true);
      expect(r.ms).toBeLessThan(1000);
    }
    expect(state(h)).toBe("running");
    // A window later it is trusted again: one more loop costs the whole deadline and the
    // plugin is restarted, not unloaded.
    await h.advance(600_000);
    const late = await timedSubmit(h, "loop", 2);
    expect(late.ms).toBeGreaterThanOrEqual(5000);
    await realUntil(() => state(h) === "running");
  });
});

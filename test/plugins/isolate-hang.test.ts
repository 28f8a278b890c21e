/**
 * An isolated plugin in an endless loop (issue 32): the jobs waiting on it lose one handler
 * deadline, once. After the first missed deadline the plugin gets no calls (they fail fast,
 * as a failing handler of their topic) until its restarted worker has answered its replay;
 * a worker that loops again in the replay costs no job a second deadline, and counts as a
 * death for the restart policy.
 */
import { describe, expect, it } from "vitest";
import { complete, isolatedHost, logged, realUntil, startSubmit, until } from "./isolate-helpers.js";

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
      reason: expect.stringMatching(/died 2 times within 600 s \(restart max 1\); last: job\.new did not settle within 5000 ms/),
    }));
  });
});

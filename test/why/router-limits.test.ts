/**
 * condor-router's `job.explain` (issue 36), the lines router.test.ts leaves out: a route at
 * MaxJobs n/n, the router at JOB_ROUTER_MAX_JOBS, a job that fails the source constraint at
 * one clause (WantJobRouter false or another), and a black-hole throttled route with the
 * time its window ends. Real manager, simulated clock; text and figures asserted.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import type { TestHost } from "../builtins/helpers.js";
import { copies, routeRows, routerHost, submitRoutable } from "../router/helpers.js";

let h: TestHost | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});
const routerReasons = async (t: TestHost, id: JobId) => (await t.manager.why(id)).reasons.filter((r) => r.source === "condor-router");

describe("job.explain: condor-router limits", () => {
  it("a route at MaxJobs says n/n; the router at JOB_ROUTER_MAX_JOBS says so before the routes", async () => {
    const routes = { A: { transform: "REQUIREMENTS WantJobRouter\nMaxIdleJobs = -1\nMaxJobs = 2\n" } };
    const t = (h = await routerHost({ routes }));
    await t.submit({ runDuration: 100_000 });
    const ids = await submitRoutable(t, 3);
    await t.advance(10_500);
    expect(copies(t)).toHaveLength(2);
    const rs = await routerReasons(t, ids[2]!);
    expect(rs.map((r) => [r.code, r.text])).toEqual([["route-full", "route A: MaxJobs 2/2"]]);
    expect(rs[0]!.figures).toMatchObject({ route: "A", current: 2, max_jobs: 2, max_idle_jobs: -1 });
    await h.close();

    const t2 = (h = await routerHost({ routes: { B: { transform: "REQUIREMENTS WantJobRouter\nMaxIdleJobs = -1\n" } }, max_jobs: 2 }));
    await t2.submit({ runDuration: 100_000 });
    const more = await submitRoutable(t2, 3);
    await t2.advance(10_500);
    expect(copies(t2)).toHaveLength(2);
    const full = await routerReasons(t2, more[2]!);
    expect(full.map((r) => [r.code, r.text])).toEqual([
      ["router-full", "the router manages 2/2 jobs (JOB_ROUTER_MAX_JOBS)"],
      ["route-accepts", "route B accepts it: routed at the next poll"],
    ]);
    expect(full[0]!.figures).toEqual({ managed: 2, max_jobs: 2 });
  });

  it("not a candidate: WantJobRouter false, or the source constraint's failing clause", async () => {
    const conf = { source_job_constraint: 'WantJobRouter =?= true && Site =?= "east"', routes: { R: { transform: "REQUIREMENTS WantJobRouter\n" } } };
    const t = (h = await routerHost(conf));
    await t.submit({ runDuration: 100_000 });
    const [off] = await submitRoutable(t, 1, { classad: { WantJobRouter: "false", Site: '"east"' } });
    const [west] = await submitRoutable(t, 1, { classad: { Site: '"west"' } });
    const off_ = await routerReasons(t, off!);
    expect(off_.map((r) => r.text)).toEqual(['not a router candidate: the source constraint WantJobRouter =?= true && Site =?= "east" is false (at WantJobRouter =?= true)']);
    expect(off_[0]!.figures).toEqual({ check: "source-constraint", constraint: 'WantJobRouter =?= true && Site =?= "east"', value: "false", clause: "WantJobRouter =?= true" });
    const w = await routerReasons(t, west!);
    expect(w.map((r) => r.text)).toEqual(['not a router candidate: the source constraint WantJobRouter =?= true && Site =?= "east" is false (at Site =?= "east")']);
    expect(w[0]!.figures).toMatchObject({ check: "source-constraint", clause: 'Site =?= "east"' });
  });

  it("a black-hole throttled route says until when", async () => {
    const t = (h = await routerHost({ routes: { Dead: { transform: 'REQUIREMENTS WantJobRouter\nGridResource = "arc site2.edu"\n' } } }));
    await t.submit({ runDuration: 100_000 });
    const ids = await submitRoutable(t, 5);
    await t.advance(600_000); // a window of refusals: the route is throttled to 18 a window
    await t.advance(598_000); // the 18 are used up
    const row = (await routeRows(t))[0]!;
    expect(row).toMatchObject({ recent_routed: 18, accepting: false });
    const rs = await routerReasons(t, ids[0]!);
    expect(rs).toHaveLength(1);
    expect(rs[0]).toMatchObject({ code: "route-throttled", figures: { route: "Dead", recent_routed: 18 } });
    const until = rs[0]!.figures.until as number;
    // The window opened by the poll at 600 s (598 s ago; whole seconds) ends 600 s after it.
    expect(until).toBe(Math.floor(t.clock.now() / 1000 - 598) + 600);
    expect(rs[0]!.text).toMatch(/^route Dead: throttled \(18 routed this window at 0\.0300 jobs\/sec\) until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}$/);
  });
});

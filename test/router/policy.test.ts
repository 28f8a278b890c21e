import { afterEach, describe, expect, it } from "vitest";
import type { TestHost } from "../builtins/helpers.js";
import { attr, copies, routeRows, routerHost, submitRoutable, until } from "./helpers.js";

let h: TestHost | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("condor-router: black-hole throttling", () => {
  it("a destination that refuses every copy is throttled per 600 s window, not retried in a busy loop", async () => {
    const t = (h = await routerHost({ routes: { Dead: { transform: 'REQUIREMENTS WantJobRouter\nGridResource = "arc site2.edu"\n' } } }));
    await t.submit({ runDuration: 100_000 });
    await submitRoutable(t, 5);
    const attempts = () => t.log.filter((l) => l.includes('GridResource "arc site2.edu"')).length;
    await t.advance(599_000);
    // No throttle yet: every poll with the jobs queued (10 s ... 590 s: 59 of them) tried all 5.
    expect(attempts()).toBe(5 * 59);
    expect((await routeRows(t))[0]).toMatchObject({ throttle: "none", recent_failed: 295 });
    const before = attempts();
    await t.advance(1_000); // the poll at 600 s closes the window, then routes in the next one
    // 295 failures in 600 s > 0.03/s: throttle = 600 * 0.03 / (295 / (295 + 0 + 0)) = 18 jobs per window.
    expect((await routeRows(t))[0]!.throttle).toBe("0.0300 jobs/sec");
    await t.advance(598_000);
    expect(attempts() - before).toBe(18);
    expect((await routeRows(t))[0]).toMatchObject({ recent_routed: 18, accepting: false });
  });

  it("JobFailureTest marks finished copies as failures; successes keep the route open", async () => {
    const routes = { R: { transform: "REQUIREMENTS WantJobRouter\nMaxIdleJobs = -1\nJobFailureTest = ExitCode =!= 0\n" } };
    const t = (h = await routerHost({ routes }, 4));
    for (let i = 0; i < 4; i++) await t.submit({ runDuration: 20 });
    const ids = [...(await submitRoutable(t, 3, { runDuration: 1, waitStatus: 256 })), ...(await submitRoutable(t, 2, { runDuration: 1 }))];
    await t.advance(10_500);
    expect(copies(t)).toHaveLength(5);
    expect((await routeRows(t))[0]).toMatchObject({ current: 5 });
    await until(t, () => copies(t).every((c) => t.job(c.id).state === "INACTIVE") && ids.every((id) => t.job(id).state === "INACTIVE"));
    expect((await routeRows(t))[0]).toMatchObject({ current: 0, recent_failed: 3, recent_succeeded: 2 });
  });
});

describe("condor-router: the global cap", () => {
  it("JOB_ROUTER_MAX_JOBS (max_jobs) caps managed jobs over all routes", async () => {
    const routes = {
      A: { transform: "REQUIREMENTS WantJobRouter\nMaxIdleJobs = 2\n" },
      B: { transform: "REQUIREMENTS WantJobRouter\nMaxIdleJobs = -1\n" },
    };
    const t = (h = await routerHost({ routes, max_jobs: 3 }));
    await t.submit({ runDuration: 100_000 });
    await submitRoutable(t, 6);
    await t.advance(30_500);
    expect(copies(t).map((c) => attr(t, c.id, "RouteName"))).toEqual(["A", "A", "B"]);
  });
});

describe("condor-router: EditJobInPlace and bad routes", () => {
  it("EditJobInPlace edits the original, makes no copy, and the job stays a candidate (guarded by the route)", async () => {
    const route = 'EditJobInPlace = true\nREQUIREMENTS WantJobRouter && Edited =!= true\nSET Edited = true\nSET Site = "here"\n';
    const t = (h = await routerHost({ routes: { Edit: { transform: route } } }));
    await t.submit({ runDuration: 100 });
    const [job] = await submitRoutable(t, 1);
    await t.advance(10_500);
    expect(attr(t, job!, "Edited")).toBe(true);
    expect(attr(t, job!, "Site")).toBe("here");
    expect(attr(t, job!, "Managed")).toBeUndefined();
    expect(copies(t)).toEqual([]);
    await t.advance(20_000);
    expect(t.events(job!).filter((e) => e === "jobspec-update")).toHaveLength(1);
    expect((await routeRows(t))[0]).toMatchObject({ recent_succeeded: 1, current: 0 });
  });

  it("a transform that fails on a job leaves it unrouted with a log line naming the route", async () => {
    const t = (h = await routerHost({ routes: { Loop: { transform: 'REQUIREMENTS WantJobRouter\nA = $(B)\nB = $(A)\nSET X = "$(A)"\n' } } }));
    await t.submit({ runDuration: 100 });
    const [job] = await submitRoutable(t, 1);
    await t.advance(10_500);
    expect(copies(t)).toEqual([]);
    expect(t.job(job!).state).toBe("SCHED");
    expect(attr(t, job!, "Managed")).toBe("Schedd");
    expect(t.log.some((l) => l.includes("route Loop") && l.includes("error:"))).toBe(true);
  });

  it("a route that does not parse is ignored with a warning naming it and its line; the others load", async () => {
    const routes = {
      Bad: { transform: "REQUIREMENTS WantJobRouter\nFROBNICATE X\n" },
      Good: { transform: "REQUIREMENTS WantJobRouter\n" },
    };
    const t = (h = await routerHost({ routes }));
    const q = (await t.plugins.query("condor-router")) as { routes: Array<{ name: string }>; warnings: string[] };
    expect(q.routes.map((r) => r.name)).toEqual(["Good"]);
    expect(q.warnings).toEqual([expect.stringMatching(/^route Bad ignored: conf\.routes\.Bad\.transform:2: .*FROBNICATE/)]);
    await t.submit({ runDuration: 100 });
    await submitRoutable(t, 1);
    await t.advance(10_500);
    expect(copies(t).map((c) => attr(t, c.id, "RouteName"))).toEqual(["Good"]);
  });
});

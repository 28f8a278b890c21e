import { afterEach, describe, expect, it } from "vitest";
import { waitStatus } from "../../src/plugin.js";
import { formatJobId } from "../../src/manager/base/ids.js";
import type { TestHost } from "../builtins/helpers.js";
import { attr, copies, copiesOf, routeRows, routerHost, submitRoutable, until } from "./helpers.js";

let h: TestHost | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const SPILL = {
  source_job_constraint: "WantJobRouter =?= true",
  routes: { Spill: { transform: "MaxIdleJobs = 2\nSET Spilled = true\n" } },
};

describe("condor-router: the routed copy", () => {
  it("spills waiting jobs up to MaxIdleJobs; each original mirrors its copy through alloc, start and finish", async () => {
    const t = (h = await routerHost(SPILL));
    const ids = await submitRoutable(t, 4, { waitStatus: waitStatus.exited(3) });
    await t.advance(10_500); // the second poll (the first ran at load, before any job)
    expect(t.job(ids[0]!).state).toBe("RUN"); // ran locally at once
    const routed = copies(t);
    expect(routed.map((c) => attr(t, c.id, "RoutedFromJobId"))).toEqual([formatJobId(ids[1]!), formatJobId(ids[2]!)]);
    expect(copiesOf(t, ids[3]!)).toEqual([]); // MaxIdleJobs = 2: the route took no more
    const copy = routed[0]!.id;
    expect(attr(t, copy, "RoutedBy")).toBe("jobrouter");
    expect(attr(t, copy, "RouteName")).toBe("Spill");
    expect(attr(t, copy, "Spilled")).toBe(true);
    expect(attr(t, copy, "Managed")).toBeUndefined();
    // Output goes to the copy's own default place, not into the original's directory.
    expect(attr(t, copy, "Out")).toMatch(new RegExp(`${formatJobId(copy)}/stdout$`));
    expect(attr(t, ids[1]!, "Managed")).toBe("External");
    expect(attr(t, ids[1]!, "ManagedManager")).toBe("jobrouter");
    expect(attr(t, ids[1]!, "RoutedToJobId")).toBe(formatJobId(copy));
    expect(attr(t, ids[1]!, "JobStatus")).toBe(1n); // idle while its copy waits
    await until(t, () => ids.every((id) => t.job(id).state === "INACTIVE"));
    const ev = t.events(ids[1]!);
    expect(ev.slice(ev.indexOf("alloc"))).toEqual(["alloc", "start", "finish", "release", "free", "clean"]);
    expect(t.eventlog(ids[1]!).find((e) => e.name === "finish")?.context?.status).toBe(waitStatus.exited(3));
    expect(attr(t, ids[1]!, "ExitCode")).toBe(3n);
    expect(attr(t, ids[1]!, "JobStatus")).toBe(4n);
    // The original started when its copy did, not before.
    const copyStart = t.eventlog(copy).find((e) => e.name === "start")!.timestamp;
    expect(t.eventlog(ids[1]!).find((e) => e.name === "start")!.timestamp).toBe(copyStart);
    expect(t.events(ids[3]!)).not.toContain("jobspec-update"); // ran locally, never claimed
  });

  it("routes in route order, or round robin when asked", async () => {
    const routes = {
      A: { transform: "MaxIdleJobs = -1\nREQUIREMENTS WantJobRouter\n" },
      B: { transform: "MaxIdleJobs = -1\nREQUIREMENTS WantJobRouter\n" },
    };
    const t = (h = await routerHost({ routes }));
    await t.submit({ runDuration: 1000 });
    await submitRoutable(t, 4);
    await t.advance(10_500);
    expect(copies(t).map((c) => attr(t, c.id, "RouteName"))).toEqual(["A", "A", "A", "A"]);
    await t.close();
    const r = (h = await routerHost({ routes, round_robin_selection: true }));
    await r.submit({ runDuration: 1000 });
    await submitRoutable(r, 4);
    await r.advance(10_500);
    expect(copies(r).map((c) => attr(r, c.id, "RouteName"))).toEqual(["A", "B", "A", "B"]);
  });

  it("tests REQUIREMENTS on the original and skips jobs no route matches", async () => {
    const routes = {
      Big: { transform: "REQUIREMENTS RequestMemory > 1000 && WantJobRouter\nMaxIdleJobs = -1\n" },
      Any: { transform: "REQUIREMENTS WantJobRouter =?= true\nMaxIdleJobs = -1\n" },
    };
    const t = (h = await routerHost({ routes }));
    await t.submit({ runDuration: 1000 });
    const [a] = await submitRoutable(t, 1, { classad: { RequestMemoryMiB: "1" } });
    const plain = await t.submit({ runDuration: 1 });
    await t.advance(10_500);
    expect(copiesOf(t, a!).map((c) => attr(t, c.id, "RouteName"))).toEqual(["Any"]);
    expect(copiesOf(t, plain)).toEqual([]);
  });

  it("MaxJobs caps the managed jobs of a route; more are routed as copies finish", async () => {
    const t = (h = await routerHost({ routes: { R: { transform: "REQUIREMENTS WantJobRouter\nMaxJobs = 2\nMaxIdleJobs = -1\n" } } }));
    await t.submit({ runDuration: 10_000 });
    const ids = await submitRoutable(t, 5, { runDuration: 1 });
    await t.advance(10_500);
    expect(copies(t)).toHaveLength(2);
    expect((await routeRows(t))[0]).toMatchObject({ current: 2, accepting: false });
    await until(t, () => copies(t).length === 4, 30_000);
    expect(copies(t).filter((c) => c.state !== "INACTIVE").length).toBeLessThanOrEqual(2);
    await until(t, () => ids.every((id) => t.job(id).state === "INACTIVE"));
  });

  it("a copy removed before it started sends the original back to pending and counts a failure", async () => {
    const t = (h = await routerHost({ routes: { R: { transform: "REQUIREMENTS WantJobRouter\n" } } }));
    const blocker = await t.submit({ runDuration: 100 });
    const [orig] = await submitRoutable(t, 1);
    await t.advance(10_500);
    const [copy] = copiesOf(t, orig!);
    t.manager.cancel(copy!.id);
    await t.advance(100);
    expect(t.job(orig!).state).toBe("SCHED");
    expect(attr(t, orig!, "Managed")).toBe("Schedd");
    expect(attr(t, orig!, "JobStatus")).toBe(1n);
    expect((await routeRows(t))[0]).toMatchObject({ recent_failed: 1, current: 0 });
    // Pending again: routed again at the next poll, or run here once the core is free.
    await until(t, () => t.job(orig!).state === "INACTIVE");
    expect(t.job(blocker).state).toBe("INACTIVE");
    expect(t.manager.jobs().find((j) => j.id === orig)?.result).toBe("COMPLETED");
  });

  it("a copy removed after it started ends the running original with a router exception (a failure)", async () => {
    const t = (h = await routerHost({ routes: { R: { transform: "REQUIREMENTS WantJobRouter\n" } } }));
    await t.submit({ runDuration: 20 });
    const [orig] = await submitRoutable(t, 1, { runDuration: 1000 });
    await t.advance(10_500);
    const [copy] = copiesOf(t, orig!);
    await until(t, () => t.job(copy!.id).state === "RUN");
    expect(t.job(orig!).state).toBe("RUN");
    expect(attr(t, orig!, "JobStatus")).toBe(2n);
    t.manager.cancel(copy!.id);
    await until(t, () => t.job(orig!).state === "INACTIVE");
    const exc = t.eventlog(orig!).filter((e) => e.name === "exception").map((e) => `${e.context?.type}: ${e.context?.note}`);
    expect(exc).toEqual([`router: routed copy ${formatJobId(copy!.id)} was removed after it started`]);
    expect((await routeRows(t))[0]).toMatchObject({ recent_failed: 1, current: 0 });
  });

  it("cancelling the original removes its copy; neither success nor failure", async () => {
    const t = (h = await routerHost({ routes: { R: { transform: "REQUIREMENTS WantJobRouter\n" } } }));
    await t.submit({ runDuration: 1000 });
    const [orig] = await submitRoutable(t, 1);
    await t.advance(10_500);
    const [copy] = copiesOf(t, orig!);
    t.manager.cancel(orig!);
    await t.advance(100);
    expect(t.job(copy!.id).state).toBe("INACTIVE");
    expect(t.eventlog(copy!.id).find((e) => e.name === "exception")?.context).toMatchObject({ type: "cancel", note: "JobRouter aborted job: original removed" });
    expect((await routeRows(t))[0]).toMatchObject({ recent_failed: 0, recent_succeeded: 0, current: 0 });
  });

  it("cancelling a running original removes its running copy; the original finishes with the copy", async () => {
    const t = (h = await routerHost({ routes: { R: { transform: "REQUIREMENTS WantJobRouter\n" } } }));
    await t.submit({ runDuration: 20 });
    const [orig] = await submitRoutable(t, 1, { runDuration: 1000 });
    await t.advance(10_500);
    const [copy] = copiesOf(t, orig!);
    await until(t, () => t.job(orig!).state === "RUN");
    t.manager.cancel(orig!);
    await until(t, () => t.job(orig!).state === "INACTIVE" && t.job(copy!.id).state === "INACTIVE");
    expect(t.events(copy!.id)).toContain("exception");
    expect(t.events(orig!).slice(-5)).toEqual(["exception", "finish", "release", "free", "clean"]);
    expect((await routeRows(t))[0]).toMatchObject({ recent_failed: 0, recent_succeeded: 0, current: 0 });
  });

  it("holding the original removes its copy and lets the job go, still held", async () => {
    const t = (h = await routerHost({ routes: { R: { transform: "REQUIREMENTS WantJobRouter\n" } } }));
    await t.submit({ runDuration: 1000 });
    const [orig] = await submitRoutable(t, 1);
    await t.advance(10_500);
    const [copy] = copiesOf(t, orig!);
    t.manager.setUrgency(orig!, 0);
    await t.advance(100);
    expect(t.job(copy!.id).state).toBe("INACTIVE");
    expect(attr(t, orig!, "JobStatus")).toBe(5n);
    expect(attr(t, orig!, "Managed")).toBe("Schedd");
    expect((await routeRows(t))[0]).toMatchObject({ recent_failed: 0, current: 0 });
    await t.advance(20_000);
    expect(copiesOf(t, orig!)).toHaveLength(1); // held: not a candidate
  });
});

/** condor-router details HTCondor's router has (issue 39): the copy's universe, JobFailureTest's TARGET, edits in place. */
import { afterEach, describe, expect, it } from "vitest";
import type { TestHost } from "../builtins/helpers.js";
import { attr, copies, copiesOf, routeRows, routerHost, submitRoutable } from "./helpers.js";

let h: TestHost | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("condor-router: the routed copy's JobUniverse", () => {
  it("follows the route's UNIVERSE (numbers as HTCondor's), grid (9) by default; the original stays vanilla", async () => {
    const routes = {
      Van: { transform: "UNIVERSE vanilla\nREQUIREMENTS Site == 1\n" },
      Grid: { transform: "REQUIREMENTS Site == 2\n" },
    };
    const t = (h = await routerHost({ routes }));
    await t.submit({ runDuration: 100_000 });
    const [a] = await submitRoutable(t, 1, { classad: { Site: "1" } });
    const [b] = await submitRoutable(t, 1, { classad: { Site: "2" } });
    await t.advance(10_500);
    expect(attr(t, copiesOf(t, a!)[0]!.id, "JobUniverse")).toBe(5n);
    expect(attr(t, copiesOf(t, b!)[0]!.id, "JobUniverse")).toBe(9n);
    expect(attr(t, copiesOf(t, b!)[0]!.id, "Remote_JobUniverse")).toBe(5n);
    expect(attr(t, b!, "JobUniverse")).toBe(5n);
  });
});

describe("condor-router: JobFailureTest", () => {
  it("is evaluated with the copy as TARGET: the manual's target.RemoteWallClockTime < 1800", async () => {
    const routes = { R: { transform: "REQUIREMENTS WantJobRouter\nMaxIdleJobs = -1\nJobFailureTest = target.RemoteWallClockTime < 1800\n" } };
    const t = (h = await routerHost({ routes }, 4));
    for (let i = 0; i < 4; i++) await t.submit({ runDuration: 20 });
    const ids = [...(await submitRoutable(t, 2, { runDuration: 60 })), ...(await submitRoutable(t, 1, { runDuration: 2000 }))];
    await t.advance(10_500);
    expect(copies(t)).toHaveLength(3);
    // The recent counters are per 600 s window: read each within its window.
    await t.advance(100_000);
    expect(ids.slice(0, 2).map((id) => t.job(id).state)).toEqual(["INACTIVE", "INACTIVE"]);
    expect((await routeRows(t))[0]).toMatchObject({ recent_failed: 2, recent_succeeded: 0 });
    await t.advance(2_000_000);
    expect(t.job(ids[2]!).state).toBe("INACTIVE");
    expect((await routeRows(t))[0]).toMatchObject({ recent_failed: 0, recent_succeeded: 1 });
  });
});

describe("condor-router: EditJobInPlace", () => {
  it("DELETE and RENAME reach the original, as SET does", async () => {
    const route = "EditJobInPlace = true\nREQUIREMENTS WantJobRouter && Edited =!= true\nSET Edited = true\nDELETE Scratch\nRENAME OldName NewName\n";
    const t = (h = await routerHost({ routes: { Edit: { transform: route } } }));
    await t.submit({ runDuration: 100 });
    const [job] = await submitRoutable(t, 1, { classad: { Scratch: '"/tmp/x"', OldName: "42" } });
    await t.advance(10_500);
    expect(attr(t, job!, "Edited")).toBe(true);
    expect(attr(t, job!, "Scratch")).toBeUndefined();
    expect(attr(t, job!, "OldName")).toBeUndefined();
    expect(attr(t, job!, "NewName")).toBe(42n);
    expect(copies(t)).toEqual([]);
  });
});

describe("condor-router: a held copy", () => {
  const routes = { R: { transform: "REQUIREMENTS WantJobRouter\n" } };

  /** One original routed to a copy that waits (the only core is busy), then the copy held. */
  async function heldCopy(conf: Record<string, unknown>) {
    const t = (h = await routerHost(conf));
    await t.submit({ runDuration: 100_000 });
    const [orig] = await submitRoutable(t, 1);
    await t.advance(10_500);
    const [copy] = copiesOf(t, orig!);
    t.manager.setUrgency(copy!.id, 0);
    await t.advance(100);
    return { t, orig: orig!, copy: copy!.id };
  }

  it("is mirrored into the original: held with the copy's HoldReason, still managed; released with it", async () => {
    const { t, orig, copy } = await heldCopy({ routes });
    expect(attr(t, orig, "JobStatus")).toBe(5n);
    expect(attr(t, orig, "HoldReason")).toBe(attr(t, copy, "HoldReason"));
    expect(attr(t, orig, "HoldReasonCode")).toBe(1n);
    expect(attr(t, orig, "HoldCopiedFromTargetJob")).toBe(true);
    expect(attr(t, orig, "Managed")).toBe("External");
    expect(t.job(copy).state).toBe("SCHED");
    t.manager.setUrgency(copy, 16);
    await t.advance(100);
    expect(attr(t, orig, "JobStatus")).toBe(1n);
    expect(attr(t, orig, "HoldCopiedFromTargetJob")).toBe(false);
    expect(attr(t, orig, "Managed")).toBe("External");
  });

  it("removed while held: JOB_ROUTER_RELEASE_ON_HOLD (default true) releases the original, which is routed again", async () => {
    const { t, orig, copy } = await heldCopy({ routes });
    t.manager.cancel(copy);
    await t.advance(100);
    expect(attr(t, orig, "JobStatus")).toBe(1n);
    expect(attr(t, orig, "Managed")).toBe("Schedd");
    await t.advance(10_000);
    expect(copiesOf(t, orig)).toHaveLength(2);
  });

  it("removed while held with release_on_hold = false: the original stays held, let go by the router", async () => {
    const { t, orig, copy } = await heldCopy({ routes, release_on_hold: false });
    t.manager.cancel(copy);
    await t.advance(10_100);
    expect(attr(t, orig, "JobStatus")).toBe(5n);
    expect(attr(t, orig, "Managed")).toBe("Schedd");
    expect(copiesOf(t, orig)).toHaveLength(1);
  });
});

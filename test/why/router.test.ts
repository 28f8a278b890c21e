/**
 * condor-router's `job.explain` (issue 36): whether an idle job is a candidate (the source
 * constraint), why each route declines it (REQUIREMENTS with the clause, MaxIdleJobs n/n),
 * and for a routed job the copy's id and status. Real manager, simulated clock.
 */
import { afterEach, describe, expect, it } from "vitest";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import type { TestHost } from "../builtins/helpers.js";
import { copiesOf, routerHost, submitRoutable, until } from "../router/helpers.js";
import { waitStatus } from "../../src/plugin.js";

let h: TestHost | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});
const routerReasons = async (t: TestHost, id: JobId) => (await t.manager.why(id)).reasons.filter((r) => r.source === "condor-router");

describe("job.explain: condor-router", () => {
  it("names the source constraint a job fails, the route that is full, and a routed job's copy", async () => {
    const conf = { source_job_constraint: "WantJobRouter =?= true", routes: { Spill: { transform: "MaxIdleJobs = 2\n" } } };
    const t = (h = await routerHost(conf));
    const ids = await submitRoutable(t, 4, { runDuration: 1000 });
    const plain = await t.submit({ runDuration: 1 });
    await t.advance(10_500); // the second poll
    const [copy] = copiesOf(t, ids[1]!);
    const routed = await routerReasons(t, ids[1]!);
    expect(routed.map((r) => r.text)).toEqual([`routed by route Spill as job ${formatJobId(copy!.id)}, which is Idle (submitted)`]);
    expect(routed[0]).toMatchObject({ code: "routed", figures: { route: "Spill", copy: formatJobId(copy!.id), copy_status: "Idle" } });
    const full = await routerReasons(t, ids[3]!);
    expect(full.map((r) => [r.code, r.text])).toEqual([["route-idle-full", "route Spill: MaxIdleJobs 2/2"]]);
    expect(full[0]!.figures).toMatchObject({ route: "Spill", idle: 2, max_idle_jobs: 2, current: 2 });
    const not = await routerReasons(t, plain);
    expect(not.map((r) => r.text)).toEqual(["not a router candidate: the source constraint WantJobRouter =?= true is false"]);
    expect(not[0]!.figures).toMatchObject({ check: "source-constraint", value: "false" });
    expect((await routerReasons(t, copy!.id)).map((r) => r.text)).toEqual([`routed copy of job ${formatJobId(ids[1]!)} on route Spill`]);
  });

  it("names the first REQUIREMENTS clause a route refuses, false or undefined", async () => {
    const routes = {
      Big: { transform: "REQUIREMENTS WantJobRouter && RequestMemory > 1000\nMaxIdleJobs = -1\n" },
      Far: { transform: "REQUIREMENTS WantJobRouter && TargetSite == \"far\"\nMaxIdleJobs = -1\n" },
    };
    const t = (h = await routerHost({ routes }));
    await t.submit({ runDuration: 1000 });
    const [a] = await submitRoutable(t, 1, { classad: { RequestMemoryMiB: "1" } });
    await t.advance(10_500);
    const rs = await routerReasons(t, a!);
    expect(rs.map((r) => r.text)).toEqual([
      "route Big: REQUIREMENTS is false at RequestMemory > 1000",
      'route Far: REQUIREMENTS is undefined at TargetSite == "far"',
    ]);
    expect(rs[0]).toMatchObject({ code: "route-requirements", figures: { route: "Big", value: "false", clause: "RequestMemory > 1000" } });
  });
});

describe("job.explain: condor-router, ended", () => {
  it("an ended original names its copy's fate: completed with its exit code", async () => {
    const conf = { source_job_constraint: "WantJobRouter =?= true", routes: { Spill: { transform: "MaxIdleJobs = 2\n" } } };
    const t = (h = await routerHost(conf));
    const ids = await submitRoutable(t, 2, { runDuration: 30, waitStatus: waitStatus.exited(3) });
    await until(t, () => ids.every((id) => t.job(id).state === "INACTIVE"));
    const [copy] = copiesOf(t, ids[1]!);
    const ex = await t.manager.why(ids[1]!);
    const rs = ex.reasons.filter((r) => r.source === "condor-router");
    expect(rs.map((r) => [r.layer, r.code, r.text])).toEqual([
      ["end", "routed-fate", `it mirrored its routed copy ${formatJobId(copy!.id)} (route Spill), which ended Completed, exit code 3`],
    ]);
    expect(rs[0]!.figures).toEqual({ copy: formatJobId(copy!.id), copy_status: "Completed", route: "Spill", exit_code: 3, note: null });
  });
});

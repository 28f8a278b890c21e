/**
 * `job.explain` of .limit-duration and .limit-job-size (issue 36): the limit that applies to
 * the job (general or its queue's) beside the job's own figure; a limit tightened after the
 * job was accepted says so (the check runs at submit only, as Flux's).
 */
import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../closing.js";
import { host, type TestHost } from "../builtins/helpers.js";
import type { JobId } from "../../src/manager/base/ids.js";

let h: TestHost | undefined;
closeAfterEach(() => h);
const limitReasons = async (t: TestHost, id: JobId) =>
  (await t.manager.why(id)).reasons.filter((r) => r.source === ".limit-duration" || r.source === ".limit-job-size");

const config = {
  policy: { limits: { duration: "2h", "job-size": { max: { ncores: 2 } } } },
  queues: { debug: { policy: { limits: { duration: "1h", "job-size": { min: { ncores: 1 } } } } }, batch: {} },
};

describe("job.explain: limits", () => {
  it("names the queue's limit and the general one beside the job's figures", async () => {
    h = await host(config, { resources: { cores: 2 } });
    await h.submit({ runDuration: 3600, cores: 2, system: { queue: "batch", duration: 7200 } });
    const id = await h.submit({ cores: 2, system: { queue: "debug", duration: 1800 } });
    const rs = await limitReasons(h, id);
    expect(rs.map((r) => r.text)).toEqual([
      "ncores 2 is within the policy maximum of 2 for queue debug",
      "ncores 2 is within the policy minimum of 1 for queue debug",
      "duration 30m is within the policy limit of 1h for queue debug",
    ]);
    expect(rs[2]).toMatchObject({ layer: "plugin", code: "duration-limit", figures: { limit: 3600, duration: 1800, within: true, queue: "debug" } });
    expect(rs[0]!.figures).toEqual({ key: "ncores", bound: "max", limit: 2, requested: 2, within: true, queue: "debug" });
    expect(rs[1]!.figures).toMatchObject({ bound: "min", limit: 1, requested: 2 });
  });

  it("a limit tightened after the job was accepted says the job is over it and stays", async () => {
    h = await host({ policy: config.policy }, { resources: { cores: 2 } });
    await h.submit({ runDuration: 3600, cores: 2, system: { duration: 7200 } });
    const id = await h.submit({ cores: 2, system: { duration: 5400 } });
    await h.plugins.reloadConfig({ policy: { limits: { duration: "1h", "job-size": { max: { ncores: 1 } } } } });
    const rs = await limitReasons(h, id);
    expect(rs.map((r) => [r.code, r.text])).toEqual([
      ["size-outside-limit", "ncores 2 is over the policy maximum of 1 (set after the job was accepted; it stays)"],
      ["duration-over-limit", "duration 1.5h exceeds the policy limit of 1h (set after the job was accepted; it stays)"],
    ]);
    expect(rs[1]!.figures).toEqual({ limit: 3600, duration: 5400, within: false, queue: null });
  });

  it("says nothing when no limit applies", async () => {
    h = await host({ queues: { batch: { policy: { limits: { duration: "0" } } } } });
    const id = await h.submit({ runDuration: 10, system: { queue: "batch" } });
    expect(await limitReasons(h, id)).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../closing.js";
import { host, rejected, type TestHost } from "./helpers.js";

let h: TestHost | undefined;
closeAfterEach(() => h);

const queues = {
  policy: { limits: { duration: "2h", "job-size": { max: { ncores: 2 } } } },
  queues: {
    debug: { policy: { limits: { duration: "1h", "job-size": { max: { ncores: 1 } } } } },
    batch: { policy: { limits: { duration: "0", "job-size": { max: { ncores: -1 }, min: { ncores: 2 } } } } },
    plain: {},
  },
};

describe(".limit-duration", () => {
  it("rejects -t 2h on a queue limited to 1h, naming the queue", async () => {
    h = await host(queues);
    const msg = await rejected(h, { system: { duration: 7200, queue: "debug" } });
    expect(msg).toBe("requested duration (2h) exceeds policy limit of 1h for queue debug");
  });

  it("rejects an unlimited job when a limit applies, accepts within the limit", async () => {
    h = await host(queues);
    expect(await rejected(h, { system: { queue: "debug" } })).toBe(
      "requested duration (unlimited) exceeds policy limit of 1h for queue debug",
    );
    const id = await h.submit({ system: { duration: 1800, queue: "debug" } });
    expect(h.events(id)).toContain("validate");
    // With queues configured a job must name one (the queue is checked first), so the
    // general limit alone is seen on an instance without queues.
    await h.close();
    h = await host({ policy: queues.policy });
    expect(await rejected(h, { system: { duration: 3 * 3600 } })).toBe(
      "requested duration (3h) exceeds policy limit of 2h",
    );
  });

  it('a queue limit of "0" lifts the general limit; a queue without one inherits it', async () => {
    h = await host(queues);
    await h.submit({ system: { queue: "batch" }, cores: 2 });
    expect(await rejected(h, { system: { duration: 3 * 3600, queue: "plain" } })).toBe(
      "requested duration (3h) exceeds policy limit of 2h for queue plain",
    );
  });

  it("bad configuration fails startup with the TOML path and value", async () => {
    await expect(host({ policy: { limits: { duration: "forever" } } })).rejects.toThrow(
      /policy\.limits\]\.duration.*"forever"/,
    );
    await expect(host({ queues: { q: { policy: { limits: { duration: 5 } } } } })).rejects.toThrow(
      "[queues.q.policy.limits].duration: must be a string (FSD), got 5",
    );
    await expect(host({ queues: { q: { policy: "strict" } } })).rejects.toThrow("[queues.q.policy]: must be a table");
  });

  it("a config reload replaces the limits", async () => {
    h = await host(queues);
    await h.plugins.reloadConfig({ policy: { limits: { duration: "10m" } } });
    expect(await rejected(h, { system: { duration: 1200 } })).toBe(
      "requested duration (20m) exceeds policy limit of 10m",
    );
  });
});

describe(".limit-job-size", () => {
  it("rejects over the general and the queue max, under the queue min", async () => {
    h = await host({ policy: queues.policy });
    expect(await rejected(h, { cores: 3 })).toBe("requested ncores (3) exceeds policy limit of 2");
    await h.close();
    h = await host(queues);
    expect(await rejected(h, { cores: 3, system: { queue: "plain", duration: 60 } })).toBe(
      "requested ncores (3) exceeds policy limit of 2 for queue plain",
    );
    expect(await rejected(h, { cores: 2, system: { queue: "debug", duration: 60 } })).toBe(
      "requested ncores (2) exceeds policy limit of 1 for queue debug",
    );
    expect(await rejected(h, { cores: 1, system: { queue: "batch" } })).toBe(
      "requested ncores (1) is under policy limit of 2 for queue batch",
    );
  });

  it("a queue's -1 lifts the general max", async () => {
    h = await host(queues, { resources: { cores: 8 } });
    const id = await h.submit({ cores: 4, system: { queue: "batch" } });
    expect(h.events(id)).toContain("validate");
  });

  it("counts nodes and gpus (nslots × per slot)", async () => {
    h = await host({ policy: { limits: { "job-size": { max: { nnodes: 1, ngpus: 2 } } } } });
    const spec = (nodes: number, gpus: number) => ({
      version: 1,
      resources: [{ type: "node", count: nodes, with: [{ type: "slot", count: 2, label: "t", with: [{ type: "core", count: 1 }, { type: "gpu", count: gpus }] }] }],
      tasks: [{ command: ["true"], slot: "t", count: { per_slot: 1 } }],
      attributes: { system: { exec: { test: {} } } },
    });
    await expect(h.manager.submit(spec(2, 1))).rejects.toThrow("requested nnodes (2) exceeds policy limit of 1");
    await expect(h.manager.submit(spec(1, 2))).rejects.toThrow("requested ngpus (4) exceeds policy limit of 2");
  });

  it("bad sizes fail the configuration, naming the key", async () => {
    await expect(host({ policy: { limits: { "job-size": { max: { nnodes: -2 } } } } })).rejects.toThrow(
      "[policy.limits.job-size.max].nnodes: size must be -1 (unlimited), or >= 0 (got -2)",
    );
    await expect(host({ policy: { limits: { "job-size": { min: { ncores: "x" } } } } })).rejects.toThrow(
      '[policy.limits.job-size.min].ncores: must be an integer, got "x"',
    );
    await expect(host({ queues: ["debug"] })).rejects.toThrow("[queues]: must be a table");
  });
});

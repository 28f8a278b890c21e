import { afterEach, describe, expect, it } from "vitest";
import { host, rejected, until, type TestHost } from "./helpers.js";

let h: TestHost;
afterEach(async () => {
  await h?.close();
});

const OWNER = { userid: 0, owner: true };
const config = {
  queues: { debug: { policy: { limits: { duration: "1h" } } }, batch: {} },
  policy: { jobspec: { defaults: { system: { queue: "batch" } } } },
};

describe(".update-queue", () => {
  it("admission: unknown queue, disabled queue (with reason), default queue", async () => {
    h = await host(config);
    expect(await rejected(h, { system: { queue: "nope" } })).toBe('queue "nope" does not exist');
    await h.plugins.callService("update-queue", "disable", { name: "debug", reason: "maintenance" }, OWNER);
    // The queue is checked before any limit (spec §9): no duration would break debug's 1h.
    expect(await rejected(h, { system: { queue: "debug" } })).toBe("job submission to debug is disabled: maintenance");
    const id = await h.submit({});
    expect(h.job(id).state).not.toBe("NEW");
    await h.plugins.callService("update-queue", "enable", { name: "debug" }, OWNER);
    await h.submit({ system: { queue: "debug", duration: 60 } });
  });

  it("names an unknown queue before any limit, and lets a disabled queue's jobs be updated", async () => {
    h = await host({ ...config, policy: { ...config.policy, limits: { duration: "1h", "job-size": { max: { ncores: 1 } } } } });
    expect(await rejected(h, { system: { queue: "nope", duration: 7200 }, cores: 4 })).toBe('queue "nope" does not exist');
    const id = await h.submit({ urgency: 0, system: { queue: "debug", duration: 60 } });
    await h.plugins.callService("update-queue", "disable", { name: "debug" }, OWNER);
    await h.manager.update(id, { "attributes.system.duration": 120 });
    expect(h.manager.jobspec(id).attributes.system?.duration).toBe(120);
  });

  it("without a default queue, a job must name one; without queues it must not", async () => {
    h = await host({ queues: { debug: {} } });
    expect(await rejected(h, {})).toBe("no queue specified");
    await h.close();
    h = await host();
    expect(await rejected(h, { system: { queue: "debug" } })).toBe('queue "debug" does not exist (no queues are configured)');
  });

  it("a stopped queue gets no alloc request; start lets its jobs run, other queues keep going", async () => {
    h = await host(config);
    await h.plugins.callService("update-queue", "stop", { name: "batch", reason: "drain" }, OWNER);
    const stuck = await h.submit({ runDuration: 1 });
    const other = await h.submit({ runDuration: 1, system: { queue: "debug", duration: 60 } });
    await h.runToCompletion(other);
    await h.advance(1000);
    expect(h.job(stuck).state).toBe("SCHED");
    expect(h.events(stuck)).not.toContain("alloc");
    const st = (await h.plugins.callService("update-queue", "status", {}, { userid: 9, owner: false })) as {
      queues: Record<string, { started: boolean; stopReason?: string }>;
    };
    expect(st.queues.batch).toMatchObject({ started: false, stopReason: "drain" });
    await h.plugins.callService("update-queue", "start", { name: "batch" }, OWNER);
    expect((await h.runToCompletion(stuck)).result).toBe("COMPLETED");
    await expect(h.plugins.callService("update-queue", "stop", { name: "x" }, OWNER)).rejects.toThrow('unknown queue "x"');
    await expect(h.plugins.callService("update-queue", "stop", {}, { userid: 9, owner: false })).rejects.toThrow(
      "Request requires owner credentials",
    );
  });

  it("queue updates: rules, and the new queue's limits apply through job.validate", async () => {
    h = await host(config);
    const id = await h.submit({ urgency: 0, system: { duration: 7200 } });
    const Q = "attributes.system.queue";
    await expect(h.manager.update(id, { [Q]: "batch" })).rejects.toThrow("job queue is already set to batch");
    await expect(h.manager.update(id, { [Q]: "nope" })).rejects.toThrow('queue "nope" does not exist');
    await expect(h.manager.update(id, { [Q]: "debug" })).rejects.toThrow(
      "requested duration (2h) exceeds policy limit of 1h for queue debug",
    );
    await h.manager.update(id, { [Q]: "debug", "attributes.system.duration": 600 });
    expect(h.manager.jobspec(id).attributes.system?.queue).toBe("debug");
    const running = await h.submit({ runDuration: 100 });
    await until(h, () => h.events(running).includes("start"));
    await expect(h.manager.update(running, { [Q]: "debug" })).rejects.toThrow("update of queue for running job not supported");
  });

  it("bad queue configuration fails startup naming the path", async () => {
    await expect(host({ queues: { a: {} }, policy: { jobspec: { defaults: { system: { queue: "b" } } } } })).rejects.toThrow(
      '[policy.jobspec.defaults.system].queue: "b" is not a configured queue',
    );
  });
});

describe("RFC 33 virtual queues (parent = NAME)", () => {
  const virtual = {
    queues: {
      batch: { policy: { limits: { duration: "8h", "job-size": { max: { ncores: 2 } } } } },
      expedite: { parent: "batch", policy: { limits: { duration: "1h" } } },
    },
    policy: { jobspec: { defaults: { system: { queue: "batch" } } } },
  };

  it("inherits every policy key of its parent; a key it sets overrides only that key", async () => {
    h = await host(virtual);
    // expedite's own 1h duration, batch's inherited 2-core job-size limit.
    expect(await rejected(h, { system: { queue: "expedite", duration: 7200 } })).toBe(
      "requested duration (2h) exceeds policy limit of 1h for queue expedite",
    );
    expect(await rejected(h, { cores: 3, system: { queue: "expedite", duration: 60 } })).toBe(
      "requested ncores (3) exceeds policy limit of 2 for queue expedite",
    );
    await h.submit({ system: { duration: 7200 } });
    await h.submit({ cores: 2, system: { queue: "expedite", duration: 60 } });
  });

  it("its jobs schedule only while both it and its parent are started", async () => {
    h = await host(virtual);
    await h.plugins.callService("update-queue", "stop", { name: "batch" }, OWNER);
    const id = await h.submit({ runDuration: 1, system: { queue: "expedite", duration: 60 } });
    await h.advance(1000);
    expect(h.job(id).state).toBe("SCHED");
    expect(h.events(id)).not.toContain("alloc");
    await h.plugins.callService("update-queue", "stop", { name: "expedite" }, OWNER);
    await h.plugins.callService("update-queue", "start", { name: "batch" }, OWNER);
    await h.advance(1000);
    expect(h.events(id)).not.toContain("alloc");
    await h.plugins.callService("update-queue", "start", { name: "expedite" }, OWNER);
    expect((await h.runToCompletion(id)).result).toBe("COMPLETED");
  });

  it("a bad parent fails the configuration, naming the path", async () => {
    const q = (queues: Record<string, unknown>) => host({ queues, policy: { jobspec: { defaults: { system: { queue: "a" } } } } });
    await expect(q({ a: {}, v: { parent: "nope" } })).rejects.toThrow('[queues.v].parent: "nope" is not a configured queue');
    await expect(q({ a: { parent: "b" }, b: {}, v: { parent: "a" } })).rejects.toThrow('[queues.v].parent: "a" is itself a virtual queue');
    await expect(q({ a: {}, v: { parent: "a", requires: ["x"] } })).rejects.toThrow("[queues.v].requires: a virtual queue shares its parent's resources");
    await expect(q({ a: {}, v: { parent: 3 } })).rejects.toThrow("[queues.v].parent: must be a string, got 3");
  });
});

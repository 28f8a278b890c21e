import { afterEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { createJobManager, JobManager } from "../../src/manager/manager.js";
import type { JobtapHost } from "../../src/plugins/host.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { jobspec, names, simManager, submitNow, tempDir, type SimManager } from "./helpers.js";

const job = (seconds: number, sys: Record<string, unknown> = {}, cores = 1) =>
  jobspec(["true"], { exec: { test: { run_duration: seconds } }, ...sys }, { cores });
const OWNER = { userid: 0, owner: true };
const config = { queues: { batch: {}, debug: {} }, policy: { jobspec: { defaults: { system: { queue: "batch" } } } } };

let cleanup: (() => void) | undefined;
const open: JobManager[] = [];
afterEach(async () => {
  for (const m of open.splice(0)) await m.close();
  cleanup?.();
  cleanup = undefined;
});

describe("queue start/stop in the manager (ManagerPort.setQueueStarted)", () => {
  it("a stopped queue's jobs stay in SCHED with no request; stopping withdraws pending ones; start sends them", async () => {
    const s = await simManager({ resources: { cores: 1 } });
    open.push(s.mgr);
    const blocker = await submitNow(s, job(10, { queue: "q" }));
    const waiting = await submitNow(s, job(1, { queue: "q" }));
    expect(JobManager.internals(s.mgr).scheduler.pending()).toEqual([waiting]);
    s.mgr.port.setQueueStarted!("q", false);
    expect(JobManager.internals(s.mgr).scheduler.pending()).toEqual([]);
    const late = await submitNow(s, job(1, { queue: "q" }));
    const other = await submitNow(s, job(1, { queue: "r" }));
    await s.clock.advance(20_000);
    expect(s.mgr.job(blocker).result).toBe("COMPLETED");
    expect(s.mgr.job(other).result).toBe("COMPLETED");
    for (const id of [waiting, late]) {
      expect(s.mgr.job(id).state).toBe("SCHED");
      expect(names(s, id)).not.toContain("alloc");
    }
    s.mgr.port.setQueueStarted!("q", true);
    await drive(s);
    expect(s.mgr.job(waiting).result).toBe("COMPLETED");
    expect(s.mgr.job(late).result).toBe("COMPLETED");
  });

  it("jobs naming no queue belong to the default queue", async () => {
    const s = await simManager();
    open.push(s.mgr);
    s.mgr.port.setDefaultQueue!("batch");
    s.mgr.port.setQueueStarted!("batch", false);
    const id = await submitNow(s, job(1));
    await s.clock.advance(5000);
    expect(s.mgr.job(id).state).toBe("SCHED");
    s.mgr.port.setDefaultQueue!(undefined);
    await drive(s);
    expect(s.mgr.job(id).result).toBe("COMPLETED");
  });
});

/** A SQLite-backed manager with the builtins (the test owns `open` and the temp dir). */
async function start(dir: string, clock: SimulatedClock, conf: Record<string, unknown> = config): Promise<{ s: SimManager; host: JobtapHost }> {
  let host: JobtapHost | undefined;
  const mgr = await createJobManager({
    statedir: dir,
    store: "sqlite",
    clock,
    config: conf,
    resources: { cores: 2 },
    log: () => undefined,
    plugins: async (port) => (host = await jobtapPlugins({ config: conf, pluginPath: [] })(port)),
  });
  open.push(mgr);
  return { s: { mgr, clock, logs: [] }, host: host! };
}

describe(".update-queue uses it (builtins, SQLite, restart)", () => {
  it("stop → SCHED without alloc; restart with the queue stopped → still SCHED; start → runs", async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const first = await start(t.dir, new SimulatedClock(Date.now()));
    await first.host.callService("update-queue", "stop", { name: "batch", reason: "drain" }, OWNER);
    const id = await submitNow(first.s, job(1));
    await first.s.clock.advance(5000);
    expect(first.s.mgr.job(id).state).toBe("SCHED");
    expect(names(first.s, id)).not.toContain("alloc");
    await first.s.mgr.close();

    const again = await start(t.dir, new SimulatedClock(Date.now() + 10_000));
    await again.s.clock.advance(5000);
    expect(again.s.mgr.job(id).state).toBe("SCHED");
    expect(names(again.s, id)).toContain("flux-restart");
    expect(names(again.s, id)).not.toContain("alloc");
    expect(JobManager.internals(again.s.mgr).scheduler.pending()).toEqual([]);
    await again.host.callService("update-queue", "start", { name: "batch" }, OWNER);
    await drive(again.s);
    expect(again.s.mgr.job(id).result).toBe("COMPLETED");
  });
});

describe("[job-manager] stop-queues-on-restart", () => {
  const knob = (v: unknown) => ({ ...config, "job-manager": { "stop-queues-on-restart": v } });
  it("a fresh instance starts its queues; after a restart every queue is stopped with Flux's reason", async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const first = await start(t.dir, new SimulatedClock(Date.now()), knob(true));
    const ran = await submitNow(first.s, job(1));
    await drive(first.s);
    expect(first.s.mgr.job(ran).result).toBe("COMPLETED");
    await first.s.mgr.close();
    const again = await start(t.dir, new SimulatedClock(Date.now() + 10_000), knob(true));
    const st = (await again.host.callService("update-queue", "status", {}, OWNER)) as { queues: Record<string, { started: boolean; stopReason?: string }> };
    expect(st.queues.batch).toMatchObject({ started: false, stopReason: "Automatically stopped due to restart" });
    expect(st.queues.debug).toMatchObject({ started: false });
    const id = await submitNow(again.s, job(1));
    await drive(again.s);
    expect(again.s.mgr.job(id).state).toBe("SCHED");
    await again.host.callService("update-queue", "start", {}, OWNER);
    await drive(again.s);
    expect(again.s.mgr.job(id).result).toBe("COMPLETED");
    await again.s.mgr.close();
    // Without the knob a restart keeps the queues as they were.
    const third = await start(t.dir, new SimulatedClock(Date.now() + 20_000), config);
    const st3 = (await third.host.callService("update-queue", "status", {}, OWNER)) as { queues: Record<string, { started: boolean }> };
    expect(st3.queues.batch?.started).toBe(true);
  });

  it("a value that is not a boolean fails the configuration, naming the key", async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    await expect(start(t.dir, new SimulatedClock(), knob("yes"))).rejects.toThrow(
      '[job-manager].stop-queues-on-restart: must be true or false, got "yes"',
    );
  });
});

/** Runs the simulated clock until nothing is left running (bounded). */
async function drive(s: SimManager): Promise<void> {
  for (let i = 0; i < 20; i++) await s.clock.advance(1000);
}

describe("moving a job out of a stopped queue", () => {
  it("a SCHED job of a stopped queue updated to a started queue gets its request and runs", async () => {
    const { createTestHost } = await import("../../src/testhost.js");
    const h = await createTestHost({ config });
    try {
      await h.plugins.callService("update-queue", "stop", { name: "batch" }, OWNER);
      const id = await h.submit({ runDuration: 1 });
      await h.advance(2000);
      expect(h.job(id).state).toBe("SCHED");
      await h.manager.update(id, { "attributes.system.queue": "debug" });
      expect((await h.runToCompletion(id)).result).toBe("COMPLETED");
    } finally {
      await h.close();
    }
  });
});

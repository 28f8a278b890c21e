import { afterEach, describe, expect, it } from "vitest";
import { closeAfterEach } from "../closing.js";
import { RealClock } from "../../src/manager/base/clock.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { createTestHost, type TestHost } from "../../src/testhost.js";
import { jobspec, tempDir } from "./helpers.js";

const DURATION = "attributes.system.duration";

describe("resource-update reaches the running job's executor (test executor)", () => {
  let h: TestHost | undefined;
  closeAfterEach(() => h);

  /** A job that runs 100 s under a 10 s limit, updated after 5 s. */
  async function runningJob() {
    h = await createTestHost({ config: {} });
    const id = await h.submit({ runDuration: 100, system: { duration: 10 } });
    await h.advance(5000);
    expect(h.job(id).state).toBe("RUN");
    return { h, id };
  }

  it("a longer duration lets the job run to its end", async () => {
    const { h, id } = await runningJob();
    await h.manager.update(id, { [DURATION]: 200 });
    expect(h.events(id)).toContain("resource-update");
    await h.advance(20_000);
    expect(h.job(id).state).toBe("RUN");
    const info = await h.runToCompletion(id);
    expect(info.result).toBe("COMPLETED");
  });

  it("a shorter duration brings the timeout forward; 0 lifts the limit", async () => {
    const { h, id } = await runningJob();
    const t0 = h.clock.now();
    await h.manager.update(id, { [DURATION]: 7 });
    await h.runToCompletion(id);
    expect(h.job(id).result).toBe("TIMEOUT");
    const ex = h.eventlog(id).find((e) => e.name === "exception")!;
    expect(ex.timestamp * 1000 - t0).toBeLessThan(3000);

    const free = await h.submit({ runDuration: 30, system: { duration: 10 } });
    await h.advance(1000);
    await h.manager.update(free, { [DURATION]: 0 });
    expect((await h.runToCompletion(free)).result).toBe("COMPLETED");
  });
});

// Real processes on the real clock: the limit must reach a real `sleep`.
describe("resource-update reaches the running job's executor (local executor)", () => {
  let mgr: JobManager | undefined;
  let cleanup: (() => void) | undefined;
  afterEach(async () => {
    await mgr?.close();
    cleanup?.();
    mgr = undefined;
  });

  async function start(): Promise<JobManager> {
    const t = tempDir();
    cleanup = t.cleanup;
    mgr = await createJobManager({
      statedir: t.dir,
      store: "memory",
      clock: new RealClock(),
      batchWindowMs: 1,
      resources: { cores: 2 },
      log: () => undefined,
      plugins: jobtapPlugins({ config: {}, pluginPath: [] }),
    });
    return mgr;
  }

  async function started(m: JobManager, id: Parameters<JobManager["job"]>[0]): Promise<void> {
    for (let i = 0; i < 200 && !m.eventlog(id).some((e) => e.name === "start"); i++) await new Promise((r) => setTimeout(r, 10));
  }

  it("a duration extended while `sleep 1` runs under a 0.5 s limit lets it complete", async () => {
    const m = await start();
    const id = await m.submit(jobspec(["sleep", "1"], { duration: 0.5 }));
    await started(m, id);
    await m.update(id, { [DURATION]: 60 });
    expect(await m.wait(id)).toMatchObject({ result: "COMPLETED" });
  });

  it("a duration shortened while `sleep 30` runs times it out", async () => {
    const m = await start();
    const id = await m.submit(jobspec(["sleep", "30"], { duration: 60 }));
    await started(m, id);
    await m.update(id, { [DURATION]: 0.3 });
    const r = await m.wait(id);
    expect(r.result).toBe("TIMEOUT");
    expect(r.errstr).toMatch(/resource allocation expired/);
  });
});

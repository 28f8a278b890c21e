/** Plugins across a manager restart: TOML-configured load, restart callbacks, p.state. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import { parseToml } from "../../src/plugins/config.js";
import type { JobtapHost } from "../../src/plugins/host.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { testJobspec } from "../../src/testhost.js";
import { fixture } from "./helpers.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "jobtap-restart-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function start(clock: SimulatedClock): Promise<{ mgr: JobManager; host: JobtapHost }> {
  const config = parseToml(`[job-manager]
plugins = [
  { load = ${JSON.stringify(fixture("priority-wait.ts"))} },
  { load = ${JSON.stringify(fixture("state-counter.js"))} },
]`);
  let host: JobtapHost | undefined;
  const factory = jobtapPlugins({ config, log: () => undefined });
  const mgr = await createJobManager({
    statedir: dir,
    store: "sqlite",
    clock,
    config,
    resources: { cores: 2 },
    plugins: async (m) => (host = await factory(m)),
  });
  return { mgr, host: host! };
}

describe("plugins across a restart", () => {
  it("loads configured plugins before the restart callbacks and keeps p.state", async () => {
    const clock = new SimulatedClock();
    const first = await start(clock);
    const pending = first.mgr.submit(testJobspec());
    await clock.advance(50);
    const id = await pending;
    expect(first.mgr.job(id).state).toBe("PRIORITY");
    expect(await first.host.query("state-counter.js")).toMatchObject({ count: 1 });
    await first.mgr.close();

    const second = await start(clock);
    // job.new ran again at restart for the still-active job; the count was kept in the store.
    expect(await second.host.query("state-counter.js")).toMatchObject({ count: 2 });
    expect(second.mgr.job(id).state).toBe("PRIORITY");
    await second.host.callService(
      "prioritywait", "release", { id: String(id), priority: 3 }, { userid: 0, owner: true },
    );
    await clock.advance(100);
    expect(second.mgr.job(id).state).toBe("INACTIVE");
    await second.mgr.close();
  });

  it("job.inactive-add at restart reads an inactive job's jobspec and R from the store, read-only", async () => {
    const clock = new SimulatedClock();
    const first = await start(clock);
    const pending = first.mgr.submit({ ...testJobspec(), tasks: [{ command: ["/bin/echo", "stored"], slot: "task", count: { per_slot: 1 } }] });
    await clock.advance(50);
    const id = await pending;
    await first.host.callService("prioritywait", "release", { id: String(id), priority: 3 }, { userid: 0, owner: true });
    await clock.advance(100);
    expect(first.mgr.job(id).state).toBe("INACTIVE");
    await first.mgr.close();

    const config = parseToml(`[job-manager]\nplugins = [ { load = ${JSON.stringify(fixture("inactive-reader.js"))} } ]`);
    let host: JobtapHost | undefined;
    const factory = jobtapPlugins({ config, log: () => undefined });
    const mgr = await createJobManager({ statedir: dir, store: "sqlite", clock, config, resources: { cores: 2 }, plugins: async (m) => (host = await factory(m)) });
    expect(await host!.query("inactive-reader.js")).toMatchObject({ seen: [{ command: ["/bin/echo", "stored"], writable: false, cores: "0" }] });
    expect(mgr.jobspec(id).attributes).not.toHaveProperty("touched");
    await mgr.close();
  });
});

import { afterEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import type { JobtapHost } from "../../src/plugins/host.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { jobspec } from "../manager/helpers.js";
import { fixture } from "./helpers.js";

const OWNER = { userid: 0, owner: true };
const open: JobManager[] = [];
afterEach(async () => {
  for (const m of open.splice(0)) await m.close();
});

async function start(): Promise<{ mgr: JobManager; host: JobtapHost; clock: SimulatedClock }> {
  const clock = new SimulatedClock();
  let host: JobtapHost | undefined;
  const mgr = await createJobManager({
    store: "memory",
    clock,
    resources: { cores: 2, gpus: 0, memory: 1 << 30 },
    slots: [{ count: 2, cores: 1 }],
    log: () => undefined,
    plugins: async (port) => (host = await jobtapPlugins({ config: {}, pluginPath: [] })(port)),
  });
  open.push(mgr);
  return { mgr, host: host!, clock };
}

describe("ads through the plugin context", () => {
  it("p.jobAd, p.slotAds, p.machineAd, p.publishAd/withdrawAd; a removed plugin's ads are withdrawn", async () => {
    const { mgr, host, clock } = await start();
    await host.load(fixture("ads-user.ts"));
    expect(mgr.hostAds.sources()).toEqual(["ads-user.ts:policy", "ads-user.ts:site"]);
    expect(await host.callService("ads-user", "site", {}, OWNER)).toBe("lab");
    expect(await host.callService("ads-user", "starts", {}, OWNER)).toEqual([true, true]);
    const p = mgr.submit(jobspec(["true"], { slot: 2, exec: { test: { run_duration: "1h" } } }));
    await clock.advance(100);
    const id = await p;
    await clock.advance(1);
    expect(await host.callService("ads-user", "seen", {}, OWNER)).toEqual([{ id: formatJobId(id), status: 2, frozen: "FROZEN_AD" }]);
    // The slot the job runs in no longer starts work; the other one does.
    expect(await host.callService("ads-user", "starts", {}, OWNER)).toEqual([true, false]);
    expect(await host.callService("ads-user", "withdraw", {}, OWNER)).toBe(true);
    expect(mgr.hostAds.sources()).toEqual(["ads-user.ts:site"]);
    host.remove("ads-user.ts");
    expect(mgr.hostAds.sources()).toEqual([]);
    expect(mgr.hostAds.machineAd().has("SiteName")).toBe(false);
  });
});

describe("ads in the plugin test host", () => {
  it("createTestHost takes slots and user attributes, so a plugin's ad logic is testable", async () => {
    const { createTestHost } = await import("../../src/testhost.js");
    const t = await createTestHost({
      resources: { cores: 2 },
      slots: [{ count: 2, cores: 1 }],
      plugin: (p) => {
        p.serviceRegister("project", (payload) => p.jobAd((payload as { id: JobId }).id).evaluate("Project"));
      },
    });
    const id = await t.submit({ classad: { Project: '"physics"' }, system: { slot: 2 }, runDuration: "1h" });
    await t.advance(1);
    expect(await t.plugins.callService("test-plugin", "project", { id }, OWNER)).toBe("physics");
    expect(t.manager.hostAds.slotAd(2)!.evaluate("State")).toBe("Claimed");
    await t.close();
  });
});

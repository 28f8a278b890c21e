import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { host, settle, writeScript, type TestHost } from "./helpers.js";

let h: TestHost | undefined;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "jobtap-policy-cron-"));
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  rmSync(dir, { recursive: true, force: true });
});

describe("slot START driven by a real condor-cron health check", () => {
  it("START false stops placements; true again resumes them without a restart; running jobs go on", async () => {
    const state = join(dir, "healthy");
    writeFileSync(state, "true\n");
    const check = writeScript(dir, "health", `echo "NODE_IS_HEALTHY = $(cat ${state})"`);
    const file = join(dir, "50-health");
    writeFileSync(file, [
      "STARTD_CRON_JOBLIST = health",
      `STARTD_CRON_HEALTH_EXECUTABLE = ${check}`,
      "STARTD_CRON_HEALTH_MODE = Periodic",
      "STARTD_CRON_HEALTH_PERIOD = 10s",
      "",
    ].join("\n"));
    const t = (h = await host(
      { policy: { start: "NODE_IS_HEALTHY == true" } },
      { plugin: "condor-cron", conf: { condor_config: file }, slots: [{ count: 2, cores: 1 }] },
    ));
    const healthy = () => t.manager.hostAds.slotAd(1)?.evaluate("NODE_IS_HEALTHY");
    await settle(t, () => healthy() === true, 500);
    const first = await t.submit({ runDuration: "1h" });
    await settle(t, () => t.job(first).state === "RUN", 500);
    writeFileSync(state, "false\n");
    await settle(t, () => healthy() === false, 500);
    const second = await t.submit({ runDuration: "1h" });
    await t.advance(1000);
    expect(t.job(second).state).toBe("SCHED");
    expect(t.job(first).state).toBe("RUN");
    expect(t.manager.jobAd(second).evaluate("LastRejMatchTime")).toBeTypeOf("bigint");
    writeFileSync(state, "true\n");
    await settle(t, () => t.job(second).state === "RUN", 500);
    expect(healthy()).toBe(true);
  });
});

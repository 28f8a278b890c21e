/**
 * A plugin's faults outside any handler (a promise nobody awaits, a throw from its own
 * timer) are the plugin's, logged under its name; they never end the daemon, and the job
 * that was running completes as it would have.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonUnderTest, requireBuild, waitFor } from "./harness.js";

const CARELESS = `export default (p) => {
  p.on("job.state.run", () => {
    Promise.reject(new Error("fire-and-forget went wrong"));
    setTimeout(() => { throw new Error("timer callback went wrong"); }, 0);
  });
};
`;

describe("plugin faults outside handlers", { timeout: 60_000 }, () => {
  let d: DaemonUnderTest;

  beforeAll(async () => {
    requireBuild();
    d = new DaemonUnderTest();
    writeFileSync(join(d.statedir, "careless.mjs"), CARELESS);
    writeFileSync(join(d.statedir, "jobtap.toml"), `[job-manager]\nplugins = [{ load = "./careless.mjs" }]\n`);
    await d.start(["--config", join(d.statedir, "jobtap.toml")]);
  }, 60_000);
  afterAll(async () => {
    await d?.dispose();
  });

  it("are logged under the plugin's name; the daemon lives on and the job completes", async () => {
    const r = d.cli(["submit", "--wait", "true"]);
    expect(r).toMatchObject({ status: 0, stderr: "" });
    const id = r.stdout.trim();
    expect(d.job(id)).toMatchObject({ state: "INACTIVE", result: "COMPLETED" });
    // The log is read while this process waits, not during the synchronous CLI calls.
    await waitFor(() => d.log.includes("timer callback"), 10_000, "the daemon's log lines");
    expect(d.log).toContain("plugin careless.mjs: unhandled rejection (contained, the daemon carries on): fire-and-forget went wrong");
    expect(d.log).toContain("plugin careless.mjs: uncaught exception (contained, the daemon carries on): timer callback went wrong");
    // Still serving, and a restart keeps the job COMPLETED.
    expect(d.cli(["jobs", "-a"]).status).toBe(0);
    expect(await d.stop()).toBe(0);
    await d.start(["--config", join(d.statedir, "jobtap.toml")]);
    expect(d.job(id)).toMatchObject({ state: "INACTIVE", result: "COMPLETED" });
  });
});

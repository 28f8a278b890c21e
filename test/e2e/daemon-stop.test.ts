/**
 * A daemon must exit after SIGTERM: every timer and handle a plugin armed (a `begin-time`
 * release, a singleton's hold) is released when the manager closes. The process exit is
 * the assertion: a leaked timer keeps Node's event loop alive after the "stopped" line.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DaemonUnderTest, requireBuild } from "./harness.js";

describe("daemon stop", { timeout: 90_000 }, () => {
  let d: DaemonUnderTest | undefined;
  afterEach(async () => {
    await d?.dispose();
  });

  it("exits after SIGTERM with a --begin-time job pending, and keeps the job", async () => {
    requireBuild();
    d = new DaemonUnderTest();
    await d.start();
    const r = d.cli(["submit", "--begin-time=+1h", "true"]);
    expect(r.stderr).toBe("");
    const id = r.stdout.trim();
    expect(d.job(id)?.state).toBe("DEPEND");
    expect(await d.stopWithin(20_000)).toBe(0);
    expect(d.log).toMatch(/stopped/);
    // The job's timer was released, not its dependency: after a restart it still waits.
    await d.start();
    expect(d.job(id)?.state).toBe("DEPEND");
    expect(await d.stopWithin(20_000)).toBe(0);
  });
});

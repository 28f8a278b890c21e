/**
 * The site's periodic policy through the real daemon: `[policy] system-periodic-hold` and
 * `periodic-expr-interval` in the TOML file hold a job with HoldReasonCode 26, a reload adds
 * `system-periodic-release`, and a bad expression stops `config check` naming its TOML path.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonUnderTest, requireBuild, waitFor } from "./harness.js";

describe("SYSTEM_PERIODIC_* from the config file", { timeout: 90_000 }, () => {
  let d: DaemonUnderTest;
  let file: string;
  const base = '[resources]\ncores = 1\n[policy]\nperiodic-expr-interval = 1\nsystem-periodic-hold = "JobStatus == 1 && Park =?= true"\nsystem-periodic-hold-reason = "\\"parked by the site\\""\n';
  const ids = (expr: string) => (JSON.parse(d.cli(["jobs", "-a", "--json", "--constraint", expr]).stdout) as Array<{ id: string }>).map((j) => j.id);

  beforeAll(async () => {
    requireBuild();
    d = new DaemonUnderTest();
    file = join(d.statedir, "jobtap.toml");
    writeFileSync(file, base);
    await d.start(["--config", file]);
  }, 60_000);
  afterAll(async () => {
    await d?.dispose();
  });

  it("holds a job with HoldReasonCode 26 within the configured interval; a reload adds a release", async () => {
    const id = d.cli(["submit", "--setattr", "exec.test.run_duration=1h", "--classad", "Park = true", "--classad", "Requirements = false", "--", "true"]).stdout.trim();
    await waitFor(() => ids('HoldReasonCode == 26 && HoldReason == "parked by the site"').includes(id), 20_000, "system hold");
    writeFileSync(file, base + 'system-periodic-release = "HoldReasonCode == 26"\n');
    expect(d.cli(["config", "reload"]).status).toBe(0);
    // Released, then held again by the same hold at the next pass: its eventlog shows both.
    await waitFor(() => d.cli(["eventlog", id]).stdout.split("\n").filter((l) => l.includes("urgency")).length >= 3, 20_000, "released and held again");
    d.cli(["cancel", id]);
  });

  it("a bad SYSTEM_PERIODIC expression or interval stops config check naming the TOML path", () => {
    const bad = join(d.statedir, "bad.toml");
    writeFileSync(bad, '[policy]\nsystem-periodic-remove = "JobStatus =="\n');
    const check = d.cli(["config", "check", bad]);
    expect(check.status).not.toBe(0);
    expect(check.stdout + check.stderr).toMatch(/\[policy\]\.system-periodic-remove: ClassAd syntax error at column \d+/);
    writeFileSync(bad, "[policy]\nperiodic-expr-interval = -1\n");
    expect(d.cli(["config", "check", bad]).stdout + d.cli(["config", "check", bad]).stderr).toMatch(/\[policy\]\.periodic-expr-interval: must be a whole number of seconds/);
  });
});

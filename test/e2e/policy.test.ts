/**
 * Slot policy through the real daemon: `[policy]` and per-slot START in the TOML file, a job
 * placed by its Requirements, `ads` showing Start/Rank and filtering by `--constraint`,
 * `jobs --constraint` on LastRejMatchTime, and a reload changing START.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonUnderTest, requireBuild, waitFor } from "./harness.js";

const LONG = ["--setattr", "exec.test.run_duration=1h"];

describe("slot policy from the config file", { timeout: 90_000 }, () => {
  let d: DaemonUnderTest;
  let file: string;
  const config = (start2: string) =>
    '[resources]\ncores = 2\nmemory = "2G"\n' +
    `slots = [{ count = 1, cores = 1 }, { count = 1, cores = 1, start = ${JSON.stringify(start2)}, rank = "10" }]\n` +
    '[policy]\nstart = "TARGET.Blocked =!= true"\n';

  beforeAll(async () => {
    requireBuild();
    d = new DaemonUnderTest();
    file = join(d.statedir, "jobtap.toml");
    writeFileSync(file, config('TARGET.Owner =!= "nobody" && TARGET.Blocked =!= true'));
    await d.start(["--config", file]);
  }, 60_000);
  afterAll(async () => {
    await d?.dispose();
  });

  it("ads shows Start and Rank; --constraint filters the slot ads", () => {
    const table = d.cli(["ads"]).stdout.trimEnd().split("\n");
    expect(table[0]).toMatch(/Cpus\s+Start\s+Rank$/);
    const json = JSON.parse(d.cli(["ads", "--json", "--constraint", "Rank > 5"]).stdout) as Array<Record<string, unknown>>;
    expect(json.map((a) => a.SlotID)).toEqual([2]);
    const bad = d.cli(["ads", "--constraint", "Rank >"]);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/constraint 'Rank >'/);
  });

  it("a job goes where both Requirements hold; one matching nothing waits with LastRejMatchTime", async () => {
    const two = d.cli(["submit", ...LONG, "--classad", "Requirements = TARGET.SlotID == 2", "--", "true"]).stdout.trim();
    const blocked = d.cli(["submit", ...LONG, "--classad", "Blocked = true", "--", "true"]).stdout.trim();
    await waitFor(() => d.job(two)?.state === "RUN", 20_000, "job in slot 2");
    const l = d.cli(["ads", "--slot", "2", "-l"]).stdout;
    expect(l).toContain(`JobIds = "${two}"`);
    await waitFor(() => d.cli(["jobs", "--constraint", "LastRejMatchTime =!= undefined"]).stdout.includes(blocked), 20_000, "blocked job rejected");
    expect(d.job(blocked)?.state).toBe("SCHED");
    d.cli(["cancel", two, blocked]);
  });

  it("a bad START stops config check naming its TOML path; a reload changes START", async () => {
    const bad = join(d.statedir, "bad.toml");
    writeFileSync(bad, '[policy]\nstart = "SlotID =="\n');
    const check = d.cli(["config", "check", bad]);
    expect(check.status).not.toBe(0);
    expect(check.stdout + check.stderr).toMatch(/\[policy\]\.start: ClassAd syntax error at column \d+/);
    writeFileSync(file, config("false"));
    expect(d.cli(["config", "reload"]).status).toBe(0);
    const slot2 = JSON.parse(d.cli(["ads", "--json", "--slot", "2"]).stdout) as Array<Record<string, unknown>>;
    expect(slot2[0]!.Start).toBe(false);
  });
});

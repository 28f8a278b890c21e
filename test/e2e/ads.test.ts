/**
 * Job ads and host ads from the command line, through the real daemon: `submit --classad`
 * round trip, `job info --classad` (condor_q -l style), `jobs --constraint`, `submit
 * --slot`, `ads` (condor_status style).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonUnderTest, requireBuild, waitFor } from "./harness.js";

const HOLD_LONG = ["--setattr", "exec.test.run_duration=1h"];

/**
 * A site plugin in a directory outside the package (no node_modules anywhere above it): it
 * imports "jobtap", and its helper module imports "jobtap/plugin".
 */
function sitePlugin(dir: string): string {
  writeFileSync(
    join(dir, "helper.js"),
    'import { ClassAd } from "jobtap/plugin";\nexport const siteAd = (w) => new ClassAd([["SiteName", "lab"], ["Window", BigInt(w)]]);\n',
  );
  writeFileSync(
    join(dir, "site.js"),
    'import { parseFSD } from "jobtap";\nimport { siteAd } from "./helper.js";\n' +
      'export default (p) => p.publishAd("site", siteAd(parseFSD("1m")), { ad: "machine" });\n',
  );
  return join(dir, "site.js");
}

describe("job ads from the command line", { timeout: 90_000 }, () => {
  let d: DaemonUnderTest;
  let pluginDir: string;

  beforeAll(async () => {
    requireBuild();
    d = new DaemonUnderTest();
    pluginDir = mkdtempSync(join(tmpdir(), "jobtap-site-plugins-"));
    const file = join(d.statedir, "jobtap.toml");
    writeFileSync(
      file,
      '[resources]\ncores = 4\nmemory = "4G"\nslots = [{ count = 2, cores = 2 }]\n' +
        `[job-manager]\nplugins = [{ load = ${JSON.stringify(sitePlugin(pluginDir))} }]\n`,
    );
    await d.start(["--config", file]);
  }, 60_000);
  afterAll(async () => {
    await d?.dispose();
    rmSync(pluginDir, { recursive: true, force: true });
  });

  it("a plugin outside the package imports jobtap and jobtap/plugin (also from its helper modules)", () => {
    const machine = JSON.parse(d.cli(["ads", "--machine", "--json"]).stdout) as Array<Record<string, unknown>>;
    expect(machine[0]).toMatchObject({ SiteName: "lab", Window: 60 });
  });

  it("submit --classad stores the attributes; job info --classad prints them like condor_q -l", () => {
    const r = d.cli(["submit", ...HOLD_LONG, "--classad", "WantJobRouter = true", "--classad", '+Project="physics"', "--classad", "Weight = RequestCpus * 10", "--", "sleep", "1"]);
    expect(r.stderr).toBe("");
    const id = r.stdout.trim();
    const spec = JSON.parse(d.cli(["job", "info", id, "jobspec"]).stdout) as { attributes: { user: { classad: unknown } } };
    expect(spec.attributes.user.classad).toEqual({ WantJobRouter: "true", Project: '"physics"', Weight: "RequestCpus * 10" });
    const info = d.cli(["job", "info", "--classad", id]);
    expect(info.status).toBe(0);
    const lines = info.stdout.trimEnd().split("\n");
    expect(lines).toContain("WantJobRouter = true");
    expect(lines).toContain('Project = "physics"');
    expect(lines).toContain("Weight = RequestCpus * 10");
    expect(lines).toContain('Cmd = "sleep"');
    expect(lines).toContain("JobUniverse = 5");
    expect(lines).toContain(`JobId = "${id}"`);
    // Sorted by name, ignoring case, as condor_q -l prints.
    const names = lines.map((l) => l.split(" = ")[0]!.toLowerCase());
    expect(names).toEqual([...names].sort());
    const json = JSON.parse(d.cli(["job", "info", "--classad", id, "--json"]).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ WantJobRouter: true, Project: "physics", ProcId: 0 });
  });

  it("a --classad that does not parse is refused, naming the text and the column", () => {
    const r = d.cli(["submit", "--classad", "Foo = (1 + 2", "--", "true"]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/--classad 'Foo = \(1 \+ 2': ClassAd syntax error at column 13/);
    expect(r.stdout).toBe("");
  });

  it("jobs --constraint filters with a ClassAd expression over the job ads", async () => {
    const a = d.cli(["submit", ...HOLD_LONG, "--classad", "Group = 1", "--", "true"]).stdout.trim();
    const b = d.cli(["submit", ...HOLD_LONG, "--urgency", "hold", "--classad", "Group = 2", "--", "true"]).stdout.trim();
    await waitFor(() => d.job(b)?.state === "SCHED" || d.job(b)?.state === "PRIORITY", 20_000, "second job pending");
    const ids = (expr: string): string[] =>
      (JSON.parse(d.cli(["jobs", "-a", "--json", "--constraint", expr]).stdout) as Array<{ id: string }>).map((j) => j.id);
    expect(ids("Group == 2")).toEqual([b]);
    expect(ids("Group =?= 1")).toEqual([a]);
    expect(ids("JobStatus == 5 && HoldReasonCode == 15")).toEqual([b]);
    expect(ids("Group > 0").sort()).toEqual([a, b].sort());
    const bad = d.cli(["jobs", "--constraint", "Group =="]);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/constraint 'Group ==': ClassAd syntax error at 1:9/);
  });

  it("submit --slot pins a job to its slot; ads shows the slot ads like condor_status", async () => {
    const id = d.cli(["submit", ...HOLD_LONG, "--slot", "2", "--", "true"]).stdout.trim();
    await waitFor(() => d.job(id)?.state === "RUN", 20_000, "pinned job running");
    const two = d.cli(["ads", "--slot", "2", "-l"]);
    expect(two.status).toBe(0);
    const lines = two.stdout.trimEnd().split("\n");
    expect(lines).toContain("SlotID = 2");
    expect(lines).toContain('State = "Claimed"');
    expect(lines).toContain('Activity = "Busy"');
    expect(lines).toContain("Cpus = 2");
    expect(lines).toContain(`JobIds = "${id}"`);
    const table = d.cli(["ads"]).stdout.trimEnd().split("\n");
    expect(table[0]).toMatch(/^Name\s+OpSys\s+Arch\s+State\s+Activity\s+LoadAv\s+Mem\s+Cpus\s+Start\s+Rank$/);
    expect(table).toHaveLength(3);
    expect(table[2]).toMatch(/^slot2@\S+\s.*Claimed\s+Busy/);
    const machine = JSON.parse(d.cli(["ads", "--machine", "--json"]).stdout) as Array<Record<string, unknown>>;
    expect(machine).toHaveLength(1);
    expect(machine[0]).toMatchObject({ MyType: "Machine", TotalCpus: 4, TotalSlots: 2 });
    const missing = d.cli(["ads", "--slot", "9"]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/no slot 9 on this host/);
    const bad = d.cli(["submit", "--slot", "3", "--", "true"]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/attributes\.system\.slot: no slot 3 on this host \(it has slots 1-2\)/);
  });
});

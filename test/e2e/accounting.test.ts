/**
 * The accounting plugin end to end: loaded from the daemon's config, driven by
 * `jobtap account` and `jobtap submit --bank` through the real socket.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { daemonForSuite, waitFor } from "./harness.js";

const CONFIG = `[job-manager]
plugins = [ { load = "accounting" } ]

[accounting]
recompute-period = "1s"
`;

describe("jobtap account", { timeout: 90_000 }, () => {
  const d = daemonForSuite((daemon) => {
    const file = join(daemon.statedir, "accounting.toml");
    writeFileSync(file, CONFIG);
    return ["--config", file];
  });

  it("builds a tree, holds a job over a running limit, shows usage, exports and imports", async () => {
    const refused = d.cli(["submit", "true"]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("has no accounting association");
    expect(d.cli(["account", "add-bank", "top"])).toMatchObject({ status: 0, stderr: "" });
    expect(d.cli(["account", "add-bank", "lab", "--parent", "top", "--shares", "2"]).status).toBe(0);
    expect(d.cli(["account", "add-bank", "ops", "--parent", "top"]).status).toBe(0);
    expect(d.cli(["account", "add-user", "root", "--bank", "lab", "--max-running-jobs", "1"]).status).toBe(0);
    expect(d.cli(["account", "add-user", "0", "--bank", "ops"]).status).toBe(0);
    const bad = d.cli(["account", "add-bank", "x", "--parent", "top", "--shares", "0"]);
    expect(bad).toMatchObject({ status: 1 });
    expect(bad.stderr).toContain("shares: must be an integer > 0, got 0");
    expect(d.cli(["account", "edit-bank", "top", "--parent", "lab"]).stderr).toContain('"top" is the root bank and cannot move');

    const exec = ["--setattr", "exec.test.run_duration=1s"];
    const a = d.submit(["--bank", "lab", "--setattr", "exec.test.run_duration=6s", "true"]);
    const b = d.submit(["--bank", "lab", ...exec, "true"]);
    const c = d.submit(["--bank", "ops", ...exec, "true"]);
    await waitFor(() => d.job(a)?.state === "RUN" || d.job(a)?.state === "INACTIVE", 20_000, "the first lab job to run");
    expect(d.job(b)?.state).toBe("DEPEND");
    const query = JSON.parse(d.cli(["plugin", "query", "accounting"]).stdout) as { jobs: Record<string, { held?: string }> };
    expect(Object.values(query.jobs).some((j) => j.held === "accounting: max-running-jobs of user 0 in bank lab")).toBe(true);
    await waitFor(() => [a, b, c].every((id) => d.job(id)?.state === "INACTIVE"), 30_000, "every job to finish");

    const show = d.cli(["account", "show"]);
    expect(show.status).toBe(0);
    expect(show.stdout.split("\n")[0]).toMatch(/^ACCOUNT\s+SHARES\s+NORM\s+USAGE\s+FAIRSHARE\s+RUN\s+ACTIVE\s+LIMITS$/);
    expect(show.stdout).toMatch(/\n  lab\s+2\s+0\.6667 /);
    expect(show.stdout).toMatch(/\n    root\s+1\s+0\.6667\s+\d+\s+\d\.\d{4}\s+0\s+0\s+max-running-jobs=1\n/);
    const usage = JSON.parse(d.cli(["account", "usage", "root", "--json"]).stdout) as { associations: Array<{ bank: string; coreSeconds: number }> };
    expect(usage.associations.map((x) => x.bank)).toEqual(["lab", "ops"]);
    expect(usage.associations[0]!.coreSeconds).toBeGreaterThan(1);

    const exported = d.cli(["account", "export"]).stdout;
    expect(exported).toContain('[[banks]]\nname = "top"');
    expect(exported).toContain('user = "root"');
    const file = join(d.statedir, "more.toml");
    writeFileSync(file, `${exported}\n[[banks]]\nname = "new"\nparent = "top"\nshares = 5\n`);
    expect(d.cli(["account", "import", file])).toMatchObject({ status: 0, stderr: "" });
    expect(d.cli(["account", "show", "--json"]).stdout).toContain('"name": "new"');
    expect(readFileSync(file, "utf8")).toContain("max-running-jobs = 1");
  });
});

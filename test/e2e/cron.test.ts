/**
 * condor-cron through the real daemon: a pasted HTCondor config section loaded by name, the
 * probe's attributes in `jobtap ads`, `jobtap cron list` (table and --json), and a config
 * reload adding a job from the edited file.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonUnderTest, requireBuild, waitFor } from "./harness.js";

describe("condor-cron from the command line", { timeout: 90_000 }, () => {
  let d: DaemonUnderTest;
  let dir: string;
  let cronFile: string;

  const slotAds = () => JSON.parse(d.cli(["ads", "--json"]).stdout) as Array<Record<string, unknown>>;

  beforeAll(async () => {
    requireBuild();
    d = new DaemonUnderTest();
    dir = mkdtempSync(join(tmpdir(), "jobtap-cron-e2e-"));
    const probe = join(dir, "gpu_probe");
    writeFileSync(probe, '#!/bin/sh\necho "GpuHealthy = true"\necho "GpuCount = 2"\necho "- update:true"\n');
    chmodSync(probe, 0o755);
    cronFile = join(dir, "50-cron");
    writeFileSync(cronFile, `STARTD_CRON_JOBLIST = gpu\nSTARTD_CRON_GPU_EXECUTABLE = ${probe}\nSTARTD_CRON_GPU_PERIOD = 1h\n`);
    const file = join(d.statedir, "jobtap.toml");
    writeFileSync(file, `[job-manager]\nplugins = [{ load = "condor-cron", conf = { condor_config = ${JSON.stringify(cronFile)} } }]\n`);
    await d.start(["--config", file]);
  }, 60_000);
  afterAll(async () => {
    await d?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it("publishes the probe's attributes into the slot ads and lists the job", async () => {
    await waitFor(() => slotAds()[0]?.GpuHealthy === true, 30_000, "GpuHealthy in the slot ad");
    expect(slotAds()[0]).toMatchObject({ GpuHealthy: true, GpuCount: 2 });
    const json = JSON.parse(d.cli(["cron", "list", "--json"]).stdout) as { jobs: Array<Record<string, unknown>> };
    expect(json.jobs[0]).toMatchObject({ manager: "startd", name: "gpu", mode: "Periodic", period: 3600, last_exit: "exited with status 0", runs: 1 });
    expect(json.jobs[0]!.last_output_bytes).toBe(45);
    const table = d.cli(["cron", "list"]);
    expect(table.status).toBe(0);
    const [head, row] = table.stdout.trimEnd().split("\n");
    expect(head).toMatch(/^MANAGER +NAME +MODE +PERIOD +STATE +LAST-RUN +LAST-EXIT +NEXT-RUN +OUTPUT$/);
    expect(row).toMatch(/^startd +gpu +Periodic +3600s +idle +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +exited with status 0 +\d{4}-.*Z +45B$/);
  });

  it("a config reload re-reads the pasted file: a new job starts, a bad one is reported with file:line", async () => {
    const probe2 = join(dir, "load_probe");
    writeFileSync(probe2, '#!/bin/sh\necho "SiteLoad = 0.5"\n');
    chmodSync(probe2, 0o755);
    writeFileSync(
      cronFile,
      `STARTD_CRON_JOBLIST = gpu load bad\nSTARTD_CRON_GPU_EXECUTABLE = ${join(dir, "gpu_probe")}\nSTARTD_CRON_GPU_PERIOD = 1h\n` +
        `STARTD_CRON_LOAD_EXECUTABLE = ${probe2}\nSTARTD_CRON_LOAD_MODE = OneShot\nSTARTD_CRON_BAD_EXECUTABLE = /bin/true\nSTARTD_CRON_BAD_MODE = Hourly\n`,
    );
    expect(d.cli(["config", "reload"]).status).toBe(0);
    await waitFor(() => slotAds()[0]?.SiteLoad === 0.5, 30_000, "SiteLoad in the slot ad");
    const table = d.cli(["cron", "list"]).stdout;
    expect(table).toContain(`skipped: startd cron job bad: STARTD_CRON_bad_MODE = Hourly (${cronFile}:7) is not Periodic, WaitForExit, OneShot or OnDemand`);
    expect(slotAds()[0]).toMatchObject({ GpuHealthy: true });
  });

  it("an unknown cron subcommand prints the usage", () => {
    const r = d.cli(["cron", "bogus"]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("usage: jobtap cron list [--json]");
  });
});

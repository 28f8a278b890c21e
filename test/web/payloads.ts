/**
 * What the browser tests feed the daemon: the XSS payloads, a real condor-cron probe script
 * (its published attribute and its output carry a payload) and a condor-router route.
 */
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const P1 = "<script>alert(1)</script>";
export const P2 = '"><img src=x onerror=alert(1)>';

/** Writes the probe and the HTCondor config files under `top`; returns the plugins' TOML. */
export function setupFiles(top: string): string {
  const probe = join(top, "motd_probe");
  // Hook output: a ClassAd string attribute holding markup, published into the slot ad.
  writeFileSync(probe, `#!/bin/sh\necho 'Motd = "${P1}"'\necho "WebProbe = 42"\n`);
  chmodSync(probe, 0o755);
  const cron = join(top, "50-cron");
  writeFileSync(cron, `STARTD_CRON_JOBLIST = motd\nSTARTD_CRON_MOTD_EXECUTABLE = ${probe}\nSTARTD_CRON_MOTD_PERIOD = 1h\n`);
  const router = join(top, "60-router");
  writeFileSync(router, [
    "JOB_ROUTER_SOURCE_JOB_CONSTRAINT = WantJobRouter",
    "JOB_ROUTER_POLLING_PERIOD = 1",
    "JOB_ROUTER_ROUTE_NAMES = Spill",
    "JOB_ROUTER_ROUTE_Spill @=rt",
    "MaxIdleJobs = 2",
    "SET Spilled = true",
    "@rt",
    "",
  ].join("\n"));
  return `[resources]\ncores = 2\n[job-manager]\nplugins = [\n  { load = "condor-cron", conf = { condor_config = ${JSON.stringify(cron)} } },\n  { load = "condor-router", conf = { condor_config = ${JSON.stringify(router)} } },\n]\n`;
}

/**
 * `jobtap daemon --log-file FILE`: the log goes to FILE (appended, created 0600, nothing on
 * stderr) and FILE is reopened on SIGHUP, as logrotate's "rename, then signal" needs.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, DaemonUnderTest, requireBuild, waitFor } from "./harness.js";

describe("daemon --log-file", { timeout: 90_000 }, () => {
  let d: DaemonUnderTest;
  let logFile: string;

  beforeAll(async () => {
    requireBuild();
    d = new DaemonUnderTest();
    logFile = join(d.statedir, "jobtap.log");
    writeFileSync(join(d.statedir, "jobtap.toml"), "[resources]\ncores = 1\n");
    // An earlier run's line: appending must keep it.
    writeFileSync(logFile, "an earlier line\n", { mode: 0o600 });
  }, 60_000);
  afterAll(async () => {
    await d?.dispose();
  });

  it("appends the daemon's log to FILE and nothing to stderr", async () => {
    await d.start(["--log-file", logFile, "--config", join(d.statedir, "jobtap.toml")]);
    const id = d.submit(["--wait", "--", "true"]);
    expect(id).not.toBe("");
    const text = readFileSync(logFile, "utf8");
    expect(text.startsWith("an earlier line\n")).toBe(true);
    expect(text).toMatch(/jobtap\[\d+\] info: ready: socket /);
    expect(d.log).toBe("");
  });

  it("reopens FILE on SIGHUP: the rotated file keeps the old lines, the new file gets the rest", async () => {
    const rotated = `${logFile}.1`;
    renameSync(logFile, rotated);
    d.hup();
    await waitFor(() => existsSync(logFile) && readFileSync(logFile, "utf8").includes("reloaded"), 20_000, "the reload line in the new log file");
    expect(statSync(logFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(rotated, "utf8")).toMatch(/info: ready: /);
    expect(readFileSync(rotated, "utf8")).not.toMatch(/reloaded/);
    expect(await d.stop()).toBe(0);
    expect(readFileSync(logFile, "utf8")).toMatch(/info: store flushed and closed; stopped\n$/);
    expect(d.log).toBe("");
  });

  it("creates FILE mode 0600", async () => {
    const fresh = join(d.statedir, "fresh.log");
    await d.start(["--log-file", fresh]);
    expect(statSync(fresh).mode & 0o777).toBe(0o600);
    expect(await d.stop()).toBe(0);
    expect(readFileSync(fresh, "utf8")).toMatch(/info: ready: /);
  });

  it("refuses a FILE it cannot open, naming it", () => {
    const bad = join(d.statedir, "no-such-dir", "jobtap.log");
    const r = spawnSync(process.execPath, [BIN, "daemon", "--statedir", d.statedir, "--log-file", bad], { encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`--log-file ${bad}: cannot open for appending (ENOENT)`);
  });
});

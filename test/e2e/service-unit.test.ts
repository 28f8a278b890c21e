/**
 * contrib/jobtap.service (issue 34): systemd's own checker accepts it without a single
 * warning, and its commands work against the real daemon: ExecStart's arguments start it
 * (paths moved under a temp root), ExecReload reloads it, KillSignal stops it cleanly.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, ROOT, requireBuild, waitFor } from "./harness.js";

const UNIT = join(ROOT, "contrib", "jobtap.service");
const TMP = mkdtempSync(join(tmpdir(), "jobtap-unit-"));

/** Each `Key=value` line of the unit by section, comments dropped. */
function directives(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let section = "";
  for (const line of text.split("\n")) {
    if (/^\s*(#|;|$)/.test(line)) continue;
    const head = /^\[(\w+)\]$/.exec(line);
    if (head) section = head[1] ?? "";
    else {
      const eq = line.indexOf("=");
      out.set(`${section}.${line.slice(0, eq)}`, line.slice(eq + 1));
    }
  }
  return out;
}

const text = readFileSync(UNIT, "utf8");
const unit = directives(text);
const execStart = (unit.get("Service.ExecStart") ?? "").split(" ");
const hasAnalyze = spawnSync("systemd-analyze", ["--version"]).status === 0;

describe("contrib/jobtap.service", { timeout: 60_000 }, () => {
  afterAll(() => rmSync(TMP, { recursive: true, force: true }));

  it.skipIf(!hasAnalyze)("passes systemd-analyze verify with no warning", () => {
    // The only change: ExecStart's binary is this checkout's (verify wants an executable).
    const copy = join(TMP, "jobtap.service");
    writeFileSync(copy, text.replace(`ExecStart=${execStart[0]} `, `ExecStart=${BIN} `));
    const r = spawnSync("systemd-analyze", ["verify", copy], { encoding: "utf8" });
    expect({ status: r.status, out: r.stdout + r.stderr }).toEqual({ status: 0, out: "" });
  });

  it("uses the site paths: statedir and socket directories are the ones systemd creates", () => {
    expect(execStart.slice(1)).toEqual([
      "daemon", "--config", "/etc/jobtap/jobtap.toml", "--statedir", "/var/lib/jobtap", "--socket", "/run/jobtap/jobtap.sock",
    ]);
    expect(unit.get("Service.StateDirectory")).toBe("jobtap");
    expect(unit.get("Service.RuntimeDirectory")).toBe("jobtap");
    // SIGTERM to the daemon only: jobs are settled by the daemon, not signalled by systemd.
    expect(unit.get("Service.KillMode")).toBe("mixed");
    // Above the default shutdown-timeout (30s) plus the daemon's cleanup grace (10s).
    expect(Number(/^(\d+)s$/.exec(unit.get("Service.TimeoutStopSec") ?? "")?.[1])).toBeGreaterThan(40);
  });

  it("ExecStart starts the real daemon, ExecReload reloads it, KillSignal stops it cleanly", async () => {
    requireBuild();
    // The unit's absolute paths, moved under TMP; systemd would create the two directories.
    const at = (p: string) => (p.startsWith("/") ? join(TMP, p) : p);
    mkdirSync(at("/etc/jobtap"), { recursive: true });
    mkdirSync(at("/run/jobtap"), { recursive: true });
    writeFileSync(at("/etc/jobtap/jobtap.toml"), "[resources]\ncores = 1\n");
    const args = execStart.slice(1).map(at);
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "ignore", "pipe"], env: { PATH: process.env.PATH } });
    let log = "";
    child.stderr.on("data", (d) => (log += d.toString()));
    const closed = new Promise<number | null>((r) => child.once("close", (code) => r(code)));
    try {
      await waitFor(() => log.includes("info: ready: socket"), 30_000, "the daemon to be ready");
      expect(existsSync(at("/run/jobtap/jobtap.sock"))).toBe(true);
      expect(existsSync(at("/var/lib/jobtap/jobtap.db"))).toBe(true);
      const reload = (unit.get("Service.ExecReload") ?? "").replace("$MAINPID", String(child.pid)).split(" ");
      expect(spawnSync(reload[0] ?? "", reload.slice(1)).status).toBe(0);
      await waitFor(() => log.includes("reloaded"), 20_000, "the reload");
      child.kill((unit.get("Service.KillSignal") ?? "") as NodeJS.Signals);
      expect(await closed).toBe(0);
      expect(log).toMatch(/info: store flushed and closed; stopped\n$/);
    } finally {
      child.kill("SIGKILL");
    }
  });
});

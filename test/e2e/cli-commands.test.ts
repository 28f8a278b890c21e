/**
 * Issue 32's CLI items against the real daemon: cancel --all, wait --all, jobs' default
 * count, job output / attach, version, the default queue's stop/start, and the plugin
 * loader's exported names, syntax-error positions and log prefixes.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, daemonForSuite, waitFor, type DaemonUnderTest } from "./harness.js";

/** `jobtap ARGS` in the background, its stderr readable while it runs. */
function background(d: DaemonUnderTest, args: string[]) {
  const c = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, JOBTAP_SOCKET: d.socket } });
  const run = { stderr: "", stdout: "", done: undefined as unknown as Promise<number> };
  c.stdout.on("data", (b) => (run.stdout += b));
  c.stderr.on("data", (b) => (run.stderr += b));
  run.done = new Promise((resolve) => c.on("close", (code) => resolve(code ?? -1)));
  return run;
}

const HOLD = ["--urgency", "hold"];

describe("cancel --all, wait --all, jobs --count, job output", { timeout: 120_000 }, () => {
  const d = daemonForSuite();
  const active = () => d.jobs().filter((j) => j.state !== "INACTIVE");

  it("cancel --all cancels all of your active jobs and says how many; IDs and --all are exclusive", () => {
    const ids = d.submit(["--cc", "1-3", ...HOLD, "true"]).split("\n");
    expect(d.cli(["cancel", "--all", ids[0] as string])).toMatchObject({ status: 2, stderr: "jobtap cancel: give job IDs or --all, not both\n" });
    expect(d.cli(["cancel", "--user", "all"])).toMatchObject({ status: 2, stderr: "jobtap cancel: --user needs --all\n" });
    expect(d.cli(["cancel", "--all"])).toMatchObject({ status: 0, stderr: "canceled 3 jobs\n" });
    expect(active()).toEqual([]);
    for (const id of ids) expect(d.job(id)).toMatchObject({ result: "CANCELED" });
    expect(d.cli(["cancel", "--all", "--user=all"])).toMatchObject({ status: 0, stderr: "canceled 0 jobs\n" });
  });

  it("wait --all waits for every active job of yours and exits non-zero when one failed", async () => {
    // Held, so they are still active when wait --all lists them; released once it waits.
    const ok = d.submit([...HOLD, "true"]);
    const bad = d.submit([...HOLD, "sh", "-c", "exit 3"]);
    const waiting = background(d, ["wait", "--all", "-v"]);
    // -v says how many jobs it waits for once it has listed them: only then release them.
    await waitFor(() => waiting.stderr.includes("waiting for 2 jobs\n"), 30_000, "wait --all to list the jobs");
    for (const id of [ok, bad]) expect(d.cli(["urgency", id, "default"]).status).toBe(0);
    expect(await waiting.done).toBe(3);
    expect(waiting.stderr).toBe(`waiting for 2 jobs\n${ok}: COMPLETED\n${bad}: FAILED (exit 3)\n`);
    expect(d.job(ok)).toMatchObject({ result: "COMPLETED" });
    expect(d.cli(["wait", "--all"])).toMatchObject({ status: 0, stderr: "" });
    expect(d.cli(["wait", "--all", ok])).toMatchObject({ status: 2, stderr: "jobtap wait: give job IDs or --all, not both\n" });
    expect(active()).toEqual([]);
  });

  it("jobs lists at most 1000 jobs unless -c/--count says otherwise; -c 0 lists them all", () => {
    const ids = d.submit(["--cc", "1-1005", ...HOLD, "true"]).split("\n");
    const count = (args: string[]) => (JSON.parse(d.cli(["jobs", "--json", ...args]).stdout) as unknown[]).length;
    expect(count([])).toBe(1000);
    expect(count(["-c", "7"])).toBe(7);
    expect(count(["--count=0"])).toBe(1005);
    expect(d.cli(["jobs", "-n"]).stdout.trim().split("\n")).toHaveLength(1000);
    expect(d.cli(["jobs", "-c", "-1"])).toMatchObject({ status: 2, stderr: "jobtap jobs: --count: must be 0 (no limit) or more, got -1\n" });
    expect(d.cli(["cancel", ...ids]).status).toBe(0);
  });

  it("job output prints what a job wrote; job attach follows it and exits with its status", async () => {
    const id = d.submit(["sh", "-c", "echo out1; echo err1 >&2; exit 4"]);
    await waitFor(() => d.job(id)?.state === "INACTIVE", 30_000, "the job to end");
    expect(d.cli(["job", "output", id])).toEqual({ status: 0, stdout: "out1\n", stderr: "err1\n" });
    const running = d.submit(["sh", "-c", "echo a; sleep 0.3; echo b; exit 5"]);
    expect(d.cli(["job", "attach", running])).toEqual({ status: 5, stdout: "a\nb\n", stderr: "" });
    expect(d.cli(["job", "output", "-f", running])).toMatchObject({ status: 0, stdout: "a\nb\n" });
    const unknown = d.cli(["job", "output", "ƒ2222222222"]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/^jobtap job: cannot read ƒ2222222222's stdout: .*unknown job/);
  });

  it("version and --version print the package's version", () => {
    const v = d.cli(["version"]);
    expect(v).toMatchObject({ status: 0, stdout: expect.stringMatching(/^jobtap \d+\.\d+\.\d+/) });
    expect(d.cli(["--version"]).stdout).toBe(v.stdout);
  });

  it("plugin load names a JS plugin's syntax error FILE:LINE:COL, and lists a plugin by its exported name", () => {
    const bad = join(d.statedir, "broken.mjs");
    const line3 = "  p.on('job.new', () => { return x +; });";
    writeFileSync(bad, `export default (p) => {\n  const x = 1;\n${line3}\n};\n`);
    const r = d.cli(["plugin", "load", bad]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`jobtap plugin: ${bad}:3:${line3.indexOf(";") + 1}: Unexpected token ';'\n`);
    const named = join(d.statedir, "fair-1.mjs");
    writeFileSync(named, 'export default { name: "fair", setup: (p) => p.on("plugin.query", () => ({ mine: true })) };\n');
    expect(d.cli(["plugin", "load", named])).toMatchObject({ status: 0, stderr: "" });
    expect(d.cli(["plugin", "list"]).stdout).toBe("fair\n");
    expect(JSON.parse(d.cli(["plugin", "query", "fair"]).stdout)).toMatchObject({ name: "fair", path: named, mine: true });
    expect(d.cli(["plugin", "remove", "fa*"])).toMatchObject({ status: 0, stderr: "" });
    expect(d.cli(["plugin", "list"]).stdout).toBe("");
  });

  it("logs a plugin's message with its name once", async () => {
    const path = join(d.statedir, "says.mjs");
    writeFileSync(path, 'export default { name: "says", setup: (p) => p.log.warn("hello from setup") };\n');
    expect(d.cli(["plugin", "load", path]).status).toBe(0);
    await waitFor(() => d.log.includes("hello from setup"), 30_000, "the plugin's log line");
    expect(d.log).toMatch(/warn: says: hello from setup\n/);
    expect(d.cli(["plugin", "remove", "says"]).status).toBe(0);
  });

  it("queue stop/start/disable/enable act on the default queue when no queues are configured", async () => {
    expect(d.cli(["queue", "stop", "-m", "maintenance"])).toMatchObject({ status: 0, stderr: "" });
    expect(d.cli(["queue", "status"]).stdout).toBe("Job submission is enabled\nScheduling is stopped: maintenance\n");
    const id = d.submit(["true"]);
    await waitFor(() => d.job(id)?.state === "SCHED", 30_000, "the job to reach SCHED");
    expect(d.cli(["queue", "stop", "batch"])).toMatchObject({ status: 1, stderr: expect.stringContaining('unknown queue "batch" (no named queues are configured') });
    expect(d.cli(["queue", "start"]).status).toBe(0);
    expect(d.cli(["wait", id]).status).toBe(0);
    expect(d.cli(["queue", "disable", "-m", "closed"]).status).toBe(0);
    expect(d.cli(["submit", "true"])).toMatchObject({ status: 1, stderr: expect.stringContaining("job submission is disabled: closed") });
    expect(d.cli(["queue", "enable"]).status).toBe(0);
    expect(d.cli(["queue", "list"]).stdout).toBe("QUEUE    EN ST\ndefault  ✔  ✔\n");
    expect(d.cli(["submit", "--wait", "true"]).status).toBe(0);
  });
});

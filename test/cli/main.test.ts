import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CliIO } from "../../src/cli/io.js";
import { runCli } from "../../src/cli/main.js";

const dir = mkdtempSync(join(tmpdir(), "jobtap-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = {
    stdin: process.stdin,
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env: { JOBTAP_STATEDIR: dir, ...env },
    cwd: dir,
  };
  const status = await runCli(argv, io);
  return { status, stdout: out.join(""), stderr: err.join("") };
}

describe("jobtap dispatcher", () => {
  it("rejects an unknown command with a usage error", async () => {
    expect(await run(["frobnicate"])).toEqual({
      status: 2,
      stdout: "",
      stderr: 'jobtap: unknown command "frobnicate" (try: jobtap --help)\n',
    });
  });

  it("rejects an unknown option, naming the subcommand and the option", async () => {
    const r = await run(["jobs", "--colour"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe("jobtap jobs: unknown option --colour\n");
  });

  it("rejects an id that does not parse before contacting any daemon", async () => {
    const r = await run(["cancel", "not-a-job-id!"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^jobtap cancel: .*not-a-job-id!/);
  });

  it("says where it looked when no daemon is running", async () => {
    const r = await run(["jobs"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      `jobtap jobs: cannot reach the jobtap daemon: is the daemon running? tried ${join(dir, "jobtap.sock")}\n`,
    );
    const viaOption = await run(["--socket", "/nonexistent/x.sock", "jobs"]);
    expect(viaOption.stderr).toContain("tried /nonexistent/x.sock");
    const viaEnv = await run(["jobs"], { JOBTAP_SOCKET: "/nonexistent/y.sock" });
    expect(viaEnv.stderr).toContain("tried /nonexistent/y.sock");
  });

  it("accepts --socket after the command too, but never inside submit's command line", async () => {
    expect((await run(["jobs", "--socket", "/nonexistent/a.sock"])).stderr).toContain("tried /nonexistent/a.sock");
    expect((await run(["plugin", "list", "--socket=/nonexistent/b.sock"])).stderr).toContain("tried /nonexistent/b.sock");
    expect((await run(["--socket", "/nonexistent/x.sock", "jobs", "--socket", "/nonexistent/c.sock"])).stderr).toContain(
      "tried /nonexistent/c.sock",
    );
    const submitted = await run(["submit", "-n", "1", "--socket", "/nonexistent/d.sock", "echo", "--socket", "x"]);
    expect(submitted.stderr).toContain("tried /nonexistent/d.sock");
    // After COMMAND, `--socket` is an argument of the job's command: the default socket is used.
    const inCommand = await run(["submit", "echo", "--socket", "/nonexistent/e.sock"]);
    expect(inCommand.stderr).toContain(`tried ${join(dir, "jobtap.sock")}`);
    expect((await run(["jobs", "--socket"])).status).toBe(2);
  });

  it("prints help listing the subcommands", async () => {
    const r = await run(["--help"]);
    expect(r.status).toBe(0);
    for (const name of ["submit", "jobs", "eventlog", "plugin", "config", "daemon"]) expect(r.stdout).toContain(`  ${name}`);
  });

  it("refuses submit without a command and bad resource counts", async () => {
    expect((await run(["submit"])).stderr).toBe("jobtap submit: no COMMAND given (or use --jobspec FILE)\n");
    expect((await run(["submit", "-n", "0", "true"])).stderr).toBe("jobtap submit: --ntasks must be at least 1, got 0\n");
    expect((await run(["submit", "--urgency", "40", "true"])).stderr).toBe('jobtap submit: --urgency "40": expected 0..31, hold, expedite or default\n');
  });
});

describe("--help on every command, and --version", () => {
  const commands = async () =>
    (await run(["--help"])).stdout
      .split("commands:\n")[1]!
      .split("\n\n")[0]!
      .split("\n")
      .map((l) => l.trim().split(/\s+/)[0]!);

  it("every listed command (and a subcommand form) prints its usage on stdout and exits 0", async () => {
    const names = await commands();
    expect(names).toContain("daemon");
    for (const name of names) {
      // submit's first positional starts the job's command line: `submit ls --help` runs it.
      const forms = name === "submit" ? [[name, "--help"], [name, "-h"]] : [[name, "--help"], [name, "-h"], [name, "sub", "--help"]];
      for (const argv of forms) {
        const r = await run(argv);
        expect({ argv, status: r.status, stderr: r.stderr }).toEqual({ argv, status: 0, stderr: "" });
        expect(r.stdout).toContain(`usage: jobtap ${name}`);
      }
    }
  });

  it("--help after `--` belongs to the job's command line, not to jobtap", async () => {
    const r = await run(["submit", "--socket", "/nonexistent/c.sock", "--", "ls", "--help"]);
    expect(r.stderr).toContain("tried /nonexistent/c.sock");
  });

  it("prints the package version", async () => {
    const r = await run(["--version"]);
    expect(r).toEqual({ status: 0, stdout: expect.stringMatching(/^jobtap \d+\.\d+\.\d+\n$/), stderr: "" });
  });
});

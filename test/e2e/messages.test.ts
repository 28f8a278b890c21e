/**
 * Messages that say what went wrong: a job whose process cannot start (a missing working
 * directory, a missing command) under `submit --wait`, and a time limit given the wrong way.
 */
import { describe, expect, it } from "vitest";
import { daemonForSuite } from "./harness.js";

describe("messages from submit", { timeout: 60_000 }, () => {
  const d = daemonForSuite();

  it("submit --wait says why a job could not run: a missing --cwd, a missing command", () => {
    const cwd = d.cli(["submit", "--wait", "--cwd", "/nonexistent/dir", "true"]);
    expect(cwd.status).not.toBe(0);
    expect(cwd.stderr).toMatch(/^ƒ\w+: FAILED \(exec: task 0: cannot execute "true": working directory "\/nonexistent\/dir" does not exist\)\n$/);
    const cmd = d.cli(["submit", "--wait", "no-such-command-here"]);
    expect(cmd.status).not.toBe(0);
    expect(cmd.stderr).toMatch(/^ƒ\w+: FAILED \(exec: task 0: cannot execute "no-such-command-here": .*ENOENT\)\n$/);
    // A job that runs and exits non-zero is not an error of jobtap's: nothing extra is said.
    expect(d.cli(["submit", "--wait", "false"])).toMatchObject({ status: 1, stderr: "" });
  });

  it("a duration set with --setattr is checked as -t is", () => {
    expect(d.cli(["submit", "-t", "-5", "true"]).status).not.toBe(0);
    for (const bad of ["-5", "abc"]) {
      const r = d.cli(["submit", "--setattr", `duration=${bad}`, "true"]);
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(
        `jobtap submit: jobspec: attributes.system.duration: must be a number of seconds >= 0 (0: no limit), got ${JSON.stringify(bad === "-5" ? -5 : bad)}\n`,
      );
    }
  });
});

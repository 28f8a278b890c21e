/**
 * `jobtap job kill` and `jobtap job purge` against the real daemon: a real process gets the
 * signal (its trap records it), bad input gets a clear message, and the daemon carries on.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { daemonForSuite, waitFor } from "./harness.js";

describe("job kill / job purge / submit --watch", { timeout: 90_000 }, () => {
  const d = daemonForSuite();

  const submit = (args: string[]): string => d.submit(args);

  it("kill -s USR1 reaches the job's process; bad signals and states are refused clearly", async () => {
    const ready = join(d.statedir, "ready");
    const got = join(d.statedir, "got");
    const script = `trap 'echo USR1 > ${got}; exit 3' USR1; touch ${ready}; while :; do sleep 0.05; done`;
    const id = submit(["sh", "-c", script]);
    await waitFor(() => existsSync(ready), 30_000, "the job's trap to be set");
    expect(d.cli(["job", "kill", "-s", "FOO", id])).toMatchObject({ status: 2, stderr: expect.stringContaining('invalid signal "FOO"') });
    expect(d.cli(["job", "kill", "-s", "99", id]).stderr).toContain('invalid signal "99"');
    expect(d.cli(["job", "kill", "-s", "usr1", id])).toMatchObject({ status: 0, stderr: "" });
    await waitFor(() => d.job(id)?.state === "INACTIVE", 30_000, "the job to end");
    expect(readFileSync(got, "utf8")).toBe("USR1\n");
    expect(d.job(id)).toMatchObject({ result: "FAILED", waitstatus: 3 << 8 });
    const late = d.cli(["job", "kill", id]);
    expect(late.status).toBe(1);
    expect(late.stderr).toMatch(/job is inactive/);
    const held = submit(["--urgency", "0", "true"]);
    expect(d.cli(["job", "kill", held]).stderr).toMatch(new RegExp(`job ${held}: job is not running`));
    d.cli(["cancel", held]);
  });

  it("submit --watch copies the job's stdout and stderr while it runs, then exits with its status", () => {
    const r = d.cli(["submit", "--watch", "sh", "-c", "echo out1; echo err1 >&2; sleep 0.3; echo out2; exit 3"]);
    const [id, ...out] = r.stdout.split("\n");
    expect(id).toMatch(/^ƒ/);
    expect(out.join("\n")).toBe("out1\nout2\n");
    expect(r.stderr).toBe("err1\n");
    expect(r.status).toBe(3);
    const quiet = d.cli(["submit", "--watch", "--setattr", "exec.test.run_duration=0.2s", "true"]);
    expect(quiet).toMatchObject({ status: 0, stderr: "" });
    expect(quiet.stdout.trim().split("\n")).toHaveLength(1);
  });

  it("a job killed by a signal is shown as such everywhere; one that never started has TIME -", async () => {
    const w = d.cli(["submit", "--wait", "sh", "-c", "kill -TERM $$"]);
    const id = w.stdout.trim();
    expect(w).toMatchObject({ status: 143, stderr: `${id}: FAILED (killed by SIGTERM)\n` });
    expect(d.cli(["wait", id])).toMatchObject({ status: 143, stderr: `${id}: FAILED (killed by SIGTERM)\n` });
    const watched = d.cli(["submit", "--watch", "sh", "-c", "kill -KILL $$"]);
    expect(watched.status).toBe(137);
    expect(watched.stderr).toBe(`${watched.stdout.trim()}: FAILED (killed by SIGKILL)\n`);
    const row = d.cli(["jobs", "-a", "-o", "{id} {status} {returncode} {info}"]).stdout.split("\n").find((l) => l.startsWith(id));
    expect(row).toBe(`${id} F -15 killed by SIGTERM`);
    const info = JSON.parse(d.cli(["job", "info", id, "job"]).stdout) as Record<string, unknown>;
    expect(info).toMatchObject({ result: "FAILED", waitstatus: 15, returncode: -15 });
    // An exec exception after alloc, before any start (Flux's testexec mock_exception=init).
    const missing = d.cli(["submit", "--wait", "--setattr", "exec.test.mock_exception=init", "true"]).stdout.trim();
    expect(d.cli(["eventlog", missing]).stdout).toMatch(/ alloc[\s\S]* exception/);
    const time = d.cli(["jobs", "-a", "-o", "{id} {runtime}"]).stdout.split("\n").find((l) => l.startsWith(missing));
    expect(time).toBe(`${missing} -`);
  });

  it("purge: a dry run by default, --force drops the oldest inactive jobs; active jobs are refused", async () => {
    const before = d.jobs().filter((j) => j.state === "INACTIVE").length;
    for (let i = 0; i < 3; i++) d.cli(["submit", "--wait", "--setattr", "exec.test.run_duration=0s", "true"]);
    const inactive = () => d.jobs().filter((j) => j.state === "INACTIVE").map((j) => j.id as string);
    expect(inactive()).toHaveLength(before + 3);
    expect(d.cli(["job", "purge", "--num-limit=1"]).stdout).toBe(`use --force to purge ${before + 2} inactive jobs\n`);
    expect(inactive()).toHaveLength(before + 3);
    const newest = inactive()[0];
    expect(d.cli(["job", "purge", "--num-limit=1", "--force"]).stdout).toBe(`purged ${before + 2} inactive jobs\n`);
    expect(inactive()).toEqual([newest]);
    const pending = submit(["--urgency", "0", "true"]);
    const r = d.cli(["job", "purge", "--force", pending]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`job ${pending}: cannot purge an active job (SCHED)`);
    expect(d.cli(["job", "purge"]).stderr).toContain("usage: jobtap job purge");
    expect(d.cli(["job", "purge", "--age-limit=soon"]).stderr).toContain("--age-limit");
    d.cli(["cancel", pending]);
    expect(d.cli(["jobs"]).status).toBe(0);
  });
});

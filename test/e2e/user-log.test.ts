/**
 * `jobtap submit --log FILE` against the real daemon: FILE is relative to the submit
 * directory, and the daemon writes HTCondor's event log there (read back by HTCondor's rules).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { daemonForSuite, waitFor } from "./harness.js";
import { parseUserLog } from "../builtins/userlog-parse.js";

describe("submit --log", { timeout: 90_000 }, () => {
  const d = daemonForSuite();

  it("writes the job's user log relative to the submit directory: submit, execute, terminated with the exit code", async () => {
    const sub = join(d.statedir, "work");
    mkdirSync(sub, { recursive: true });
    const r = d.cli(["submit", "--log", "logs.d/../job.log", "sh", "-c", "exit 7"], { cwd: sub });
    expect(r.stderr).toBe("");
    const id = r.stdout.trim();
    const path = join(sub, "job.log");
    await waitFor(() => d.job(id)?.state === "INACTIVE" && existsSync(path) && readFileSync(path, "utf8").includes("Job terminated."), 30_000, "the job to end");
    const events = parseUserLog(readFileSync(path, "utf8"));
    expect(events.map((e) => e.event)).toEqual([0, 1, 5]);
    expect(events[2]!.body[0]).toBe("\t(1) Normal termination (return value 7)");
    const cluster = /^ClusterId = (\d+)$/m.exec(d.cli(["job", "info", "--classad", id]).stdout)?.[1];
    expect(events.every((e) => String(e.cluster) === cluster && e.proc === 0 && e.subproc === 0)).toBe(true);
  });
});

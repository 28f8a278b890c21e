/**
 * Dependencies, begin-time and queue limits through `bin/jobtap submit` against the real
 * daemon: the command-line forms (`--dependency=singleton`, `afterok:ID`, `--begin-time`,
 * `-t` with `--queue`) reach the builtins and their refusals come back named.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonUnderTest, requireBuild, waitFor } from "./harness.js";

const CONFIG = `[resources]
cores = 4
[queues.batch]
[queues.debug.policy.limits]
duration = "1h"
[policy.jobspec.defaults.system]
queue = "batch"
`;

describe("dependencies and limits from the command line", { timeout: 90_000 }, () => {
  let d: DaemonUnderTest;

  beforeAll(async () => {
    requireBuild();
    d = new DaemonUnderTest();
    writeFileSync(join(d.statedir, "c.toml"), CONFIG);
    await d.start(["--config", join(d.statedir, "c.toml")]);
  }, 60_000);
  afterAll(async () => {
    await d?.dispose();
  });

  const submit = (args: string[]): string[] => {
    const r = d.cli(["submit", ...args]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    return r.stdout.trim().split("\n");
  };
  const events = (id: string) =>
    d.cli(["eventlog", "--json", id]).stdout.trim().split("\n").map((l) => JSON.parse(l) as { name: string; timestamp: number });

  it("--dependency=singleton runs a --cc chain strictly one after another, in order", async () => {
    const ids = submit(["--cc", "1-4", "--job-name", "chain", "--dependency=singleton", "--setattr", "exec.test.run_duration=0.05s", "true"]);
    expect(ids).toHaveLength(4);
    await waitFor(() => ids.every((id) => d.job(id)?.state === "INACTIVE"), 30_000, "the chain to finish");
    const spans = ids.map((id) => {
      const ev = events(id);
      return { alloc: ev.find((e) => e.name === "alloc")!.timestamp, free: ev.find((e) => e.name === "free")!.timestamp };
    });
    for (let i = 1; i < spans.length; i++) expect(spans[i]!.alloc).toBeGreaterThanOrEqual(spans[i - 1]!.free);
    const missingName = d.cli(["submit", "--dependency=singleton", "true"]);
    expect(missingName).toMatchObject({ status: 1, stderr: "jobtap submit: singleton jobs require a job name\n" });
  });

  it("afterok on a job that fails ends the dependent with a fatal dependency exception", async () => {
    // Held (urgency 0) until the dependent is in, so it cannot end first however slow the CLI.
    const [failing] = submit(["--urgency=0", "--setattr", "exec.test.wait_status=256", "false"]);
    const [dependent] = submit([`--dependency=afterok:${failing}`, "true"]);
    expect(d.cli(["urgency", failing!, "16"]).status).toBe(0);
    await waitFor(() => d.job(dependent!)?.state === "INACTIVE", 30_000, "the dependent to end");
    expect(d.job(dependent!)).toMatchObject({
      result: "FAILED",
      exception: { type: "dependency", severity: 0, note: `dependency after-success=${failing} can never be satisfied` },
    });
    expect(events(dependent!).map((e) => e.name)).not.toContain("alloc");
    const late = d.cli(["submit", `--dependency=afterok:${failing}`, "true"]);
    expect(late).toMatchObject({ status: 1, stderr: `jobtap submit: afterok: job ${failing} failed or was canceled\n` });
    expect(d.cli(["submit", "--dependency=afterok:nope", "true"]).stderr).toBe(
      'jobtap submit: dependency: afterok: "nope" is not a valid jobid\n',
    );
  });

  it("two afterany and an afterok dependency: the job waits for all three, then runs", async () => {
    const [a, b, c] = [submit(["--urgency=0", "true"])[0]!, submit(["--urgency=0", "true"])[0]!, submit(["--urgency=0", "true"])[0]!];
    const [y] = submit([`--dependency=afterany:${a}`, `--dependency=afterany:${b}`, `--dependency=afterok:${c}`, "true"]);
    expect(d.cli(["urgency", a, "16"]).status).toBe(0);
    await waitFor(() => d.job(a)?.state === "INACTIVE", 30_000, "the first antecedent to end");
    expect(d.job(y!)).toMatchObject({ state: "DEPEND" });
    expect(d.cli(["urgency", b, "16"]).status).toBe(0);
    expect(d.cli(["urgency", c, "16"]).status).toBe(0);
    await waitFor(() => d.job(y!)?.state === "INACTIVE", 30_000, "the dependent to end");
    expect(d.job(y!)).toMatchObject({ result: "COMPLETED" });
    expect(events(y!).filter((e) => e.name === "dependency-remove")).toHaveLength(3);
  });

  it("a request the 4-core pool could never satisfy is refused at submit", () => {
    expect(d.cli(["submit", "-n", "100", "true"])).toMatchObject({
      status: 1,
      stderr: "jobtap submit: unsatisfiable request: 100 cores requested, 4 available\n",
    });
  });

  it("--begin-time holds the job in DEPEND, shown as begin@ in jobs; a bad time is refused", () => {
    const [later] = submit(["--begin-time=+1h", "true"]);
    expect(d.job(later!)).toMatchObject({ state: "DEPEND", dependencies: [expect.stringMatching(/^begin-time=\d+\.\d{3}$/)] });
    expect(d.cli(["jobs", "-n", "-o", "{id} {info}"]).stdout).toMatch(new RegExp(`${later} begin time not reached: \\d{4}-`));
    expect(d.cli(["submit", "--dependency=begin-time:12x", "true"])).toMatchObject({
      status: 1,
      stderr: "jobtap submit: Invalid begin-time=12x\n",
    });
    d.cli(["cancel", later!]);
  });

  it("-t 2h on a queue limited to 1h is refused naming the queue; an unknown queue first", () => {
    expect(d.cli(["submit", "-t", "2h", "--queue", "debug", "true"])).toMatchObject({
      status: 1,
      stderr: "jobtap submit: requested duration (2h) exceeds policy limit of 1h for queue debug\n",
    });
    expect(d.cli(["submit", "--queue", "nope", "true"]).stderr).toBe('jobtap submit: queue "nope" does not exist\n');
    const [ok] = submit(["-t", "30m", "--queue", "debug", "true"]);
    expect(ok).toMatch(/^ƒ/);
  });
});

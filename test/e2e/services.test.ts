/**
 * Plugin services end to end through `bin/jobtap`: `plugin call`, and the commands built on
 * the builtin services: `queue` (.update-queue), `history` (.history), `post-event`
 * (.post-event).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { daemonForSuite, waitFor } from "./harness.js";

const TEST_EXEC = ["--setattr", "exec.test.run_duration=0.01s"];
const CONFIG = `[queues.batch]
[queues.debug]
[policy.jobspec.defaults.system]
queue = "batch"
`;

describe("plugin services from the command line", { timeout: 90_000 }, () => {
  const d = daemonForSuite((daemon) => {
    const file = join(daemon.statedir, "queues.toml");
    writeFileSync(file, CONFIG);
    return ["--config", file];
  });
  const submit = (args: string[]): string => d.submit(args);

  it("plugin call reaches a service and prints its JSON; errors name the service", () => {
    const r = d.cli(["plugin", "call", "update-queue", "status"]);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      queues: { batch: { enabled: true, started: true }, debug: { enabled: true, started: true } },
    });
    const bad = d.cli(["plugin", "call", "update-queue", "nope"]);
    expect(bad).toMatchObject({ status: 1, stderr: "jobtap plugin: update-queue.nope: no such service\n" });
    expect(d.cli(["plugin", "call", "update-queue", "stop", "{oops"]).status).toBe(2);
  });

  it("queue disable/enable/stop/start, as flux queue", async () => {
    expect(d.cli(["queue", "list"]).stdout).toBe("QUEUE   EN ST\nbatch*  ✔  ✔\ndebug   ✔  ✔\n");
    expect(d.cli(["queue", "disable", "debug", "-m", "maintenance"]).status).toBe(0);
    expect(d.cli(["queue", "status", "debug"]).stdout).toBe(
      "debug: Job submission is disabled: maintenance\ndebug: Scheduling is started\n",
    );
    const refused = d.cli(["submit", "--queue", "debug", "true"]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("job submission to debug is disabled: maintenance");
    expect(d.cli(["queue", "enable", "debug"]).status).toBe(0);

    expect(d.cli(["queue", "stop", "batch", "-m", "draining"]).status).toBe(0);
    expect(d.cli(["queue", "list"]).stdout).toBe("QUEUE   EN ST\nbatch*  ✔  ✗\ndebug   ✔  ✔\n");
    const held = submit([...TEST_EXEC, "true"]);
    const ran = submit(["--queue", "debug", ...TEST_EXEC, "true"]);
    await waitFor(() => d.job(ran)?.state === "INACTIVE", 20_000, "the debug job to finish");
    // Pending, never scheduled, while its queue is stopped (SCHED without an alloc request).
    expect(["PRIORITY", "SCHED"]).toContain(d.job(held)?.state);
    // As flux queue: with named queues a change names its queue or says --all.
    expect(d.cli(["queue", "start"])).toMatchObject({ status: 2, stderr: "jobtap queue: named queues are configured: give a QUEUE or --all\n" });
    expect(d.cli(["queue", "start", "--all"]).status).toBe(0);
    await waitFor(() => d.job(held)?.result === "COMPLETED", 20_000, "the batch job after start");

    const unknown = d.cli(["queue", "stop", "gpu"]);
    expect(unknown).toMatchObject({ status: 1, stderr: 'jobtap queue: unknown queue "gpu" (configured: batch, debug)\n' });
  });

  it("history lists the caller's jobs newest first, with a slice", () => {
    const a = submit(["--urgency", "hold", "true"]);
    const b = submit(["--urgency", "hold", "true"]);
    const all = d.cli(["history"]).stdout.trim().split("\n");
    expect(all.slice(0, 2)).toEqual([b, a]);
    expect(d.cli(["history", "[:1]"]).stdout).toBe(`${b}\n`);
    d.cli(["cancel", a, b]);
  });

  it("post-event appends an event with its context; bad input is named", async () => {
    const id = submit(["--urgency", "hold", "true"]);
    expect(d.cli(["post-event", id, "checkpoint", '{"step": 3}'])).toMatchObject({ status: 0, stderr: "" });
    const names = d.cli(["eventlog", "--json", id]).stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(names.at(-1)).toMatchObject({ name: "checkpoint", context: { step: 3 } });
    expect(d.cli(["post-event", id, "x", "[1]"])).toMatchObject({ status: 2 });
    d.cli(["cancel", id]);
    await waitFor(() => d.job(id)?.state === "INACTIVE", 20_000, "the job to end");
    const late = d.cli(["post-event", id, "checkpoint"]);
    expect(late.status).toBe(1);
    expect(late.stderr).toBe(`jobtap post-event: plugin .post-event: service post: job ${id} is inactive\n`);
  });
});

describe("plugin load --remove", { timeout: 90_000 }, () => {
  const d = daemonForSuite((daemon) => {
    for (const n of ["a", "b", "c"]) writeFileSync(join(daemon.statedir, `${n}.mjs`), "export default () => {};\n");
    return [];
  });

  it("removes first, then loads, as flux jobtap load --remove", () => {
    expect(d.cli(["plugin", "load", "a.mjs"]).status).toBe(0);
    expect(d.cli(["plugin", "load", "b.mjs"]).status).toBe(0);
    expect(d.cli(["plugin", "load", "--remove=all", "c.mjs"])).toMatchObject({ status: 0, stderr: "" });
    expect(d.cli(["plugin", "list"]).stdout).toBe("c.mjs\n");
    // Reloading a plugin under the same name: remove it first.
    expect(d.cli(["plugin", "load", "c.mjs"]).status).toBe(1);
    expect(d.cli(["plugin", "load", "-r", "c.mjs", "c.mjs", "x=1"]).status).toBe(0);
    expect(JSON.parse(d.cli(["plugin", "query", "c.mjs"]).stdout).name).toBe("c.mjs");
    const missing = d.cli(["plugin", "load", "-r", "nope", "a.mjs"]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("nope: Failed to find plugin to remove");
    expect(d.cli(["plugin", "list"]).stdout).toBe("c.mjs\n");
  });

  it("takes --socket after the subcommand name", () => {
    const r = d.cli(["plugin", "list", "--socket", d.socket]);
    expect(r).toMatchObject({ status: 0, stdout: "c.mjs\n" });
    const wrong = d.cli(["jobs", "--socket", join(d.statedir, "nothing.sock")]);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain(`tried ${join(d.statedir, "nothing.sock")}`);
  });
});

/**
 * End to end: the real daemon (`node bin/jobtap daemon`, compiled dist/) on a temp statedir,
 * driven only through `bin/jobtap`. Conditions are polled with deadlines; no durations are
 * asserted.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, DaemonUnderTest, requireBuild, waitFor } from "./harness.js";

const TEST_EXEC = ["--setattr", "exec.test.run_duration=0.01s"];

describe("jobtap daemon end to end", { timeout: 90_000 }, () => {
  let d: DaemonUnderTest;

  beforeAll(async () => {
    requireBuild();
    // One core: a running job blocks the queue, so ordering is observable.
    d = new DaemonUnderTest();
    writeFileSync(join(d.statedir, "one-core.toml"), "[resources]\ncores = 1\n");
    await d.start(["--config", join(d.statedir, "one-core.toml")]);
  }, 60_000);
  afterAll(async () => {
    await d?.dispose();
  });

  const submit = (args: string[]): string => {
    const r = d.cli(["submit", ...args]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    return r.stdout.trim();
  };
  const state = (id: string) => d.job(id)?.state;

  it("submits, runs and completes a real process", () => {
    const out = join(d.statedir, "hello.out");
    const r = d.cli(["submit", "--wait", "--output", out, "--", "sh", "-c", "echo hello from $0", "jobtap"]);
    expect(r.status).toBe(0);
    const id = r.stdout.trim();
    expect(id).toMatch(/^ƒ[1-9A-HJ-NP-Za-km-z]+$/);
    expect(d.job(id)).toMatchObject({ id, state: "INACTIVE", result: "COMPLETED", name: "sh" });
    expect(readFileSync(out, "utf8")).toBe("hello from jobtap\n");
    const events = d.cli(["eventlog", "--json", id]).stdout.trim().split("\n").map((l) => JSON.parse(l).name);
    expect(events[0]).toBe("submit");
    expect(events).toContain("start");
    expect(events.at(-1)).toBe("clean");
    expect(d.cli(["submit", "--wait", "--", "sh", "-c", "exit 3"]).status).toBe(3);
  });

  it("cancels a running job and --follow sees it end", async () => {
    const id = submit(["sleep", "300"]);
    await waitFor(() => state(id) === "RUN", 20_000, "job to run");
    const follow = d.cliAsync(["eventlog", "--follow", id]);
    const cancel = d.cli(["cancel", id, "-m", "no longer needed"]);
    expect(cancel.status).toBe(0);
    const followed = await follow;
    expect(followed.status).toBe(0);
    expect(followed.stdout).toMatch(/exception .*type=cancel/);
    expect(followed.stdout.trim().split("\n").at(-1)).toMatch(/ clean$/);
    expect(d.job(id)).toMatchObject({ result: "CANCELED", exception: { type: "cancel", note: "no longer needed" } });
  });

  it("reorders the queue by urgency: expedite runs first, hold never runs", async () => {
    const blocker = submit(["sleep", "300"]);
    await waitFor(() => state(blocker) === "RUN", 20_000, "blocker to run");
    const a = submit([...TEST_EXEC, "true"]);
    const b = submit([...TEST_EXEC, "true"]);
    const c = submit([...TEST_EXEC, "true"]);
    expect(d.cli(["urgency", a, "hold"]).status).toBe(0);
    expect(d.cli(["urgency", c, "expedite"]).status).toBe(0);
    await waitFor(() => [a, b, c].every((id) => state(id) === "SCHED"), 20_000, "jobs to be scheduled");
    const pending = d.cli(["jobs", "--filter=pending", "-n", "-o", "{id} {priority}"]).stdout.trim().split("\n");
    expect(pending).toEqual([`${c} 4294967295`, `${b} 16`, `${a} 0`]);
    d.cli(["cancel", blocker]);
    await waitFor(() => state(b) === "INACTIVE" && state(c) === "INACTIVE", 20_000, "b and c to finish");
    expect(d.job(c)?.t_run as number).toBeLessThanOrEqual(d.job(b)?.t_run as number);
    expect(state(a)).toBe("SCHED");
    expect(d.cli(["urgency", a, "default"]).status).toBe(0);
    await waitFor(() => state(a) === "INACTIVE", 20_000, "a to run once released");
    expect(d.job(a)?.result).toBe("COMPLETED");
  });

  it("loads, lists, queries and removes a plugin at runtime", async () => {
    const dir = d.statedir;
    writeFileSync(
      join(dir, "fixed-priority.mjs"),
      `export default (p) => {
        const prio = () => ({ priority: p.conf.priority?.value ?? 1 });
        p.on("job.state.priority", prio);
        p.on("job.priority.get", prio);
        p.on("plugin.query", () => ({ conf: p.conf }));
      };\n`,
    );
    const blocker = submit(["sleep", "300"]);
    await waitFor(() => state(blocker) === "RUN", 20_000, "blocker to run");
    const waiting = submit([...TEST_EXEC, "true"]);
    await waitFor(() => d.job(waiting)?.priority === 16, 20_000, "default priority");

    const load = d.cli(["plugin", "load", "fixed-priority.mjs", "priority.value=42", "tag=e2e"], { cwd: dir });
    expect(load).toMatchObject({ status: 0, stderr: "" });
    expect(d.cli(["plugin", "list"]).stdout).toBe("fixed-priority.mjs\n");
    const listed = JSON.parse(d.cli(["plugin", "list", "--all", "--json"]).stdout) as { name: string; path: string }[];
    expect(listed).toContainEqual({ name: ".priority-default", path: "builtin" });
    expect(listed.at(-1)).toEqual({ name: "fixed-priority.mjs", path: join(dir, "fixed-priority.mjs") });
    expect(JSON.parse(d.cli(["plugin", "query", "fixed-priority.mjs"]).stdout)).toEqual({
      name: "fixed-priority.mjs",
      path: join(dir, "fixed-priority.mjs"),
      conf: { priority: { value: 42 }, tag: "e2e" },
    });
    // Loading reprioritizes every pending job (Flux's reprioritize_all after a load).
    await waitFor(() => d.job(waiting)?.priority === 42, 20_000, "the plugin's priority");

    const again = d.cli(["plugin", "load", join(dir, "fixed-priority.mjs")]);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain("fixed-priority.mjs already loaded");

    const logged = `plugin fixed-priority.mjs loaded from ${join(dir, "fixed-priority.mjs")} at runtime`;
    await waitFor(() => d.log.includes(logged), 20_000, "the load in the daemon's log");
    expect(d.cli(["plugin", "remove", "*"]).status).toBe(0);
    expect(d.cli(["plugin", "list"]).stdout).toBe("");
    const after = submit([...TEST_EXEC, "true"]);
    await waitFor(() => d.job(after)?.priority === 16, 20_000, "default priority after removal");
    const gone = d.cli(["plugin", "query", "fixed-priority.mjs"]);
    expect(gone.status).toBe(1);
    expect(gone.stderr).toContain("fixed-priority.mjs: plugin not found");
    d.cli(["cancel", blocker]);
  });

  it("answers garbage on its socket with 400 and keeps serving", async () => {
    const reply = await new Promise<string>((resolve) => {
      const s = connect(d.socket);
      let got = "";
      s.on("data", (b) => (got += b.toString()));
      s.on("close", () => resolve(got));
      s.write("\x00\x01 garbage garbage\r\n\r\n");
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect(d.cli(["jobs"]).status).toBe(0);
    await waitFor(() => d.log.includes("malformed request"), 20_000, "the garbage in the daemon's log");
  });

  it("refuses bad ids and unknown jobs with clear messages", () => {
    const bad = d.cli(["job", "info", "ƒ0OIl"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^jobtap job: .*ƒ0OIl/);
    const unknown = d.cli(["cancel", "ƒ2222222"]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/unknown job/);
  });

  it("stops quietly when its reader goes away (jobs | head)", () => {
    const ids = submit(["--cc", "1-2000", "--urgency", "hold", "true"]).split("\n");
    // Far more than a pipe buffer, so the writes after head exits hit EPIPE.
    const r = spawnSync("sh", ["-c", `"${process.execPath}" "${BIN}" jobs --json 2>"$ERR" | head -c 1 >/dev/null; cat "$ERR"`], {
      env: { ...process.env, JOBTAP_SOCKET: d.socket, ERR: join(d.statedir, "epipe.err") },
      encoding: "utf8",
    });
    expect(r.stdout).toBe("");
    expect(d.cli(["cancel", ...ids]).status).toBe(0);
  });
});

describe("daemon configuration and restart", { timeout: 90_000 }, () => {
  beforeAll(() => requireBuild());

  it("refuses a bad config, naming the TOML path, and config check agrees", async () => {
    const d = new DaemonUnderTest();
    try {
      const path = join(d.statedir, "bad.toml");
      writeFileSync(path, `[job-manager]\nplugins = [ { load = ".priority-default" }, { load = "no-such-plugin.js" } ]\n`);
      const check = d.cli(["config", "check", path]);
      expect(check.status).toBe(1);
      expect(check.stderr).toBe(`${path}: [job-manager.plugins][1].load: no-such-plugin.js: No such plugin found\n`);
      await expect(d.start(["--config", path])).rejects.toThrow(/daemon exited at start/);
      expect(d.log).toContain("[job-manager.plugins][1].load: no-such-plugin.js: No such plugin found");
    } finally {
      await d.dispose();
    }
  });

  it("recovers every acknowledged job after SIGKILL, and shuts down cleanly on SIGTERM", async () => {
    const d = new DaemonUnderTest();
    try {
      writeFileSync(join(d.statedir, "c.toml"), "[resources]\ncores = 1\n");
      await d.start(["--config", join(d.statedir, "c.toml")]);
      const done = d.cli(["submit", "--wait", ...TEST_EXEC, "true"]).stdout.trim();
      const running = d.cli(["submit", "sleep", "300"]).stdout.trim();
      await waitFor(() => d.job(running)?.state === "RUN", 20_000, "job to run");
      const batch = d.cli(["submit", "--urgency", "0", "--cc", "1-20", ...TEST_EXEC, "true"]).stdout.trim().split("\n");
      expect(batch).toHaveLength(20);
      const before = d.jobs().map((j) => j.id).sort();
      expect(before).toEqual([done, running, ...batch].sort());

      await d.kill();
      await d.start(["--config", join(d.statedir, "c.toml")]);
      const after = d.jobs();
      expect(after.map((j) => j.id).sort()).toEqual(before);
      expect(after.find((j) => j.id === done)).toMatchObject({ state: "INACTIVE", result: "COMPLETED" });
      for (const id of batch) expect(after.find((j) => j.id === id)).toMatchObject({ state: "SCHED", urgency: 0 });
      // `sleep 300` outlived the daemon: reattached, it still holds the only core until cancelled.
      expect(after.find((j) => j.id === running)).toMatchObject({ state: "RUN" });
      expect(d.cli(["cancel", running]).status).toBe(0);
      await waitFor(() => d.job(running)?.state === "INACTIVE", 20_000, "reattached job to be cancelled");
      expect(d.job(running)).toMatchObject({ result: "CANCELED" });

      // A clean stop records what happened to running jobs; the next start sees it.
      const live = d.cli(["submit", ...TEST_EXEC.slice(0, 1), "exec.test.run_duration=300s", "true"]).stdout.trim();
      await waitFor(() => ["RUN", "INACTIVE"].includes(String(d.job(live)?.state)), 20_000, "job to start");
      expect(await d.stop()).toBe(0);
      expect(d.log).toContain("store flushed and closed");
      await d.start(["--config", join(d.statedir, "c.toml")]);
      expect(d.jobs().map((j) => j.id).sort()).toEqual([...before, live].sort());
    } finally {
      await d.dispose();
    }
  });
});

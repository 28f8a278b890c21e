/**
 * Isolated plugins and the plugin trace through the real daemon and `bin/jobtap`:
 * `plugin load --isolate`, `plugin list` showing it, and `plugin trace` streaming handler
 * calls (with their OUT) and state transitions over the socket.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, daemonForSuite, waitFor, type DaemonUnderTest } from "./harness.js";

const PRIORITY_PLUGIN = `export default (p) => {
  p.on("job.state.priority", (job) => ({ priority: 77 }));
};
`;

/** A `jobtap plugin trace ARGS` running in the background; its output so far. */
class Trace {
  out = "";
  err = "";
  private readonly child: ChildProcess;
  constructor(d: DaemonUnderTest, args: string[]) {
    this.child = spawn(process.execPath, [BIN, "plugin", "trace", ...args], {
      env: { ...process.env, JOBTAP_SOCKET: d.socket, JOBTAP_STATEDIR: d.statedir },
    });
    this.child.stdout?.on("data", (b) => (this.out += b.toString()));
    this.child.stderr?.on("data", (b) => (this.err += b.toString()));
  }
  lines(): Array<Record<string, unknown>> {
    return this.out.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as Record<string, unknown>);
  }
  stop(): Promise<void> {
    const closed = new Promise<void>((r) => this.child.once("close", () => r()));
    this.child.kill("SIGTERM");
    return closed;
  }
}

/**
 * Submits jobs until `seen` holds (a trace client is live only once the daemon has its
 * request, which the CLI does not announce); returns the last job's id.
 */
async function tracedJob(d: DaemonUnderTest, seen: () => boolean): Promise<string> {
  let id = "";
  const end = Date.now() + 30_000;
  while (Date.now() < end) {
    id = d.submit(["true"]);
    try {
      await waitFor(seen, 1000, "trace records");
      return id;
    } catch {
      // not live yet: another job
    }
  }
  throw new Error("no trace records");
}

const traces: Trace[] = [];
afterEach(async () => {
  for (const t of traces.splice(0)) await t.stop();
});

describe("isolated plugins and plugin trace through the daemon", { timeout: 90_000 }, () => {
  const d = daemonForSuite((daemon) => {
    writeFileSync(join(daemon.statedir, "prio.mjs"), PRIORITY_PLUGIN);
    return [];
  });

  it("loads a plugin isolated; the trace streams its calls and the job's transitions", async () => {
    expect(d.cli(["plugin", "load", "--isolate", "prio.mjs"])).toMatchObject({ status: 0, stderr: "" });
    expect(d.cli(["plugin", "list"]).stdout).toBe("prio.mjs  (isolated)\n");
    expect(JSON.parse(d.cli(["plugin", "list", "--json"]).stdout)).toEqual([
      { name: "prio.mjs", path: join(d.statedir, "prio.mjs"), isolated: "running" },
    ]);
    const all = new Trace(d, ["--json"]);
    const mine = new Trace(d, ["--plugin", "prio.mjs", "--json"]);
    traces.push(all, mine);
    // Live from a job's entry into PRIORITY on, `all` sees that job's priority calls and
    // transitions whole (the two clients go live at different moments).
    const id = await tracedJob(d, () => all.out.includes('"state":"PRIORITY"') && mine.out.includes("job.state.priority"));
    await waitFor(() => all.lines().some((r) => r.kind === "state" && r.job === id && r.state === "INACTIVE"), 30_000, "the job to end");
    expect(all.lines()).toEqual(expect.arrayContaining([
      expect.objectContaining({ kind: "call", plugin: "prio.mjs", topic: "job.state.priority", job: id, outcome: "ok", out: { priority: 77 }, async: true }),
      expect.objectContaining({ kind: "call", plugin: ".priority-default", topic: "job.state.priority", job: id }),
      { kind: "state", job: id, prev: "PRIORITY", state: "SCHED", event: "priority" },
      { kind: "state", job: id, prev: "CLEANUP", state: "INACTIVE", event: "clean" },
    ]));
    // --plugin keeps that plugin's calls only: no other plugin, no transitions.
    expect(mine.lines().length).toBeGreaterThan(0);
    expect(mine.lines().every((r) => r.kind === "call" && r.plugin === "prio.mjs")).toBe(true);
    expect(d.job(id)?.priority).toBe(77);
  });

  it("prints readable lines without --json, and refuses a bad job id", async () => {
    const t = new Trace(d, ["--topic", "job.state.*"]);
    traces.push(t);
    const id = await tracedJob(d, () => /ms prio\.mjs job\.state\.priority \S+ ok \{"priority":77\}/.test(t.out));
    expect(t.out).toMatch(new RegExp(`ms prio\\.mjs job\\.state\\.priority ${id} ok`));
    expect(t.out).not.toMatch(/job\.validate/);
    const bad = d.cli(["plugin", "trace", "--job", "nope"]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/invalid job id "nope"/);
  });
});

/**
 * Issue 31, what guests see of others (following Flux): a job's eventlog, jobspec and ad
 * are for its own user and the instance owner; another guest sees what `jobs` lists. Two
 * real guests (jtsrv2 submits, jtsrv3 pries) against the owner's daemon (this process).
 * Also issue 32: `plugin list` is owner-only, as `flux jobtap list` is.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDaemon, type DaemonClient } from "../../src/server/client.js";
import { startDaemon, type Daemon } from "../../src/server/daemon.js";
import { requireBuild, ROOT } from "./harness.js";
import { jobtapAs, realUser, scriptAs, type User } from "./users.js";

const alice = realUser("jtsrv2");
const mallory = realUser("jtsrv3");
const SECRET = "TOKEN-b7e1";

describe.skipIf(!alice || !mallory)("security: what a guest sees of another user's jobs", { timeout: 60_000 }, () => {
  const a = alice as User;
  const m = mallory as User;
  let top: string;
  let socket: string;
  let daemon: Daemon;
  let owner: DaemonClient;
  let id: string;

  beforeAll(async () => {
    requireBuild();
    top = mkdtempSync(join(tmpdir(), "jobtap-srv-vis-"));
    chmodSync(top, 0o755);
    mkdirSync(join(top, "pub"), { mode: 0o755 });
    socket = join(top, "pub", "jobtap.sock");
    const config = join(top, "jobtap.toml");
    writeFileSync(config, `[daemon]\nguests = true\nsocket = ${JSON.stringify(socket)}\n`);
    daemon = await startDaemon({ statedir: join(top, "state"), configPath: config, env: {}, log: () => undefined });
    owner = connectDaemon(socket);
    // Alice's job carries a token on its command line and runs until cancelled.
    const r = await jobtapAs(a, socket, ["submit", "--setattr", "exec.test.run_duration=1h", "--job-name", "alices", "echo", SECRET]);
    expect(r.stderr).toBe("");
    id = r.stdout.trim();
  });
  afterAll(async () => {
    owner?.close();
    await daemon?.shutdown("test");
    rmSync(top, { recursive: true, force: true });
  });

  it("another guest gets PERMISSION_DENIED for the jobspec, eventlog and job ad, and never the token", async () => {
    for (const args of [["job", "info", id], ["job", "info", id, "job"], ["eventlog", id], ["eventlog", "--follow", id], ["eventlog", "--path", "exec", id], ["job", "info", "--classad", id]]) {
      const r = await jobtapAs(m, socket, args);
      expect({ args, status: r.status }).toEqual({ args, status: 1 });
      expect(r.stderr).toMatch(/only its user and the instance owner may read/);
      expect(r.stdout + r.stderr).not.toContain(SECRET);
    }
    // Its own user and the instance owner may.
    expect((await jobtapAs(a, socket, ["job", "info", id, "jobspec"])).stdout).toContain(SECRET);
    expect((await jobtapAs(a, socket, ["job", "info", "--classad", id])).stdout).toContain(SECRET);
    expect(JSON.stringify((await owner.call("info", { id })).jobspec)).toContain(SECRET);
    expect((await owner.call("eventlog", { id })).eventlog.map((e) => e.name)).toContain("submit");
    // The exec eventlog (issue 32) follows the same rule.
    expect((await jobtapAs(a, socket, ["eventlog", "--path", "exec", id])).status).toBe(0);
    expect((await owner.call("eventlog", { id, path: "exec" })).eventlog).toEqual([]);
  });

  it("`jobs` shows another guest the job's listing, and a constraint never matches another user's job", async () => {
    const listed = await jobtapAs(m, socket, ["jobs", "-A", "--json"]);
    const jobs = JSON.parse(listed.stdout) as Array<{ id: string; userid: number; name: string }>;
    expect(jobs.find((j) => j.id === id)).toMatchObject({ userid: a.uid, name: "alices" });
    expect(listed.stdout).not.toContain(SECRET);
    // A probe of the command line through a constraint: others' jobs are not evaluated.
    for (const constraint of [`regexp("TOKEN", Arguments)`, "true"]) {
      const probe = await jobtapAs(m, socket, ["jobs", "-A", "--json", "--constraint", constraint]);
      expect(probe.stderr).toBe("");
      expect((JSON.parse(probe.stdout) as Array<{ id: string }>).map((j) => j.id)).not.toContain(id);
    }
    // The job's own user (and the owner) may select it by its attributes.
    const own = await jobtapAs(a, socket, ["jobs", "--json", "--constraint", `regexp("TOKEN", Arguments)`]);
    expect((JSON.parse(own.stdout) as Array<{ id: string }>).map((j) => j.id)).toContain(id);
    expect((await owner.call("list", { constraint: `regexp("TOKEN", Arguments)` })).jobs.map((j) => j.id)).toContain(id);
  });

  it("plugin list is the instance owner's, as `flux jobtap list` is", async () => {
    const r = await jobtapAs(m, socket, ["plugin", "list"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("plugin list: only the instance owner may list plugins");
    const raw = await scriptAs(m, `
      const { connectDaemon } = await import(${JSON.stringify(join(ROOT, "dist/src/server/client.js"))});
      const c = connectDaemon(${JSON.stringify(socket)});
      try { await c.call("plugin.list", { all: true }); console.log("listed"); } catch (e) { console.log(e.code); }
      c.close();`);
    expect(raw.stdout.trim()).toBe("PERMISSION_DENIED");
    expect((await owner.call("plugin.list", { all: true })).plugins.map((p) => p.name)).toContain(".priority-default");
  });
});

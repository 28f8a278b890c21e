/**
 * The daemon runs as this process's user (root here); a second, real Unix user is the guest
 * and runs the real CLI. Created with useradd when running as root; skipped otherwise.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDaemon, type DaemonClient } from "../../src/server/client.js";
import { startDaemon, type Daemon } from "../../src/server/daemon.js";
import { BIN, requireBuild, ROOT } from "./harness.js";

const GUEST_NAME = "jobtapguest";

/** The guest's uid and gid, creating the user if needed; undefined if we cannot. */
function guestUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = () => spawnSync("id", ["-u", GUEST_NAME], { encoding: "utf8" });
  if (id().status !== 0) {
    const made = spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", GUEST_NAME], { encoding: "utf8" });
    if (made.status !== 0) return undefined;
  }
  const uid = Number(id().stdout.trim());
  const gid = Number(spawnSync("id", ["-g", GUEST_NAME], { encoding: "utf8" }).stdout.trim());
  return Number.isInteger(uid) ? { uid, gid } : undefined;
}

const guest = guestUser();
if (!guest) console.warn("security tests skipped: they need root (to create and become a second user)");

describe.skipIf(!guest)("security: a guest user against the owner's daemon", () => {
  const g = guest as { uid: number; gid: number };
  let top: string;
  let socket: string;
  let daemon: Daemon;
  let owner: DaemonClient;

  /** Runs `jobtap ARGS` (or a node script) as the guest user, a real second uid. Async: the
   *  daemon lives in this process. */
  const asGuest = (args: string[], script?: string) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const argv = script === undefined ? [BIN, ...args] : ["--input-type=module", "-e", script];
      const c = spawn(process.execPath, argv, {
        uid: g.uid,
        gid: g.gid,
        cwd: "/",
        env: { PATH: process.env.PATH, JOBTAP_SOCKET: socket, HOME: "/" },
      });
      let stdout = "";
      let stderr = "";
      c.stdout.on("data", (d) => (stdout += d));
      c.stderr.on("data", (d) => (stderr += d));
      c.on("close", (status) => resolve({ status, stdout, stderr }));
    });

  beforeAll(async () => {
    requireBuild();
    top = mkdtempSync(join(tmpdir(), "jobtap-sec-"));
    const pub = join(top, "pub");
    mkdirSync(pub);
    chmodSync(top, 0o755);
    chmodSync(pub, 0o755);
    socket = join(pub, "jobtap.sock");
    const config = join(top, "jobtap.toml");
    writeFileSync(config, `[daemon]\nguests = true\nsocket = ${JSON.stringify(socket)}\n`);
    writeFileSync(join(pub, "x.mjs"), "export default () => {};\n");
    daemon = await startDaemon({ statedir: join(top, "state"), configPath: config, env: {}, log: () => undefined });
    owner = connectDaemon(socket);
  });
  afterAll(async () => {
    owner?.close();
    await daemon?.shutdown("test");
    rmSync(top, { recursive: true, force: true });
  });

  it("a guest may not load or remove plugins or reload the config; the owner's queue keeps working", async () => {
    const load = await asGuest(["plugin", "load", join(top, "pub", "x.mjs")]);
    expect(load.status).toBe(1);
    expect(load.stderr).toContain("plugin load: only the instance owner may load plugins");
    const remove = await asGuest(["plugin", "remove", ".priority-default"]);
    expect(remove.stderr).toContain("plugin remove: only the instance owner may remove plugins");
    const reload = await asGuest(["config", "reload"]);
    expect(reload.stderr).toContain("config reload: only the instance owner may reload the configuration");
    expect((await owner.call("plugin.list", { all: true })).plugins.map((p) => p.name)).toContain(".priority-default");
    expect((await owner.call("plugin.list", {})).plugins.map((p) => p.name)).not.toContain("x.mjs");
  });

  it("a guest's jobs carry the guest's uid, whatever a request claims", async () => {
    const submitted = await asGuest(["submit", "--setattr", "exec.test.run_duration=0", "true"]);
    expect(submitted.stderr).toBe("");
    const id = submitted.stdout.trim();
    expect((await owner.call("info", { id })).job.userid).toBe(g.uid);
    // A raw request naming uid 0 in its body: the daemon takes the uid from the proof.
    const forged = await asGuest([], `
      const { connectDaemon } = await import(${JSON.stringify(join(ROOT, "dist/src/server/client.js"))});
      const c = connectDaemon(${JSON.stringify(socket)});
      const r = await c.call("submit", { userid: 0, jobspecs: [${JSON.stringify(testJobspec())}] });
      console.log(r.ids[0]); c.close();`);
    expect(forged.stderr).toBe("");
    expect((await owner.call("info", { id: forged.stdout.trim() })).job.userid).toBe(g.uid);
    // No proof at all: refused.
    const bare = await asGuest([], `
      const http = await import("node:http");
      const req = http.request({ socketPath: ${JSON.stringify(socket)}, method: "POST", path: "/v1/submit" }, (res) => {
        let t = ""; res.on("data", (d) => (t += d)); res.on("end", () => console.log(res.statusCode, t));
      });
      req.end(JSON.stringify({ userid: 0, jobspecs: [${JSON.stringify(testJobspec())}] }));`);
    expect(bare.stdout).toMatch(/^401 .*NOT_AUTHENTICATED/);
  });

  it("a job's environment is shown to the job's own user only (the instance owner sees it redacted)", async () => {
    const spec = testJobspec({ SECRET_TOKEN: "owner-secret" });
    const { ids: [mine] } = await owner.call("submit", { jobspecs: [spec] });
    // A guest may not read another user's jobspec at all (security-visibility.test.ts).
    const seen = await asGuest(["job", "info", mine as string, "jobspec"]);
    expect(seen.status).toBe(1);
    expect(seen.stdout + seen.stderr).not.toContain("owner-secret");
    expect(JSON.stringify((await owner.call("info", { id: mine as string })).jobspec)).toContain("owner-secret");
    // And the other way round: the guest's own secret is the guest's.
    const theirs = await asGuest(["submit", "--env", "-*", "--env", "GUEST_SECRET=guest-secret", "--setattr", "exec.test.run_duration=0", "true"]);
    const gid = theirs.stdout.trim();
    expect((await asGuest(["job", "info", gid, "jobspec"])).stdout).toContain("guest-secret");
    expect(JSON.stringify((await owner.call("info", { id: gid })).jobspec)).not.toContain("guest-secret");
  });

  it("every statedir file and the auth directory are owner-only; guests can write proofs, not read them", async () => {
    const state = join(top, "state");
    await owner.call("submit", { jobspecs: [testJobspec()] });
    daemon.manager.flush();
    expect(statSync(state).mode & 0o777).toBe(0o700);
    for (const f of ["jobtap.db", "jobtap.db-wal", "jobtap.db-shm", "jobtap.lock"]) {
      expect({ f, mode: statSync(join(state, f)).mode & 0o777 }).toEqual({ f, mode: 0o600 });
    }
    expect(statSync(`${socket}.auth`).mode & 0o7777).toBe(0o1733);
    const list = await asGuest([], `import("node:fs").then((fs) => console.log(fs.readdirSync(${JSON.stringify(`${socket}.auth`)})))`);
    expect(list.stderr).toContain("EACCES");
  });
});

describe.skipIf(!guest)("security: the statedir", () => {
  const g = guest as { uid: number; gid: number };

  it("an existing 0755 statedir and 0644 store files are tightened to owner-only", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jobtap-sec-state-"));
    try {
      const first = await startDaemon({ statedir: dir, env: {}, log: () => undefined });
      await first.shutdown("test");
      chmodSync(dir, 0o755);
      chmodSync(join(dir, "jobtap.db"), 0o644);
      const log: string[] = [];
      const d = await startDaemon({ statedir: dir, env: {}, log: (l) => log.push(l) });
      await d.shutdown("test");
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      expect(statSync(join(dir, "jobtap.db")).mode & 0o777).toBe(0o600);
      expect(log.join("\n")).toContain("was mode 755; tightened to 700");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a statedir owned by someone else is refused, naming its owner", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jobtap-sec-state-"));
    try {
      chownSync(dir, g.uid, g.gid);
      await expect(startDaemon({ statedir: dir, env: {}, log: () => undefined })).rejects.toThrow(
        `statedir ${dir} is owned by uid ${g.uid}, not by the daemon's user (uid 0); refusing to use it`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function testJobspec(environment: Record<string, string> = {}) {
  return {
    version: 1,
    resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
    tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
    attributes: { system: { duration: 0, cwd: "/tmp", environment, exec: { test: { run_duration: "100s" } } } },
  };
}

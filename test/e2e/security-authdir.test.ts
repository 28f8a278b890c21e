/**
 * Issue 31, the auth directory: a daemon run as a service user (a real uid, jtsrv1) with
 * guests, and a guest (jtsrv2) that fills the 1733 auth directory with things the daemon's
 * user cannot delete. Shutdown must still settle jobs, close the store and exit; the next
 * start must not be refused; the daemon must never recurse into what a guest made.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, requireBuild, waitFor } from "./harness.js";
import { jobtapAs, realUser, scriptAs, type User } from "./users.js";

const service = realUser("jtsrv1");
const guest = realUser("jtsrv2");

describe.skipIf(!service || !guest)("security: the auth directory against a guest", { timeout: 120_000 }, () => {
  const svc = service as User;
  const g = guest as User;
  let top: string;
  let pub: string;
  let socket: string;
  let daemon: ChildProcess | undefined;
  let log = "";

  /** Starts `jobtap daemon` as the service user; resolves once it answers. */
  const start = async () => {
    const child = spawn(process.execPath, [BIN, "daemon", "--statedir", join(top, "state"), "--config", join(top, "jobtap.toml")], {
      uid: svc.uid,
      gid: svc.gid,
      cwd: "/",
      stdio: ["ignore", "ignore", "pipe"],
      env: { PATH: process.env.PATH ?? "", HOME: "/" },
    });
    let exited = false;
    const from = log.length;
    child.once("exit", () => (exited = true));
    child.stderr?.on("data", (d) => (log += d));
    daemon = child;
    await waitFor(() => exited || log.slice(from).includes("ready:"), 30_000, "daemon to start");
    return exited ? "exited" : "ready";
  };
  /** SIGTERM, and the exit status once the daemon is gone (null: it hung). */
  const stop = async (): Promise<number | null> => {
    const child = daemon as ChildProcess;
    daemon = undefined;
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    child.kill("SIGTERM");
    const hung = new Promise<null>((r) => setTimeout(() => r(null), 30_000).unref());
    const status = await Promise.race([exited, hung]);
    if (status === null) child.kill("SIGKILL");
    return status;
  };

  beforeAll(() => {
    requireBuild();
    top = mkdtempSync(join(tmpdir(), "jobtap-srv-"));
    chmodSync(top, 0o755);
    pub = join(top, "pub");
    mkdirSync(pub, { mode: 0o755 });
    chownSync(pub, svc.uid, svc.gid);
    mkdirSync(join(top, "state"), { mode: 0o700 });
    chownSync(join(top, "state"), svc.uid, svc.gid);
    socket = join(pub, "jobtap.sock");
    writeFileSync(join(top, "jobtap.toml"), `[daemon]\nguests = true\nsocket = ${JSON.stringify(socket)}\n`, { mode: 0o644 });
  });
  afterAll(async () => {
    if (daemon) await stop();
    rmSync(top, { recursive: true, force: true });
  });

  it("a guest's undeletable subdirectory neither hangs shutdown nor blocks the next start, and is never entered", async () => {
    expect(await start()).toBe("ready");
    const running = await jobtapAs(svc, socket, ["submit", "--setattr", "exec.test.run_duration=1h", "true"]);
    expect(running.stderr).toBe("");
    const id = running.stdout.trim();
    // The guest makes auth/sub/kept (sub 0755: the service user cannot delete inside it) and
    // a symlink to a directory of the service user's that the guest cannot write.
    const auth = `${socket}.auth`;
    mkdirSync(join(pub, "victim"), { mode: 0o755 });
    writeFileSync(join(pub, "victim", "keep"), "the service user's\n");
    chownSync(join(pub, "victim"), svc.uid, svc.gid);
    chownSync(join(pub, "victim", "keep"), svc.uid, svc.gid);
    const planted = await scriptAs(g, `
      const fs = await import("node:fs");
      fs.mkdirSync(${JSON.stringify(join(auth, "sub"))});
      fs.writeFileSync(${JSON.stringify(join(auth, "sub", "kept"))}, "guest's\\n");
      fs.chmodSync(${JSON.stringify(join(auth, "sub"))}, 0o755);
      fs.symlinkSync(${JSON.stringify(join(pub, "victim"))}, ${JSON.stringify(join(auth, "link"))});
      fs.writeFileSync(${JSON.stringify(join(auth, "plain"))}, "a stray proof\\n");`);
    expect(planted.stderr).toBe("");

    expect(await stop()).toBe(0);
    expect(log).toContain("store flushed and closed; stopped");
    expect(log).toMatch(/auth directory .*left 2 entries that are not regular files in place/);
    // Never entered, never followed; the stray regular file is gone.
    expect(existsSync(join(auth, "sub", "kept"))).toBe(true);
    expect(existsSync(join(pub, "victim", "keep"))).toBe(true);
    expect(existsSync(join(auth, "plain"))).toBe(false);

    // The next start takes the directory over; the running job was cancelled at shutdown.
    expect(await start()).toBe("ready");
    const job = await jobtapAs(svc, socket, ["jobs", "-a", "--json"]);
    const jobs = JSON.parse(job.stdout) as Array<{ id: string; state: string; result?: string }>;
    expect(jobs.find((j) => j.id === id)).toMatchObject({ state: "INACTIVE", result: "CANCELED" });
    // Guests still authenticate after the takeover.
    expect(await jobtapAs(g, socket, ["jobs"])).toMatchObject({ status: 0, stderr: "" });
    expect(await stop()).toBe(0);
  });
});

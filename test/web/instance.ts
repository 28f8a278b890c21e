/**
 * A real daemon for the browser tests: its own process (`jobtap daemon` from dist/, so it
 * serves the built dist/web) on a world-searchable directory so real guest users reach its
 * socket, with the HTTP listener on 127.0.0.1 port 0 and the plugins a test names.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectDaemon, type DaemonClient } from "../../src/server/client.js";
import { BIN, requireBuild, waitFor } from "../e2e/harness.js";
import { listenerUrl } from "../e2e/http-util.js";
import { jobtapAs, type User } from "../e2e/users.js";

export interface Instance {
  top: string;
  socket: string;
  daemon: ChildProcess;
  owner: DaemonClient;
  url: string;
  log: string;
}

/** Starts a daemon with `toml(top)` after its [daemon] table (`daemonToml` goes inside it). */
export async function instance(toml: (top: string) => string = () => "", daemonToml = ""): Promise<Instance> {
  requireBuild();
  const top = mkdtempSync(join(tmpdir(), "jobtap-web-"));
  chmodSync(top, 0o755);
  mkdirSync(join(top, "pub"), { mode: 0o755 });
  const socket = join(top, "pub", "jobtap.sock");
  const config = join(top, "jobtap.toml");
  writeFileSync(config, `[daemon]\nguests = true\nsocket = ${JSON.stringify(socket)}\nhttp = "127.0.0.1:0"\n${daemonToml}\n${toml(top)}`);
  const inst = { top, socket, log: "" } as Instance;
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  inst.daemon = spawn(process.execPath, [BIN, "daemon", "--statedir", join(top, "state"), "--config", config], { stdio: ["ignore", "ignore", "pipe"], env });
  inst.daemon.stderr?.on("data", (d) => (inst.log += String(d)));
  await waitFor(() => inst.daemon.exitCode !== null || /ready: socket/.test(inst.log), 30_000, "the daemon to be ready");
  if (inst.daemon.exitCode !== null) throw new Error(`daemon exited: ${inst.log}`);
  inst.owner = connectDaemon(socket);
  inst.url = await listenerUrl(inst);
  return inst;
}

/** The owner's one-time login URL, as `jobtap web` prints it. */
export async function ownerLogin(i: Instance): Promise<string> {
  return (await i.owner.call("web.code", {})).url;
}

/** A guest's login URL: `jobtap web` run as that real user. */
export async function guestLogin(i: Instance, user: User): Promise<string> {
  const r = await jobtapAs(user, i.socket, ["web"]);
  if (r.status !== 0) throw new Error(`jobtap web as ${user.name}: ${r.stderr}`);
  return r.stdout.trim();
}

export async function dispose(i: Instance | undefined): Promise<void> {
  if (!i) return;
  i.owner?.close();
  if (i.daemon.exitCode === null) {
    const closed = new Promise((r) => i.daemon.once("close", r));
    i.daemon.kill("SIGTERM");
    await closed;
  }
  rmSync(i.top, { recursive: true, force: true });
}

/** `jobtap ARGS` as the owner (asynchronous: the owner client shares this event loop). */
export function jobtap(i: Instance, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, JOBTAP_SOCKET: i.socket }, cwd: i.top, timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`jobtap ${args.join(" ")}: ${stderr || err.message}`));
      else resolve(stdout.trim());
    });
  });
}

/**
 * Real second (and third) Unix users for the server's security tests: created with useradd
 * when running as root (retried while another test holds /etc/passwd's lock), and commands
 * run as them as real processes.
 */
import { spawn, spawnSync } from "node:child_process";
import { BIN } from "./harness.js";

export interface User {
  name: string;
  uid: number;
  gid: number;
}

/** The user `name` (created if needed), or undefined when not root or useradd fails. */
export function realUser(name: string): User | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => spawnSync("id", [flag, name], { encoding: "utf8" });
  for (let attempt = 0; attempt < 20 && id("-u").status !== 0; attempt++) {
    const made = spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], { encoding: "utf8" });
    // Exit 10 (or 1): another useradd holds the lock on /etc/passwd; try again shortly.
    if (made.status !== 0) spawnSync("sleep", ["0.2"]);
  }
  const uid = Number(id("-u").stdout.trim());
  const gid = Number(id("-g").stdout.trim());
  return Number.isInteger(uid) && uid > 0 ? { name, uid, gid } : undefined;
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `jobtap ARGS` as `user` (a real process with that uid) against `socket`. */
export function jobtapAs(user: User, socket: string, args: string[]): Promise<RunResult> {
  return runAs(user, [BIN, ...args], { JOBTAP_SOCKET: socket });
}

/** Runs a node ES module script as `user`. */
export function scriptAs(user: User, script: string, env: Record<string, string> = {}): Promise<RunResult> {
  return runAs(user, ["--input-type=module", "-e", script], env);
}

/** Runs `node ARGV` as `user`; resolves with its status and output. */
export function runAs(user: User, argv: string[], env: Record<string, string>): Promise<RunResult> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, argv, { uid: user.uid, gid: user.gid, cwd: "/", env: { PATH: process.env.PATH ?? "", HOME: "/", ...env } });
    let stdout = "";
    let stderr = "";
    c.stdout.on("data", (d) => (stdout += d));
    c.stderr.on("data", (d) => (stderr += d));
    c.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

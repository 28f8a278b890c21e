/**
 * Real users for the site (multi-user instance) tests: made with useradd (retried while
 * another test holds /etc/passwd's lock), and the CLI run as them.
 */
import { spawnSync } from "node:child_process";
import { BIN } from "./harness.js";

export interface SiteUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

/** Runs a user/group admin command, retrying while another process holds /etc/passwd's lock. */
export function admin(argv: string[]): boolean {
  for (let i = 0; i < 20; i++) {
    if (spawnSync(argv[0]!, argv.slice(1)).status === 0) return true;
    spawnSync("sleep", ["0.2"]);
  }
  return false;
}

/** `name` from the password database, or undefined. */
export function userOf(name: string): SiteUser | undefined {
  const r = spawnSync("getent", ["passwd", name], { encoding: "utf8" });
  if (r.status !== 0) return undefined;
  const f = r.stdout.trim().split(":");
  return { name, uid: Number(f[2]), gid: Number(f[3]), home: f[5]! };
}

/** The system user `name`, made if missing. */
export function makeUser(name: string, extra: string[] = []): SiteUser | undefined {
  if (!userOf(name)) admin(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", ...extra, name]);
  return userOf(name);
}

/** `jobtap ARGS` as `user` (undefined: root) in `cwd`. */
export function cliAs(user: SiteUser | undefined, socket: string, cwd: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
    cwd,
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", JOBTAP_SOCKET: socket, HOME: "/nonexistent-submit-home" },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

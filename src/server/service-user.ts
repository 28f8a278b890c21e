/**
 * A multi-user instance's service user (`[daemon] user`, HTCondor's CONDOR_IDS): looked up
 * and checked at start, given the directories the daemon needs, then become for good
 * (initgroups, setgid, setuid: no saved root to return to). See docs/site.md.
 */
import { chownSync, existsSync, mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { ErrorCode, JobtapError } from "../errors.js";
import { passwdEntry, type PasswdEntry } from "../manager/exec/run-as.js";

/** The service user `name`; throws CONFIG naming why it cannot be (missing, root, we are not root). */
export function serviceUser(name: string): PasswdEntry {
  const me = process.getuid?.() ?? 0;
  if (me !== 0) {
    throw new JobtapError(ErrorCode.CONFIG, `[daemon].user = "${name}": a multi-user instance starts as root (this daemon runs as uid ${me}); see docs/site.md`);
  }
  const entry = passwdEntry(name);
  if (!entry) {
    throw new JobtapError(ErrorCode.CONFIG, `[daemon].user = "${name}": no such user in the password database (create it: useradd --system ${name}; see docs/site.md)`);
  }
  if (entry.uid === 0) throw new JobtapError(ErrorCode.CONFIG, `[daemon].user = "${name}": is root; the service user must be an unprivileged user`);
  return entry;
}

/**
 * The socket's directory must let the service user create (and at shutdown remove) the
 * socket: one that does not exist is made for it (0755); one that exists must be its own,
 * or sticky and world-writable (/tmp).
 */
export function prepareSocketDir(socketPath: string, user: PasswdEntry): void {
  const dir = dirname(socketPath);
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    chownSync(dir, user.uid, user.gid);
    return;
  }
  const st = statSync(dir);
  const open = (st.mode & 0o1002) === 0o1002;
  if (st.uid !== user.uid && !open) {
    throw new JobtapError(
      ErrorCode.PERMISSION_DENIED,
      `socket directory ${dir} is owned by uid ${st.uid}: the service user ${user.name} cannot create the socket there (chown ${user.name} ${dir}; see docs/site.md)`,
    );
  }
}

/** Becomes `user` for good: supplementary groups, gid, then uid (after which root cannot come back). */
export function dropPrivileges(user: PasswdEntry): void {
  (process as unknown as { initgroups(user: string, extraGroup: number): void }).initgroups(user.name, user.gid);
  process.setgid!(user.gid);
  process.setuid!(user.uid);
  if (process.getuid!() !== user.uid || process.geteuid!() !== user.uid) {
    throw new JobtapError(ErrorCode.INTERNAL, `could not become ${user.name} (uid ${user.uid})`);
  }
}

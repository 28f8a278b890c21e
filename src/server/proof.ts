/**
 * The client's half of the uid proof (auth.ts has the daemon's half and the reasoning): the
 * proof file's text, the auth directory of a socket, a fresh nonce, and writing the file.
 * Kept apart from auth.ts so a `jobtap submit` does not load node:crypto to start.
 */
import { closeSync, lstatSync, openSync, readSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ErrorCode, JobtapError } from "../errors.js";

/** A nonce: 18 random bytes as 36 lowercase hex digits. */
export const NONCE_PATTERN = /^[0-9a-f]{36}$/;

/** The auth directory that belongs to a socket path. */
export function authDirFor(socketPath: string): string {
  return `${socketPath}.auth`;
}

/** The text a proof file holds: the nonce, bound to the directory the client wrote in. */
export function proofText(nonce: string, dir: { dev: number | bigint; ino: number | bigint }): string {
  return `jobtap-auth ${nonce} ${dir.dev} ${dir.ino}\n`;
}

/** A fresh nonce of the client's own (from the kernel's random source). */
export function clientNonce(): string {
  const buf = Buffer.alloc(18);
  const fd = openSync("/dev/urandom", "r");
  try {
    if (readSync(fd, buf, 0, buf.length, null) !== buf.length) throw new Error("short read from /dev/urandom");
  } finally {
    closeSync(fd);
  }
  return buf.toString("hex");
}

/**
 * Checks that the auth directory belongs to whoever owns the socket, then writes the proof
 * file for `nonce`. Returns its path (the daemon removes it; the client removes it too if
 * the proof failed).
 */
export function writeProof(socketPath: string, nonce: string, dir: string = authDirFor(socketPath)): string {
  if (!NONCE_PATTERN.test(nonce)) throw new JobtapError(ErrorCode.PROTOCOL, "auth.challenge: the daemon sent a malformed nonce");
  const sock = statSync(socketPath);
  const st = lstatSync(dir);
  if (!st.isDirectory() || st.uid !== sock.uid) {
    throw new JobtapError(
      ErrorCode.PERMISSION_DENIED,
      `refusing to authenticate: auth directory ${dir} is not a directory owned by the socket's owner (uid ${sock.uid})`,
    );
  }
  const path = join(dir, nonce);
  writeFileSync(path, proofText(nonce, st), { flag: "wx", mode: 0o444 });
  return path;
}

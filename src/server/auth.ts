/**
 * Who is calling: the client proves its uid to the daemon by creating a file.
 *
 * Node cannot read a Unix socket's peer credentials (SO_PEERCRED), so the daemon never
 * believes a uid a request states. Instead, once per connection's client:
 *  1. `auth.challenge` gives the client a fresh random nonce and the daemon's *auth
 *     directory* (`<socket>.auth`, owned by the daemon's user, mode 0700, or 1733 with
 *     `[daemon] guests = true`: others may create files in it but not list, read or delete
 *     the files of others).
 *  2. The client creates `<dir>/<nonce>` (exclusively, mode 0444) holding the nonce and the
 *     device and inode of that directory as it sees it.
 *  3. `auth.prove` with the nonce: the daemon opens the file without following links,
 *     requires a regular file with one link holding exactly that text, and takes the
 *     file's owner as the caller's uid: the kernel sets a new file's owner to its creator, and
 *     only root can give a file away. It answers a random token; later requests carry it
 *     (`authorization: Bearer TOKEN`) and run as that uid.
 *
 * Why each check: the link count refuses a hard link to someone else's file; binding the
 * text to the directory's inode refuses a file that a client was lured into writing in a
 * directory an attacker controls and then moved here; the client refuses an auth directory
 * whose owner is not the socket's owner (a fake daemon relaying a real daemon's nonce). A
 * nonce is single-use and expires; tokens live in the daemon's memory only. The trust model
 * is in docs/cli.md, "Who may do what".
 */
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { ErrorCode, JobtapError } from "../errors.js";

/** The authenticated caller of one request. */
export interface Caller {
  userid: number;
  /** The instance owner (plugin and configuration control, every job). */
  owner: boolean;
}

/** The auth directory that belongs to a socket path. */
export function authDirFor(socketPath: string): string {
  return `${socketPath}.auth`;
}

/** How long a nonce may wait for its proof. */
const NONCE_TTL_MS = 60_000;
/** Outstanding nonces at most (a flood of challenges evicts the oldest). */
const MAX_NONCES = 4096;
/** Live tokens at most (the oldest are forgotten; their clients authenticate again). */
const MAX_TOKENS = 65_536;
/** The proof file's text is short; anything longer is not a proof. */
const MAX_PROOF_BYTES = 256;

/** The text a proof file holds: the nonce, bound to the directory the client wrote in. */
export function proofText(nonce: string, dir: { dev: number | bigint; ino: number | bigint }): string {
  return `jobtap-auth ${nonce} ${dir.dev} ${dir.ino}\n`;
}

/** The daemon side: challenges, proofs and tokens. */
export interface Authenticator {
  readonly dir: string;
  challenge(): { nonce: string; dir: string };
  /** Checks the proof file for `nonce`; returns a token and the proven uid. */
  prove(nonce: unknown): { token: string; userid: number };
  /** The caller a token stands for, or undefined (unknown, forgotten, or no token). */
  caller(token: string | undefined): Caller | undefined;
  /** Removes the auth directory (at shutdown). */
  close(): void;
}

/**
 * Creates (or takes over) the auth directory for `socketPath` and returns the daemon's
 * authenticator. Refuses a directory that is a symlink, not a directory, or owned by another
 * user. `guests`: let other users create proof files (they can reach the socket too).
 */
export function createAuthenticator(socketPath: string, owner: number, guests: boolean): Authenticator {
  const dir = authDirFor(socketPath);
  prepareDir(dir, guests);
  const dirStat = statSync(dir);
  const nonces = new Map<string, number>();
  const tokens = new Map<string, Caller>();
  return {
    dir,
    challenge() {
      const now = Date.now();
      for (const [n, at] of nonces) if (now - at > NONCE_TTL_MS || nonces.size >= MAX_NONCES) nonces.delete(n);
      const nonce = randomBytes(18).toString("hex");
      nonces.set(nonce, now);
      return { nonce, dir };
    },
    prove(nonce) {
      if (typeof nonce !== "string" || !/^[0-9a-f]{36}$/.test(nonce)) denied("auth.prove: nonce must be a nonce from auth.challenge");
      const at = nonces.get(nonce);
      nonces.delete(nonce);
      if (at === undefined || Date.now() - at > NONCE_TTL_MS) denied("auth.prove: unknown or expired nonce");
      const userid = readProof(join(dir, nonce), proofText(nonce, dirStat));
      const token = randomBytes(24).toString("base64url");
      if (tokens.size >= MAX_TOKENS) tokens.delete(tokens.keys().next().value as string);
      tokens.set(token, { userid, owner: userid === owner });
      return { token, userid };
    },
    caller: (token) => (token === undefined ? undefined : tokens.get(token)),
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function prepareDir(dir: string, guests: boolean): void {
  const me = process.geteuid?.() ?? 0;
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  const st = lstatSync(dir);
  if (!st.isDirectory() || st.uid !== me) {
    throw new JobtapError(
      ErrorCode.PERMISSION_DENIED,
      `auth directory ${dir} is ${st.isDirectory() ? `owned by uid ${st.uid}` : "not a directory"}; remove it (the daemon creates its own)`,
      { path: dir },
    );
  }
  for (const name of readdirSync(dir)) rmSync(join(dir, name), { force: true, recursive: true });
  // 1733 (sticky, others may create but not list): like /tmp, without the listing.
  chmodSync(dir, guests ? 0o1733 : 0o700);
}

/** Reads and removes one proof file; returns its owner's uid or throws PERMISSION_DENIED. */
function readProof(path: string, expected: string): number {
  let fd: number;
  try {
    // O_NOFOLLOW: never a symlink; O_NONBLOCK: a FIFO planted under the name cannot hang us.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    denied(`auth.prove: no proof file (${(e as NodeJS.ErrnoException).code ?? "unreadable"})`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.nlink !== 1 || st.size > MAX_PROOF_BYTES) denied("auth.prove: the proof is not a plain file of one link");
    const buf = Buffer.alloc(MAX_PROOF_BYTES + 1);
    const n = readSync(fd, buf, 0, buf.length, 0);
    if (buf.subarray(0, n).toString("utf8") !== expected) denied("auth.prove: the proof file does not hold this challenge");
    return st.uid;
  } finally {
    closeSync(fd);
    try {
      unlinkSync(path);
    } catch {
      // gone already: nothing to clean
    }
  }
}

function denied(message: string): never {
  throw new JobtapError(ErrorCode.PERMISSION_DENIED, message);
}

/**
 * The client side of step 2: checks that the auth directory belongs to whoever owns the
 * socket, then writes the proof file. Returns its path (the daemon removes it; the client
 * removes it too if the proof failed).
 */
export function writeProof(socketPath: string, nonce: string, dir: string): string {
  if (!/^[0-9a-f]{36}$/.test(nonce)) throw new JobtapError(ErrorCode.PROTOCOL, "auth.challenge: the daemon sent a malformed nonce");
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

/**
 * Who is calling: the client proves its uid to the daemon by creating a file.
 *
 * Node cannot read a Unix socket's peer credentials (SO_PEERCRED), so the daemon never
 * believes a uid a request states. Instead, once per connection's client:
 *  1. The client picks a fresh random nonce (18 bytes from the kernel) and creates
 *     `<dir>/<nonce>` (exclusively, mode 0444) in the daemon's *auth directory*
 *     (`<socket>.auth`, owned by the daemon's user, mode 0700, or 1733 with
 *     `[daemon] guests = true`: others may create files in it but not list, read or delete
 *     the files of others), holding the nonce and the device and inode of that directory
 *     as it sees it.
 *  2. Its first request carries `authorization: Proof NONCE`: the daemon opens the file
 *     without following links, requires a regular file with one link, changed within the
 *     last minute, holding exactly that text, and takes the file's owner as the caller's
 *     uid: the kernel sets a new file's owner to its creator, and only root can give a file
 *     away. It serves the request as that uid and answers a random token in the
 *     `x-jobtap-token` header; later requests carry it (`authorization: Bearer TOKEN`).
 * The same proof in two steps (`auth.challenge` gives a nonce of the daemon's, `auth.prove`
 * with it answers the token) is kept for clients that want it.
 *
 * Why each check: the link count refuses a hard link to someone else's file; binding the
 * text to the directory's inode refuses a file that a client was lured into writing in a
 * directory an attacker controls and then moved here; the client refuses an auth directory
 * whose owner is not the socket's owner (a fake daemon relaying a real daemon's nonce). Who
 * picks the nonce does not matter to what a proof proves: a file proves only its creator's
 * uid, whoever names it, and nobody but its creator and the daemon learns a nonce (the
 * directory cannot be listed); the file is removed once read, and an old one is refused.
 * Tokens live in the daemon's memory only. The trust model is in docs/cli.md, "Who may do
 * what".
 */
import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readSync, unlinkSync } from "node:fs";
import { ErrorCode, JobtapError } from "../errors.js";
import { NONCE_PATTERN, authDirFor, proofText } from "./proof.js";
import { openAuthDir } from "./authdir.js";
import type { Scope } from "./http/tokens.js";

export { authDirFor, proofText, writeProof } from "./proof.js";

/** The authenticated caller of one request. */
export interface Caller {
  userid: number;
  /** The instance owner (plugin and configuration control, every job). */
  owner: boolean;
  /** An HTTP bearer token's scope (absent on the socket: the user's full rights). */
  scope?: Scope;
}

/** How long a nonce may wait for its proof. */
const NONCE_TTL_MS = 60_000;
/** Outstanding nonces at most (a flood of challenges evicts the oldest). */
const MAX_NONCES = 4096;
/** Live tokens at most (the oldest are forgotten; their clients authenticate again). */
const MAX_TOKENS = 65_536;
/** The proof file's text is short; anything longer is not a proof. */
const MAX_PROOF_BYTES = 256;

/** The daemon side: challenges, proofs and tokens. */
export interface Authenticator {
  readonly dir: string;
  challenge(): { nonce: string; dir: string };
  /** Checks the proof file for `nonce` (from `challenge`); returns a token and the proven uid. */
  prove(nonce: unknown): { token: string; userid: number };
  /** Checks the proof file for a nonce the client picked (`authorization: Proof NONCE`). */
  proveOwn(nonce: string): { token: string; userid: number };
  /** The caller a token stands for, or undefined (unknown, forgotten, or no token). */
  caller(token: string | undefined): Caller | undefined;
  /** Empties and removes the auth directory (at shutdown); never throws (see authdir.ts). */
  close(): void;
}

/**
 * Creates (or takes over) the auth directory for `socketPath` and returns the daemon's
 * authenticator. Refuses a directory that is a symlink, not a directory, or owned by another
 * user. `guests`: let other users create proof files (they can reach the socket too).
 * `log` hears about what a guest left in the directory (authdir.ts).
 */
export function createAuthenticator(
  socketPath: string,
  owner: number,
  guests: boolean,
  log: (line: string) => void = () => undefined,
  now: () => number = Date.now,
): Authenticator {
  const authDir = openAuthDir(authDirFor(socketPath), guests, log);
  const dir = authDir.path;
  const dirStat = authDir.stat;
  const nonces = new Map<string, number>();
  const tokens = new Map<string, Caller>();
  const issue = (userid: number): { token: string; userid: number } => {
    const token = randomBytes(24).toString("base64url");
    if (tokens.size >= MAX_TOKENS) tokens.delete(tokens.keys().next().value as string);
    tokens.set(token, { userid, owner: userid === owner });
    return { token, userid };
  };
  return {
    dir,
    challenge() {
      const t = now();
      for (const [n, at] of nonces) if (t - at > NONCE_TTL_MS || nonces.size >= MAX_NONCES) nonces.delete(n);
      const nonce = randomBytes(18).toString("hex");
      nonces.set(nonce, t);
      return { nonce, dir };
    },
    prove(nonce) {
      if (typeof nonce !== "string" || !NONCE_PATTERN.test(nonce)) denied("auth.prove: nonce must be a nonce from auth.challenge");
      const at = nonces.get(nonce);
      nonces.delete(nonce);
      if (at === undefined || now() - at > NONCE_TTL_MS) denied("auth.prove: unknown or expired nonce");
      return issue(readProof("auth.prove", authDir.entry(nonce), proofText(nonce, dirStat)));
    },
    proveOwn(nonce) {
      if (!NONCE_PATTERN.test(nonce)) denied("authorization: Proof needs a nonce of 36 hex digits");
      return issue(readProof("authorization: Proof", authDir.entry(nonce), proofText(nonce, dirStat), now() - NONCE_TTL_MS));
    },
    caller: (token) => (token === undefined ? undefined : tokens.get(token)),
    close: () => authDir.close(),
  };
}

/**
 * Reads and removes one proof file; returns its owner's uid or throws PERMISSION_DENIED.
 * `changedAfter` (ms since the epoch): refuse a file whose inode changed before then.
 */
function readProof(what: string, path: string, expected: string, changedAfter?: number): number {
  let fd: number;
  try {
    // O_NOFOLLOW: never a symlink; O_NONBLOCK: a FIFO planted under the name cannot hang us.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    denied(`${what}: no proof file (${(e as NodeJS.ErrnoException).code ?? "unreadable"})`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.nlink !== 1 || st.size > MAX_PROOF_BYTES) denied(`${what}: the proof is not a plain file of one link`);
    if (changedAfter !== undefined && st.ctimeMs < changedAfter) denied(`${what}: the proof file is too old`);
    const buf = Buffer.alloc(MAX_PROOF_BYTES + 1);
    const n = readSync(fd, buf, 0, buf.length, 0);
    if (buf.subarray(0, n).toString("utf8") !== expected) denied(`${what}: the proof file does not hold this challenge`);
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

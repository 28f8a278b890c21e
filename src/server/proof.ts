/**
 * The client's half of the uid proof (auth.ts has the daemon's half and the reasoning): the
 * proof file's text, the auth directory of a socket, a fresh nonce, and writing the file.
 * Kept apart from auth.ts so a `jobtap submit` does not load node:crypto to start.
 */
import { chmodSync, closeSync, constants, existsSync, fstatSync, openSync, readSync, rmSync, statSync, writeFileSync } from "node:fs";
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

/** A proof file written in an auth directory the client holds open. */
export interface WrittenProof {
  /** The file's path through the open directory (`/proc/self/fd/N/NONCE` on Linux). */
  path: string;
  /** Removes the file (if the daemon has not) and closes the directory. Never throws. */
  remove(): void;
}

/**
 * Opens the auth directory once (never through a symlink), checks that the socket's owner
 * owns it and that nobody else can replace entries in it (0700, or sticky), and creates the
 * proof file for `nonce` relative to that open directory: the file lands in the directory
 * checked, and the inode in its text is that directory's, even if the path is swapped for
 * another meanwhile (the race a socket under a hostile directory allows).
 */
export function writeProof(socketPath: string, nonce: string, dir: string = authDirFor(socketPath)): WrittenProof {
  if (!NONCE_PATTERN.test(nonce)) throw new JobtapError(ErrorCode.PROTOCOL, "auth.challenge: the daemon sent a malformed nonce");
  const sock = statSync(socketPath);
  const fd = openAuthDir(dir, sock.uid);
  const viaFd = existsSync(`/proc/self/fd/${fd}`);
  const path = viaFd ? `/proc/self/fd/${fd}/${nonce}` : join(dir, nonce);
  try {
    // wx: O_CREAT|O_EXCL, which never follows a symlink planted under the name.
    writeFileSync(path, proofText(nonce, fstatSync(fd)), { flag: "wx", mode: 0o444 });
    // 0444 whatever the user's umask (027 would hide it from a daemon that is not root). The
    // path is reached through the checked directory's descriptor; the sticky directory keeps
    // others from swapping the file we just created.
    chmodSync(path, 0o444);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  let open = true;
  return {
    path,
    remove() {
      if (!open) return;
      open = false;
      rmSync(path, { force: true });
      closeSync(fd);
    },
  };
}

/**
 * Linux's O_PATH (not in Node's constants): a guest may search the 1733 directory but not
 * read it, and an O_PATH descriptor needs only search permission to be fstat-ed and to
 * create files relative to it. Elsewhere a plain read-only open (the owner's case).
 */
const O_PATH = process.platform === "linux" ? 0o10000000 : constants.O_RDONLY;

/** The sticky bit: in such a directory only a file's owner may rename or remove it. */
const STICKY = 0o1000;

function openAuthDir(dir: string, socketOwner: number): number {
  let fd: number;
  try {
    fd = openSync(dir, O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw e;
    throw refused(dir, socketOwner, `cannot open it without following links (${code ?? (e as Error).message})`);
  }
  const st = fstatSync(fd);
  const why =
    st.uid !== socketOwner
      ? `it is owned by uid ${st.uid}`
      : (st.mode & 0o022) !== 0 && (st.mode & STICKY) === 0
        ? `it is mode ${(st.mode & 0o7777).toString(8)}: others could replace a proof in it`
        : undefined;
  if (why !== undefined) {
    closeSync(fd);
    throw refused(dir, socketOwner, why);
  }
  return fd;
}

function refused(dir: string, socketOwner: number, why: string): JobtapError {
  return new JobtapError(
    ErrorCode.PERMISSION_DENIED,
    `refusing to authenticate: auth directory ${dir} is not a directory owned by the socket's owner (uid ${socketOwner}): ${why}`,
  );
}

/**
 * A local job's output files, opened and read back safely.
 *
 * Output and error files are ordinary files only: a FIFO, a device, a directory or a file
 * of /proc or /sys is refused (a FIFO would block the daemon's thread in open(); a /proc
 * file opened by the daemon is the daemon's own memory or environment). Files are opened
 * without blocking and checked on the descriptor, so a path swapped between check and open
 * gains nothing. The `output` method reads back only the files the job itself was started
 * with, as recorded in its `exec-state`, never a path taken from the jobspec.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statfsSync, statSync } from "node:fs";
import { ErrorCode, JobtapError } from "../../errors.js";

/** File systems whose "files" are kernel views (statfs f_type): proc, sysfs, cgroup2, debugfs, securityfs, tracefs. */
const KERNEL_FS = new Set([0x9fa0, 0x62656572, 0x63677270, 0x27e0eb, 0x64626720, 0x73636673, 0x74726163]);

/** The output files a started job was given and the uid it ran as (its `exec-state`'s `output`). */
export interface OutputRecord {
  stdout: string;
  stderr: string;
  uid: number;
}

function refuse(path: string, why: string): JobtapError {
  return new JobtapError(ErrorCode.PERMISSION_DENIED, `output "${path}": ${why}`, { path });
}

/** Why an open descriptor is not an ordinary file, or undefined when it is. */
function notOrdinary(fd: number): string | undefined {
  if (!fstatSync(fd).isFile()) return "not a regular file (FIFOs, devices and directories are refused)";
  if (KERNEL_FS.has(statfsSync(`/proc/self/fd/${fd}`).type)) return "a /proc or /sys file (refused)";
  return undefined;
}

/**
 * Opens `path` for appending with this process's rights, creating it (mode 0666 less the
 * umask); never blocks. Throws PERMISSION_DENIED naming the path and why for anything but
 * an ordinary file, or when it cannot be opened.
 */
export function openForAppend(path: string): number {
  // A FIFO without a reader would fail with an obscure ENXIO: say what it is.
  const exists = statOrUndefined(path);
  if (exists !== undefined && !exists.isFile()) throw refuse(path, "not a regular file (FIFOs, devices and directories are refused)");
  let fd: number;
  try {
    const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK | constants.O_NOCTTY;
    fd = openSync(path, flags, 0o666);
  } catch (err) {
    throw refuse(path, `cannot open it: ${errnoText(err)}${exists ? "" : " (creating it)"}`);
  }
  const why = notOrdinary(fd);
  if (why !== undefined) {
    closeSync(fd);
    throw refuse(path, why);
  }
  return fd;
}

/**
 * Opens a job's input file (its stdin) read-only with this process's rights, never
 * blocking on a FIFO; only an ordinary file. Throws PERMISSION_DENIED naming the path.
 */
export function openForRead(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (err) {
    throw new JobtapError(ErrorCode.PERMISSION_DENIED, `input "${path}": cannot open it: ${errnoText(err)}`, { path });
  }
  const why = notOrdinary(fd);
  if (why !== undefined) {
    closeSync(fd);
    throw new JobtapError(ErrorCode.PERMISSION_DENIED, `input "${path}": ${why}`, { path });
  }
  return fd;
}

/**
 * Reads up to `max` bytes of a job's output file from `offset`: only a regular file owned
 * by `uid` (the uid the job ran as), never through a symbolic link. A file not there yet reads as
 * empty. Throws PERMISSION_DENIED naming the path and why.
 */
export function readOutputFile(path: string, uid: number, offset: number, max: number, tail = false): { data: string; offset: number } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { data: "", offset };
    throw refuse(path, code === "ELOOP" ? "a symbolic link (refused)" : `cannot read it: ${errnoText(err)}`);
  }
  try {
    const why = notOrdinary(fd);
    if (why !== undefined) throw refuse(path, why);
    const owner = fstatSync(fd).uid;
    if (owner !== uid) throw refuse(path, `owned by uid ${owner}, not by the uid the job ran as (${uid}): not the job's output`);
    // tail: the last `max` bytes, whatever `offset` said (the dashboard's output view).
    if (tail) offset = Math.max(0, fstatSync(fd).size - max);
    const buf = Buffer.alloc(max);
    const n = readSync(fd, buf, 0, max, offset);
    return { data: buf.subarray(0, n).toString("utf8"), offset: offset + n };
  } finally {
    closeSync(fd);
  }
}

function statOrUndefined(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw refuse(path, `cannot open it: ${errnoText(err)}`);
  }
}

/** The output record in merged `exec-state` contexts, if the job was started with one. */
export function outputRecord(saved: Readonly<Record<string, unknown>>): OutputRecord | undefined {
  const o = saved.output as Partial<OutputRecord> | undefined;
  if (typeof o?.stdout !== "string" || typeof o.stderr !== "string" || !Number.isInteger(o.uid)) return undefined;
  return { stdout: o.stdout, stderr: o.stderr, uid: o.uid! };
}

/** "permission denied" from an fs error, without Node's "EACCES: ..., open '...'" wrapping. */
export function errnoText(err: unknown): string {
  const m = /^[A-Z0-9]+: (.*?), \w+ '/.exec((err as Error).message);
  return m ? m[1]! : (err as Error).message;
}

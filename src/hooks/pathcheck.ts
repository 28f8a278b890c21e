/**
 * HTCondor's hook path-safety checks (htcondor.md §1 item 1), made a little stricter.
 *
 * HTCondor stats the path (following links) and refuses it when the file is world-writable,
 * has no execute bit, or its directory is world-writable. We check, in this order:
 *  1. the path is absolute;
 *  2. it exists (stat, following links) and is a regular file;
 *  3. the file is not world-writable;
 *  4. it has an execute bit and this process may execute it;
 *  5. its directory (as written, HTCondor's check) is not world-writable — the sticky bit
 *     does not help here: HTCondor refuses a hook directly in /tmp, and so do we;
 *  6. every ancestor directory, of the path as written and of its real path (symlinks
 *     resolved), is not world-writable — except a sticky one (like /tmp) whose entry on our
 *     path is owned by root or by us: the sticky bit stops anyone else from renaming or
 *     replacing that entry. (HTCondor checks only the immediate directory; a world-writable
 *     ancestor lets a guest swap a whole subtree, so we check the chain.)
 * The checks run on the libuv thread pool (fs/promises): they never block the event loop.
 */
import { constants, type Stats } from "node:fs";
import { access, lstat, realpath, stat } from "node:fs/promises";
import { dirname, isAbsolute, normalize, sep } from "node:path";
import { performance } from "node:perf_hooks";

const S_IWOTH = 0o002;
const S_ISVTX = 0o1000;
const ANY_EXEC = 0o111;

/** The verdict on a hook path: safe to run, or why not. */
export type HookPathCheck = { ok: true; path: string } | { ok: false; path: string; reason: string };

/**
 * Checks `path` as a hook program; never throws. Call at configuration time or per run.
 * `forOther`: the hook runs as another user (through the launcher), so whether this process
 * may execute it does not matter; that user's right is checked when it runs.
 */
export async function checkHookPath(path: string, forOther = false): Promise<HookPathCheck> {
  const refuse = (reason: string): HookPathCheck => ({ ok: false, path, reason });
  if (typeof path !== "string" || path === "") return refuse("the hook path is empty");
  if (!isAbsolute(path)) return refuse("not an absolute path");
  const file = await statOrWhy(path, stat);
  if (typeof file === "string") return refuse(file);
  if (!file.isFile()) return refuse("not a regular file");
  if (file.mode & S_IWOTH) return refuse(`the file is world-writable (mode ${octal(file.mode)})`);
  if ((file.mode & ANY_EXEC) === 0) return refuse(`not executable (mode ${octal(file.mode)})`);
  try {
    if (!forOther) await access(path, constants.X_OK);
  } catch {
    return refuse(`not executable by this process (uid ${process.geteuid?.() ?? "?"}, mode ${octal(file.mode)})`);
  }
  const written = normalize(path);
  const why = (await checkChain(written)) ?? (await checkRealChain(written));
  return why === null ? { ok: true, path } : refuse(why);
}

/** Checks the real path's chain when it differs from the path as written. */
async function checkRealChain(written: string): Promise<string | null> {
  let real: string;
  try {
    real = await realpath(written);
  } catch (e) {
    return `cannot resolve the real path: ${errnoText(e)}`;
  }
  if (real === written) return null;
  const why = await checkChain(real);
  return why === null ? null : `${why} (on its real path ${real})`;
}

/** Walks the directories above `file`, nearest first; returns why it is unsafe, or null. */
async function checkChain(file: string): Promise<string | null> {
  const euid = process.geteuid?.() ?? -1;
  let entry = file;
  for (let dir = dirname(file), first = true; ; first = false) {
    const st = await statOrWhy(dir, stat);
    if (typeof st === "string") return `its directory ${dir}: ${st}`;
    if (st.mode & S_IWOTH) {
      if (first) return `it is in a world-writable directory (${dir}, mode ${octal(st.mode)})`;
      if ((st.mode & S_ISVTX) === 0) return `it is below a world-writable directory (${dir}, mode ${octal(st.mode)})`;
      const own = await statOrWhy(entry, lstat);
      if (typeof own === "string") return `${entry}: ${own}`;
      if (own.uid !== 0 && own.uid !== euid) {
        return `${entry} is in the sticky world-writable directory ${dir} and owned by uid ${own.uid}, neither root nor us`;
      }
    }
    const up = dirname(dir);
    if (up === dir || dir === sep) return null;
    entry = dir;
    dir = up;
  }
}

async function statOrWhy(path: string, how: (p: string) => Promise<Stats>): Promise<Stats | string> {
  try {
    return await how(path);
  } catch (e) {
    return `cannot stat: ${errnoText(e)}`;
  }
}

function errnoText(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  if (err?.code === "ENOENT") return "ENOENT (no such file or directory)";
  if (err?.code === "EACCES") return "EACCES (permission denied)";
  if (err?.code === "ENOTDIR") return "ENOTDIR (a path component is not a directory)";
  if (err?.code === "ELOOP") return "ELOOP (too many symbolic links)";
  return err?.code ?? String(e);
}

function octal(mode: number): string {
  return "0" + (mode & 0o7777).toString(8);
}

/**
 * Safe verdicts remembered for `ttlMs` of real time, so a hook run hundreds of times a
 * second is not re-examined (about ten file system calls) on every run; runs that start
 * together share one examination. A refusal is never remembered: the next run looks again.
 * `ttlMs` 0 examines every run.
 */
export class HookPathCache {
  private readonly safe = new Map<string, number>();
  private readonly pending = new Map<string, Promise<HookPathCheck>>();

  constructor(private readonly ttlMs: number) {}

  /** checkHookPath(path), or a safe verdict younger than the cache's ttl. */
  check(path: string, forOther = false): Promise<HookPathCheck> {
    if (this.ttlMs <= 0) return checkHookPath(path, forOther);
    const key = forOther ? `\0${path}` : path;
    const until = this.safe.get(key);
    if (until !== undefined && until > performance.now()) return Promise.resolve({ ok: true, path });
    let look = this.pending.get(key);
    if (look === undefined) {
      look = checkHookPath(path, forOther).then((verdict) => {
        this.pending.delete(key);
        if (verdict.ok) this.remember(key);
        else this.safe.delete(key);
        return verdict;
      });
      this.pending.set(key, look);
    }
    return look;
  }

  private remember(path: string): void {
    const now = performance.now();
    if (this.safe.size >= 1024) for (const [p, t] of this.safe) if (t <= now) this.safe.delete(p);
    this.safe.set(path, now + this.ttlMs);
  }
}

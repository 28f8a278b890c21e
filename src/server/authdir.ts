/**
 * The daemon's auth directory (`<socket>.auth`, see auth.ts): created, checked and emptied
 * without ever trusting what a guest put in it.
 *
 * With guests the directory is 1733, so anyone may create entries in it: files, but also
 * subdirectories (holding files the daemon's user cannot delete), FIFOs and symlinks, and
 * may swap one for another at any moment. So the daemon opens the directory once, checks the
 * open descriptor (a directory, not a symlink, the daemon's own), and from then on reaches
 * entries only through that descriptor (`/proc/self/fd/N/NAME`: Node has no unlinkat), so a
 * path component swapped later cannot redirect it. It removes an entry only after `lstat`
 * says it is a regular file directly inside: unlinking a name removes that name only (a
 * symlink swapped in meanwhile is removed as a link, never followed; a directory swapped in
 * makes the unlink fail). It never recurses and never follows a link; anything else is left
 * in place and logged, and neither start nor shutdown fails because of it.
 */
import { closeSync, constants, existsSync, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, rmdirSync, unlinkSync, type Stats } from "node:fs";
import { ErrorCode, JobtapError } from "../errors.js";

/** An auth directory the daemon holds open. */
export interface AuthDir {
  readonly path: string;
  /** Device and inode as the daemon opened it (proof files name these). */
  readonly stat: Stats;
  /** The path of entry `name` inside the opened directory, whatever its path now names. */
  entry(name: string): string;
  /** Removes the regular files directly inside; logs and leaves anything else. Never throws. */
  clean(): void;
  /** Cleans, removes the directory if it is then empty, and closes it. Never throws. */
  close(): void;
}

/**
 * Creates (or takes over) the auth directory at `path`, empties it of regular files and sets
 * its mode (1733 with `guests`, else 0700). Refuses a path that is a symlink, not a
 * directory, or owned by another user. `log` hears about entries left in place.
 */
export function openAuthDir(path: string, guests: boolean, log: (line: string) => void): AuthDir {
  const me = process.geteuid?.() ?? 0;
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  const fd = openDirNoFollow(path);
  const stat = fstatSync(fd);
  if (stat.uid !== me) {
    closeSync(fd);
    throw new JobtapError(ErrorCode.PERMISSION_DENIED, `auth directory ${path} is owned by uid ${stat.uid}; remove it (the daemon creates its own)`, {
      path,
    });
  }
  const viaFd = existsSync(`/proc/self/fd/${fd}`);
  const entry = (name: string) => (viaFd ? `/proc/self/fd/${fd}/${name}` : `${path}/${name}`);
  let open = true;
  const clean = () => {
    if (open) cleanEntries(path, entry, viaFd ? `/proc/self/fd/${fd}` : path, log);
  };
  clean();
  // 1733 (sticky, others may create but not list): like /tmp, without the listing.
  fchmodSync(fd, guests ? 0o1733 : 0o700);
  return {
    path,
    stat,
    entry,
    clean,
    close() {
      if (!open) return;
      clean();
      open = false;
      removeIfSame(path, stat, log);
      closeSync(fd);
    },
  };
}

function openDirNoFollow(path: string): number {
  try {
    return openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR") {
      throw new JobtapError(ErrorCode.PERMISSION_DENIED, `auth directory ${path} is not a directory (${code}); remove it (the daemon creates its own)`, {
        path,
      });
    }
    throw e;
  }
}

/** One pass over the directory: regular files unlinked by name, the rest logged. */
function cleanEntries(path: string, entry: (name: string) => string, dir: string, log: (line: string) => void): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    log(`auth directory ${path}: cannot list it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); left as is`);
    return;
  }
  const left: string[] = [];
  for (const name of names) {
    try {
      if (lstatSync(entry(name)).isFile()) unlinkSync(entry(name));
      else left.push(name);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "ENOENT") left.push(`${name} (${code ?? (e as Error).message})`);
    }
  }
  if (left.length > 0) {
    const shown = left.slice(0, 5).join(", ") + (left.length > 5 ? `, and ${left.length - 5} more` : "");
    log(`auth directory ${path}: left ${left.length} entries that are not regular files in place (a guest's?): ${shown}`);
  }
}

/** Removes the directory at `path` if it is still the one opened and is empty. */
function removeIfSame(path: string, stat: Stats, log: (line: string) => void): void {
  try {
    const now = lstatSync(path);
    if (now.dev !== stat.dev || now.ino !== stat.ino) {
      log(`auth directory ${path}: the path names another file now; left it alone`);
      return;
    }
    rmdirSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOTEMPTY" || code === "EEXIST") log(`auth directory ${path}: not empty at shutdown; left in place (the next start reuses it)`);
    else if (code !== "ENOENT") log(`auth directory ${path}: not removed (${code ?? (e as Error).message})`);
  }
}

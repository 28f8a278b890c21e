/**
 * `jobtap daemon --log-file FILE`: the daemon's log lines appended to a file, for sites
 * without systemd's journal. The file is created mode 0600 (log lines name users, paths and
 * plugin errors) and reopened on SIGHUP, so logrotate can move it away and signal the daemon
 * (the same SIGHUP also reloads the configuration).
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { ErrorCode, JobtapError } from "../errors.js";

/** An open log file: `write` appends one line, `reopen` follows a rotated path, `close` ends it. */
export interface LogFile {
  write(line: string): void;
  reopen(): void;
  close(): void;
}

/** Opens (creating 0600, appending) the log file at `path`; throws INVALID_ARGUMENT naming it. */
export function openLogFile(path: string): LogFile {
  let fd = openAppend(path);
  return {
    write(line) {
      // Synchronous: a line is on disk before the next one, and none is lost at exit.
      writeSync(fd, line + "\n");
    },
    reopen() {
      // Open the new file first: if that fails the daemon keeps logging to the old one.
      const next = openAppend(path);
      closeSync(fd);
      fd = next;
    },
    close() {
      closeSync(fd);
    },
  };
}

function openAppend(path: string): number {
  try {
    return openSync(path, "a", 0o600);
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `--log-file ${path}: cannot open for appending (${why})`, { path });
  }
}

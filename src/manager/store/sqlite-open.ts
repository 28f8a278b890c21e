/**
 * Opening the SQLite store's file: its mode, its layout version, and the error for a file
 * that cannot be opened (split from sqlite.ts).
 */
import type Database from "better-sqlite3";
import { chmodSync, closeSync, openSync } from "node:fs";
import { ErrorCode, JobtapError, codedError } from "../../errors.js";

/**
 * The layout version this code writes, in PRAGMA user_version. A file with a higher one was
 * written by a newer jobtap: it is refused, never opened for writing. Layout 2 added the
 * `inactive` table (summaries of inactive jobs, src/manager/engine/summary.ts); an earlier file
 * (user_version 0 or 1) gets the table, and its inactive jobs get their summaries at their
 * first restart under layout 2. Layout 3 added `exec_eventlog` (executor state apart from the
 * main eventlog): an older file gets the empty table; an older jobtap refuses a layout-3 file,
 * since it would not see the saved state of the running jobs and could not reattach them.
 * Layout 4 keeps two marks in `meta` written at a clean shutdown (`batch_seq`, the next batch
 * number; `summary_floor`, an id below which every job has a summary) so that an open
 * scans neither the eventlog nor every job; an older jobtap would leave them stale, so it
 * refuses the file. A layout-3 file has no marks: its first open computes them as before,
 * and its first clean shutdown writes them.
 */
export const STORE_SCHEMA_VERSION = 4;

/** SQLite's words for a file that is not, or no longer, a database. */
const CORRUPT = /SQLITE_CORRUPT|SQLITE_NOTADB/;

/**
 * The store holds every jobspec, environments included: the database file is created mode
 * 0600 before SQLite opens it (SQLite gives its -wal and -shm files the database file's
 * mode), and files left more open by an older version are tightened.
 */
export function ownerOnly(path: string): void {
  if (path === ":memory:" || path === "") return;
  closeSync(openSync(path, "a", 0o600));
  for (const f of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) {
    try {
      chmodSync(f, 0o600);
    } catch {
      // absent: SQLite creates it with the database file's mode
    }
  }
}

/** Refuses a file whose layout is newer than this code's (before anything is written). */
export function checkVersion(db: Database.Database, path: string): void {
  const v = db.pragma("user_version", { simple: true }) as number;
  if (v > STORE_SCHEMA_VERSION) {
    throw new JobtapError(
      ErrorCode.STORE_OPEN,
      `job store ${path} was written by a newer jobtap (store layout ${v}; this version reads up to ${STORE_SCHEMA_VERSION}): refusing to open it; run the newer version, or move the file away to start empty`,
      { path, version: v },
    );
  }
}

/** STORE_CORRUPT for a damaged file, STORE_OPEN for anything else, naming the path. */
export function openError(e: unknown, path: string): JobtapError {
  const coded = codedError(e);
  if (coded !== undefined && coded.code !== ErrorCode.STORE_WRITE) return coded;
  const err = e as Error & { code?: string };
  const why = err.message.replace(/^cannot write job store \S+: /, "");
  if (CORRUPT.test(err.code ?? "") || /malformed|not a database/.test(why)) {
    return new JobtapError(
      ErrorCode.STORE_CORRUPT,
      `job store ${path} is damaged (${why}): refusing to start on it; restore it from a backup, or move it away to start empty (sqlite3's .recover may save its jobs)`,
      { path },
    );
  }
  return new JobtapError(ErrorCode.STORE_OPEN, `cannot open job store ${path}: ${why}`, { path });
}

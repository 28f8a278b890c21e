/**
 * User names for the job ads' Owner (jobads.ts) and the CLI's `jobs` USER column and
 * `--user NAME`: read from /etc/passwd (the same source `getpwuid` reads on a plain
 * machine); an unknown uid shows as its number. Kept in the manager's base so the CLI and
 * the manager share it without the manager importing the CLI.
 */
import { readFileSync } from "node:fs";

/** A uid ⇄ name table; one per invocation (no module-level cache). */
export interface UserTable {
  name(uid: number): string;
  /** The uid for a name or a decimal uid; undefined if neither. */
  uid(nameOrUid: string): number | undefined;
}

/** Loads the table from a passwd-format file (default /etc/passwd); empty if unreadable. */
export function loadUserTable(passwdPath = "/etc/passwd"): UserTable {
  const byUid = new Map<number, string>();
  const byName = new Map<string, number>();
  let text = "";
  try {
    text = readFileSync(passwdPath, "utf8");
  } catch {
    // no passwd file (containers): uids show as numbers
  }
  for (const line of text.split("\n")) {
    const [name, , uid] = line.split(":");
    if (!name || uid === undefined || !/^\d+$/.test(uid)) continue;
    if (!byUid.has(Number(uid))) byUid.set(Number(uid), name);
    byName.set(name, Number(uid));
  }
  return {
    name: (uid) => byUid.get(uid) ?? String(uid),
    uid: (s) => (/^\d+$/.test(s) ? Number(s) : byName.get(s)),
  };
}

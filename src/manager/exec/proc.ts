/**
 * Reading a process's identity from /proc (Linux), so a restarted manager can tell its
 * job's process from an unrelated one that reused the pid: a pid is the same process only
 * if its start time (field 22 of /proc/<pid>/stat, clock ticks since boot) matches too.
 */
import { readFileSync } from "node:fs";

export interface ProcStat {
  /** R, S, D, Z (zombie: exited, not yet reaped), T, ... */
  state: string;
  /** Start time in clock ticks after boot: with the pid, identifies the process. */
  starttime: number;
  /** A zombie's wait status (field 52, Linux ≥ 3.5), when the kernel gives it. */
  exitCode: number | undefined;
}

/** The stat of a live (or zombie) process, or undefined if there is none (or no /proc). */
export function procStat(pid: number, root = "/proc"): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`${root}/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces or parentheses.
  const fields = text.slice(text.lastIndexOf(")") + 2).trim().split(" ");
  const starttime = Number(fields[22 - 3]);
  if (!Number.isFinite(starttime)) return undefined;
  const exit = fields.length > 52 - 3 ? Number(fields[52 - 3]) : NaN;
  return { state: fields[0] ?? "?", starttime, exitCode: Number.isInteger(exit) ? exit : undefined };
}

/** The start time of `pid` (undefined when /proc does not have it). */
export function procStartTime(pid: number): number | undefined {
  return procStat(pid)?.starttime;
}

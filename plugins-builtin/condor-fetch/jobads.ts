/**
 * Job ad pieces the fetch and starter hooks need: the environment a fetched ad asks for,
 * the live usage attributes of UPDATE_JOB_INFO and JOB_EXIT (read from /proc, spec
 * htcondor.md §3.3), and a starter hook's effective status (§3.2).
 */
import { readFileSync, readdirSync } from "node:fs";
import { constants } from "node:os";
import { splitCondorArgs } from "jobtap/plugin";
import type { ClassAd, HookResult } from "jobtap/plugin";

/**
 * The environment of a fetched job: `Environment` (V2, `"A=1 B='x y'"`) else `Env` (V1,
 * `"A=1;B=2"`), else none. A fetched job never inherits the daemon's environment.
 */
export function jobEnvironment(ad: ClassAd): Record<string, string> {
  const env: Record<string, string> = {};
  const v2 = ad.has("Environment") ? ad.evaluate("Environment") : undefined;
  const v1 = ad.has("Env") ? ad.evaluate("Env") : undefined;
  const items = typeof v2 === "string" ? splitCondorArgs(v2) : typeof v1 === "string" ? v1.split(";") : [];
  for (const item of items) {
    const eq = item.indexOf("=");
    if (eq > 0) env[item.slice(0, eq).trim()] = item.slice(eq + 1);
  }
  return env;
}

/** Usage of a set of processes, from /proc (Linux); processes gone are skipped. */
export interface ProcUsage {
  pids: number[];
  userCpu: number;
  sysCpu: number;
  /** KiB */
  imageSize: number;
  residentSetSize: number;
}

const CLOCK_TICKS = 100;

/** Reads /proc/<pid>/stat and status for each pid (and their children's CPU once reaped). */
export function procUsage(pids: readonly number[]): ProcUsage {
  const u: ProcUsage = { pids: [], userCpu: 0, sysCpu: 0, imageSize: 0, residentSetSize: 0 };
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // Fields after the command (which may hold spaces) start after the last ')'.
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      u.userCpu += (Number(f[11]) + Number(f[13])) / CLOCK_TICKS;
      u.sysCpu += (Number(f[12]) + Number(f[14])) / CLOCK_TICKS;
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      u.imageSize += Number(/^VmSize:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      u.residentSetSize += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      u.pids.push(pid);
    } catch {
      // The process has exited.
    }
  }
  return u;
}

/**
 * The job's whole process tree: its task pids and every process in their sessions (each
 * local task leads its own session, so children, grandchildren and background jobs are
 * found even after their parent exited). One pass over /proc.
 */
export function processTree(leaders: readonly number[]): number[] {
  if (leaders.length === 0) return [];
  const sessions = new Set(leaders);
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [...leaders];
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // After the command: state ppid pgrp session ...
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // A zombie has ended: it waits only for its parent (or init) to reap it.
      if (f[0] === "Z") continue;
      if (sessions.has(pid) || sessions.has(Number(f[3]))) out.push(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/** The larger of two samples, field by field: usage only grows, and processes that exited keep their share. */
export function maxUsage(a: ProcUsage | undefined, b: ProcUsage): ProcUsage {
  if (a === undefined) return b;
  return {
    pids: b.pids.length > 0 ? b.pids : a.pids,
    userCpu: Math.max(a.userCpu, b.userCpu),
    sysCpu: Math.max(a.sysCpu, b.sysCpu),
    imageSize: Math.max(a.imageSize, b.imageSize),
    residentSetSize: Math.max(a.residentSetSize, b.residentSetSize),
  };
}

/** Adds HTCondor's live update attributes (§3.3) to `ad`. */
export function addUsage(ad: ClassAd, u: ProcUsage, startedAt: number | undefined, state: string, jobPid?: number): void {
  ad.set("JobState", state);
  const pid = jobPid ?? u.pids[0];
  if (pid !== undefined) ad.set("JobPid", BigInt(pid));
  ad.set("NumPids", BigInt(u.pids.length));
  if (startedAt !== undefined) ad.set("JobStartDate", BigInt(Math.floor(startedAt)));
  ad.set("RemoteUserCpu", u.userCpu);
  ad.set("RemoteSysCpu", u.sysCpu);
  ad.set("ImageSize", BigInt(u.imageSize));
  ad.set("ResidentSetSize", BigInt(u.residentSetSize));
}

/**
 * A PREPARE hook's effective status (§3.2): killed by a signal → −signal; a time limit,
 * a refusal or a spawn failure → −1 (a failure: held); else the exit code, replaced by
 * `HookStatusCode` when that is present and ≥ 0.
 */
export function hookStatus(r: HookResult, update: ClassAd): number {
  if (r.kind !== "exited" && r.kind !== "signaled") return -1;
  if (r.timedOut) return -1;
  if (r.kind === "signaled" || r.exitCode === null) return -(r.signal === null ? 1 : signalNumber(r.signal));
  const code = update.has("HookStatusCode") ? update.evaluate("HookStatusCode") : undefined;
  if (typeof code === "bigint" && code >= 0n) return Number(code);
  return r.exitCode;
}

function signalNumber(name: string): number {
  return (constants.signals as Record<string, number>)[name] ?? 1;
}

/**
 * The hook runner's public types: what a caller asks for (HookSpec), what it gets back
 * (HookResult, a discriminated union on `kind`), and how a runner is set up.
 *
 * A failing hook is never an exception: a refused path, a missing program, a crash, a time
 * limit are all HookResult values.
 */
import type { Clock } from "../manager/base/clock.js";
import type { JobId } from "../manager/base/ids.js";
import type { ProcessStarter } from "./process.js";

/** 1 MiB: the default cap on each of stdout and stderr. */
export const DEFAULT_OUTPUT_CAP = 1024 * 1024;
/** 1 s between SIGTERM and SIGKILL, as HTCondor's cron manager waits. */
export const DEFAULT_KILL_GRACE_MS = 1000;
/** Default limit of hooks in flight per runner. */
export const DEFAULT_MAX_IN_FLIGHT = 16;
/** How long a runner trusts a path it found safe before examining it again. */
export const DEFAULT_PATH_CHECK_CACHE_MS = 1000;

/** One run of a hook program. */
export interface HookSpec {
  /** Absolute path of the program; it is also argv[0]. No shell, no PATH search. */
  path: string;
  /** Arguments after argv[0]. */
  args?: readonly string[];
  /** The complete environment of the hook; default: the daemon's own environment. */
  env?: Readonly<Record<string, string>>;
  /** Working directory; default: the daemon's. */
  cwd?: string;
  /**
   * Text written to the hook's stdin, then closed (a string is written as UTF-8). Empty or
   * absent: stdin is /dev/null, as HTCondor leaves it unconnected.
   */
  stdin?: string | Uint8Array;
  /** A label for log lines (e.g. `FETCH_WORK slot1`); default: the path. */
  name?: string;
  /**
   * The kind of hook (`PREPARE_JOB`, `prolog`): a fixed word of the caller's, never a
   * user-chosen name, as it labels /metrics' hook series. Default: none ("").
   */
  hookType?: string;
  /** Time limit in ms, any length; default Infinity (HTCondor hooks have none unless asked). */
  timeLimitMs?: number;
  /** Wait between SIGTERM and SIGKILL to the process group; default 1000 ms. */
  killGraceMs?: number;
  /** Bytes of stdout kept; the rest is read and discarded. Default 1 MiB. */
  stdoutCap?: number;
  /** Bytes of stderr kept; the rest is read and discarded. Default 1 MiB. */
  stderrCap?: number;
  /** Receives stdout as it arrives (whole of it, also past the cap): for hooks that stream records. */
  onStdout?: (text: string) => void;
  /** Called with the pid once the program has started (e.g. to signal it later). */
  onSpawn?: (pid: number) => void;
  /** Aborting kills the hook (SIGTERM, grace, SIGKILL) or drops it from the queue. */
  signal?: AbortSignal;
  /**
   * Apply HTCondor's path-safety checks before the run (default true; a verdict of "safe"
   * is reused for the runner's pathCheckCacheMs). Pass false only when the caller checked
   * the path itself with checkHookPath.
   */
  checkPath?: boolean;
  /**
   * Log the hook's stderr (one line per run, at warn when the hook failed, else debug).
   * Default true: HTCondor keeps hook stderr in its daemon log.
   */
  logStderr?: boolean;
  /**
   * Whose rights the hook runs with in a multi-user instance (docs/hooks.md, "Who hooks run
   * as"): `{ job }` the job's user, `"root"` root (perilog's commands only). Used only by a
   * runner given `users` (the plugin's `p.hookUsers`); absent, or in a single-user
   * instance: the daemon's user.
   */
  runAs?: HookRunAs;
}

/** Another user a hook may run as: the job's user, or root. */
export type HookRunAs = { job: JobId } | "root";

/**
 * The run-as seam (a plugin passes `p.hookUsers`): the starter that runs a hook as `runAs`,
 * undefined when that is the daemon's own user (the runner's own starter then), or a
 * string saying why it cannot (a job that is gone, an isolated plugin).
 */
export interface HookUsers {
  starter(runAs: HookRunAs): ProcessStarter | string | undefined;
}

/**
 * The privileged launcher as the hook runner needs it: a starter that runs hooks as `uid`
 * for the job `job` (f58; "" for a root hook), which the launcher authorises itself.
 */
export interface HookLauncher {
  hookStarter(job: string, uid: number): ProcessStarter;
}

/** Fields every result has. */
interface HookResultBase {
  /** The label used in log lines. */
  name: string;
  path: string;
}

/** The program ran and ended (on its own, by a signal, at its time limit or by abort). */
export interface HookRan extends HookResultBase {
  kind: "exited" | "signaled";
  /** Exit code when kind is "exited", else null. */
  exitCode: number | null;
  /** Terminating signal when kind is "signaled", else null. */
  signal: NodeJS.Signals | null;
  /** The time limit was reached and the process group was sent SIGTERM (and SIGKILL). */
  timedOut: boolean;
  /** The caller's AbortSignal fired while the hook ran. */
  aborted: boolean;
  stdout: string;
  stderr: string;
  /** Bytes of stdout / stderr past the cap that were discarded. */
  stdoutDropped: number;
  stderrDropped: number;
  /** stdoutDropped + stderrDropped > 0. */
  truncated: boolean;
  pid: number;
  /** Clock time at spawn and the run's length by the runner's clock. */
  startedAt: number;
  durationMs: number;
}

/** The path failed the safety checks: nothing was run. */
export interface HookRefused extends HookResultBase {
  kind: "refused";
  reason: string;
}

/**
 * The program could not be started (ENOENT, EACCES, E2BIG, a NUL byte in an argument ...),
 * or (code `EHELPERLOST`) the spawn helper that started it died before it ended.
 */
export interface HookSpawnError extends HookResultBase {
  kind: "spawn-error";
  /** The errno name when there is one (`ENOENT`), else the Node error code. */
  code: string;
  reason: string;
}

/** The caller aborted (or the runner closed) before the hook started. */
export interface HookCancelled extends HookResultBase {
  kind: "cancelled";
  reason: string;
}

export type HookResult = HookRan | HookRefused | HookSpawnError | HookCancelled;

/** The log a runner writes to: a plugin passes its `p.log`. */
export interface HookLog {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Settings of one HookRunner. */
export interface HookRunnerOptions {
  /** Time limits run on this clock; a plugin passes `p.clock`. Default: the real clock. */
  clock?: Clock;
  /** The plugin running these hooks, labelling /metrics' hook series. Default: none (""). */
  plugin?: string;
  /** Where refusals, time limits, truncation and stderr are logged. Default: nowhere. */
  log?: HookLog;
  /** Hooks running at once; the rest wait in FIFO order. Default 16; Infinity for no limit. */
  maxInFlight?: number;
  /**
   * How long (ms, real time) a path found safe is trusted before it is examined again;
   * default 1000, 0 examines before every run. Refusals are never remembered.
   */
  pathCheckCacheMs?: number;
  /**
   * Start hook processes from this many long-lived helper processes instead of the daemon
   * itself (default 0: spawn directly). Spawning from a large process is slow and blocks its
   * event loop (fork copies its page tables); a helper is small and does it off the daemon's
   * thread. Every guarantee of a run is the same; a helper that dies fails its runs with the
   * code `EHELPERLOST` and is replaced at the next run. See docs/hooks.md.
   */
  spawnHelpers?: number;
  /** Where hooks with `runAs` are started (the plugin's `p.hookUsers`); none: as the daemon's user. */
  users?: HookUsers;
  /** Defaults for every run, overridden per run by the HookSpec. */
  defaults?: Pick<HookSpec, "timeLimitMs" | "killGraceMs" | "stdoutCap" | "stderrCap" | "env" | "logStderr">;
}

/** True when the hook ran, exited 0 and was not stopped at its time limit or by abort. */
export function hookSucceeded(r: HookResult): boolean {
  return r.kind === "exited" && r.exitCode === 0 && !r.timedOut && !r.aborted;
}

/** One line describing how a hook ended, for logs and messages. */
export function describeHookResult(r: HookResult): string {
  switch (r.kind) {
    case "exited":
      return `exited with status ${r.exitCode}${r.timedOut ? " after its time limit" : ""}${r.aborted ? " after abort" : ""}`;
    case "signaled":
      return `killed by ${r.signal}${r.timedOut ? " at its time limit" : ""}${r.aborted ? " on abort" : ""}`;
    case "refused":
      return `refused: ${r.reason}`;
    case "spawn-error":
      return r.code === "EHELPERLOST" ? `lost: ${r.reason}` : `could not be started: ${r.reason}`;
    case "cancelled":
      return `cancelled: ${r.reason}`;
  }
}

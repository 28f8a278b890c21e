/**
 * The job manager's options (`createJobManager`) and what they resolve to: the store, the
 * local pool, where output goes, the log, and the submit check a guest's local job must pass.
 */
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { ErrorCode, JobtapError } from "../errors.js";
import type { Clock } from "./base/clock.js";
import type { State } from "./base/states.js";
import type { Logger } from "./engine/engine.js";
import { cannotSwitch, type UserLauncher } from "./exec/run-as.js";
import { executorName } from "./exec/registry.js";
import type { JobLimits } from "./core/limits.js";
import type { SlotPolicy } from "./ads/hostads.js";
import type { SystemPolicy } from "./policy/user-policy.js";
import type { ManagerPort, PluginPort } from "./port/port.js";
import type { Jobspec } from "./port/records.js";
import type { ResourcePool, SlotType } from "./scheduler/slots.js";
import { MemoryStore } from "./store/memory.js";
import { SqliteStore } from "./store/sqlite.js";
import type { JobStore } from "./store/types.js";

/** What `createJobManager` takes; every field is optional. */
export interface JobManagerOptions {
  /** State directory: the SQLite store (jobtap.db) and per-job output files. */
  statedir?: string;
  /** Default: "sqlite" when a statedir is given, else "memory". */
  store?: "sqlite" | "memory" | JobStore;
  /** SQLite durability: "normal" (default, Flux's content-sqlite setting) or "full" (fsync per batch). */
  sqliteSynchronous?: "full" | "normal";
  clock?: Clock;
  /** Local pool; defaults: this machine's cores, 0 gpus, its total memory. */
  resources?: Partial<ResourcePool>;
  /**
   * Static slots carved from the pool (`[resources] slots`, src/manager/scheduler/slots.ts); default:
   * one slot with everything. A layout that does not fit throws CONFIG naming
   * `[resources].slots[i]`.
   */
  slots?: readonly SlotType[];
  /** Store batch window in ms (default 10). */
  batchWindowMs?: number;
  /** Seconds an inactive job is kept before purge (default: forever). */
  inactiveAgeLimit?: number;
  /** Inactive jobs kept before the oldest are purged (default: unlimited). */
  inactiveNumLimit?: number;
  /** Queued jobs one scheduling pass may look at (default 1: strict first-come). */
  queueDepth?: number;
  /** PERIODIC_EXPR_INTERVAL in ms: how often PeriodicRemove/Hold/Release are evaluated (default 60 s; 0: never). */
  periodicExprIntervalMs?: number;
  /** The site's SYSTEM_PERIODIC_HOLD/RELEASE/REMOVE (policy/system-periodic.ts). */
  systemPeriodic?: SystemPolicy;
  /** Each slot's START/RANK/PREEMPT/STARTD_ATTRS (index = SlotID - 1; policy/slot-policy.ts). */
  slotPolicy?: readonly SlotPolicy[];
  /** Attaches the plugin host; called after replay, before restart callbacks. */
  plugins?: (mgr: ManagerPort) => PluginPort | Promise<PluginPort>;
  log?: Logger;
  /** The instance owner's uid (default: this process's uid). */
  owner?: number;
  /** Grace between SIGTERM and SIGKILL for local jobs (default 5000 ms). */
  killTimeoutMs?: number;
  /**
   * Starts local jobs' tasks as their users (exec/run-as.ts; default: switching users only
   * when this process is root). A guest's local job is refused at submit when it cannot.
   */
  launcher?: UserLauncher;
  /** The instance configuration handed to plugins (conf.update). */
  config?: Record<string, unknown>;
  /** Size limits a job must meet at submit (default DEFAULT_JOB_LIMITS; see limits.ts). */
  limits?: Partial<JobLimits>;
}

/** Listing filter for `jobs()`. */
export interface JobFilter {
  states?: readonly State[];
  userid?: number;
}

/** The log when the options name none: errors to stderr. */
export const defaultLog: Logger = (level, msg) => {
  if (level === "error") process.stderr.write(`jobtap: ${msg}\n`);
};

/** The store the options name: a given one, a MemoryStore, or the statedir's SQLite file. */
export function openStore(opts: JobManagerOptions, now: number): JobStore {
  const kind = opts.store ?? (opts.statedir ? "sqlite" : "memory");
  if (typeof kind === "object") return kind;
  if (kind === "memory") return new MemoryStore(now);
  if (!opts.statedir) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, 'store "sqlite" needs a statedir');
  return new SqliteStore(join(opts.statedir, "jobtap.db"), {
    epochMs: now,
    ...(opts.sqliteSynchronous ? { synchronous: opts.sqliteSynchronous } : {}),
  });
}

/**
 * The submit check of a guest's job: one the local executor would run must be runnable as
 * the guest (never as the daemon's user instead).
 */
export function guestRunnable(launcher: UserLauncher | undefined, owner: number): ((userid: number, jobspec: Jobspec) => void) | undefined {
  if (launcher?.refusesRoot) {
    return (userid, jobspec) => {
      if (userid === 0 && owner !== 0 && executorName(jobspec) === "local") throw rootRefused();
    };
  }
  if (launcher === undefined || launcher.canSwitchUsers) return undefined;
  const self = process.getuid?.() ?? 0;
  return (userid, jobspec) => {
    if (userid !== self && userid !== owner && executorName(jobspec) === "local") throw cannotSwitch(userid, self);
  };
}

/** A multi-user instance runs no job as root unless `[exec] allow-root` says so. */
function rootRefused(): JobtapError {
  return new JobtapError(
    ErrorCode.PERMISSION_DENIED,
    "this instance runs no job as root: [exec] allow-root is false (see docs/site.md); submit as another user",
    { userid: 0 },
  );
}

/** Where local jobs' output goes when their jobspec names no path. */
export function outputDirOf(opts: JobManagerOptions): string {
  return opts.statedir ? join(opts.statedir, "jobs") : join(tmpdir(), `jobtap-${process.pid}`);
}

/** The local pool the options give (this machine's cores and memory by default). */
export function poolOf(opts: JobManagerOptions): ResourcePool {
  return {
    cores: opts.resources?.cores ?? cpus().length,
    gpus: opts.resources?.gpus ?? 0,
    memory: opts.resources?.memory ?? totalmem(),
  };
}

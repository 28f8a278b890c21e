/**
 * Size limits a job must meet to be accepted at submit: what a site configures under
 * `[limits]` (docs/configuration.md). They apply to every submitter alike, owner and guests.
 *
 * The exec limits exist because Linux refuses to start a process whose argv or environment
 * is too large (E2BIG): one string may hold at most 131,072 bytes with its terminating NUL,
 * and all of them together at most a quarter of the stack limit (2 MiB by default). A job
 * that could never start is refused at submit, naming the entry and the limit, instead of
 * being accepted and failing later.
 */
import { ErrorCode, JobtapError } from "../../errors.js";
import type { Jobspec } from "../port/records.js";

export interface JobLimits {
  /** Bytes of one jobspec as JSON. */
  jobspecBytes: number;
  /** Bytes of one command-line argument, or of one environment entry `NAME=value`. */
  argumentBytes: number;
  /** Bytes of a task's whole command line and environment together (each with its NUL). */
  execBytes: number;
  /** Active (not yet inactive) jobs one user may have at once. */
  jobsPerUser: number;
  /** Bytes of jobspecs one user's stored jobs hold, active and inactive (0: no limit). */
  jobspecBytesPerUser: number;
  /** Entries one job's eventlog may reach through requests (urgency, update, post-event, non-fatal exceptions). */
  eventlogEntries: number;
  /** Jobs one user may submit per second, on average (0: no limit); see rate.ts. */
  submitRate: number;
  /** Jobs one user may submit at once before the rate applies (0: ten seconds' worth). */
  submitBurst: number;
}

/** The kernel's own cap on one argument or environment string, without its NUL. */
export const KERNEL_ARGUMENT_MAX = 131_071;

export const DEFAULT_JOB_LIMITS: JobLimits = {
  jobspecBytes: 2 * 1024 * 1024,
  argumentBytes: KERNEL_ARGUMENT_MAX,
  execBytes: 1024 * 1024,
  jobsPerUser: 100_000,
  jobspecBytesPerUser: 1024 ** 3,
  eventlogEntries: 10_000,
  submitRate: 0,
  submitBurst: 0,
};

/** The configuration key each limit is set by (named in refusals). */
const KEY: Record<keyof JobLimits, string> = {
  jobspecBytes: "[limits] jobspec-size",
  argumentBytes: "[limits] argument-size",
  execBytes: "[limits] exec-size",
  jobsPerUser: "[limits] jobs-per-user",
  jobspecBytesPerUser: "[limits] jobspec-bytes-per-user",
  eventlogEntries: "[limits] eventlog-entries",
  submitRate: "[limits] submit-rate",
  submitBurst: "[limits] submit-burst",
};

/** LIMIT_EXCEEDED for a user at [limits] jobs-per-user active jobs. */
export function checkJobsPerUser(userid: number, active: number, limits: JobLimits): void {
  if (active < limits.jobsPerUser) return;
  throw new JobtapError(
    ErrorCode.LIMIT_EXCEEDED,
    `user ${userid} already has ${active} active jobs, the limit (${KEY.jobsPerUser} = ${limits.jobsPerUser}); wait for some to finish`,
    { limit: KEY.jobsPerUser, userid },
  );
}

/**
 * LIMIT_EXCEEDED if a job whose jobspec is `bytes` long would bring the jobspec bytes
 * `userid`'s stored jobs hold (`stored`, inactive jobs included) past [limits]
 * jobspec-bytes-per-user. Purging inactive jobs makes room.
 */
export function checkJobspecBytesPerUser(userid: number, stored: number, bytes: number, limits: JobLimits): void {
  const max = limits.jobspecBytesPerUser;
  if (max === 0 || stored + bytes <= max) return;
  const n = (v: number) => v.toLocaleString("en-US");
  throw new JobtapError(
    ErrorCode.LIMIT_EXCEEDED,
    `${KEY.jobspecBytesPerUser}: user ${userid} stores ${n(stored)} bytes of jobspecs; this job's ${n(bytes)} would pass the limit of ${n(max)}; purge inactive jobs (jobtap job purge --force) to make room`,
    { limit: KEY.jobspecBytesPerUser, userid },
  );
}

/** LIMIT_EXCEEDED when a request would grow job `id`'s eventlog past [limits] eventlog-entries. */
export function checkEventlogEntries(id: string, entries: number, limits: JobLimits): void {
  if (entries < limits.eventlogEntries) return;
  throw new JobtapError(
    ErrorCode.LIMIT_EXCEEDED,
    `job ${id}: its eventlog has ${entries} entries, the limit (${KEY.eventlogEntries} = ${limits.eventlogEntries}); only a cancel or a fatal exception is still accepted`,
    { limit: KEY.eventlogEntries, id },
  );
}

/**
 * Throws BAD_JOBSPEC naming what is too large if `jobspec` exceeds a limit. `jsonBytes`:
 * the jobspec's JSON size when the caller already knows it.
 */
export function checkJobLimits(jobspec: Jobspec, limits: JobLimits, jsonBytes?: number): void {
  const size = jsonBytes ?? Buffer.byteLength(JSON.stringify(jobspec));
  if (size > limits.jobspecBytes) {
    throw new JobtapError(ErrorCode.BAD_JOBSPEC, `jobspec: ${size} bytes, over the limit of ${limits.jobspecBytes} bytes (${KEY.jobspecBytes})`, {
      limit: KEY.jobspecBytes,
    });
  }
  const env = jobspec.attributes?.system?.environment;
  let envBytes = 0;
  if (env !== undefined && (env === null || typeof env !== "object" || Array.isArray(env))) {
    throw new JobtapError(ErrorCode.BAD_JOBSPEC, "jobspec: attributes.system.environment must be a table of NAME = string");
  }
  if (env !== undefined) {
    for (const [name, value] of Object.entries(env as Record<string, unknown>)) {
      if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
        throw new JobtapError(ErrorCode.BAD_JOBSPEC, `jobspec: attributes.system.environment.${name} must be a string, not ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`);
      }
      const n = Buffer.byteLength(name) + 1 + Buffer.byteLength(String(value));
      if (n > limits.argumentBytes) over(`environment variable ${name} is ${n} bytes`, limits, "argumentBytes");
      envBytes += n + 1;
    }
  }
  const tasks = jobspec.tasks as Array<{ command: string[] }>;
  for (let t = 0; t < tasks.length; t++) {
    const command = tasks[t]!.command;
    let total = envBytes;
    for (let i = 0; i < command.length; i++) {
      const n = Buffer.byteLength(command[i]!);
      if (n > limits.argumentBytes) over(`tasks[${t}].command[${i}] is ${n} bytes`, limits, "argumentBytes");
      total += n + 1;
    }
    if (total > limits.execBytes) {
      over(`tasks[${t}]: the command line and environment are ${total} bytes together`, limits, "execBytes");
    }
  }
}

function over(what: string, limits: JobLimits, key: keyof JobLimits): never {
  throw new JobtapError(
    ErrorCode.BAD_JOBSPEC,
    `jobspec: ${what}, over the limit of ${limits[key]} bytes (${KEY[key]}); a process could not be started with it`,
    { limit: KEY[key] },
  );
}

/**
 * The one registry of jobtap error codes.
 *
 * Expected outcomes (a rejected job, an unavailable priority, a ClassAd `error` value) are
 * values, not exceptions. A `JobtapError` is for bugs, misuse and bad input that a caller must
 * see: it carries a stable string `code` from this table. Branch on `code`, never on
 * `instanceof`: errors cross worker threads and the daemon socket as plain objects.
 *
 * Each area keeps its codes in its own block below; add new codes to your area's block.
 */
export const ErrorCode = {
  // --- general ---------------------------------------------------------------------------
  INTERNAL: "INTERNAL",
  INVALID_ARGUMENT: "INVALID_ARGUMENT",
  NOT_SUPPORTED: "NOT_SUPPORTED",
  PERMISSION_DENIED: "PERMISSION_DENIED",
  /** A configured limit (`[limits]`) was reached; details.limit names its key. */
  LIMIT_EXCEEDED: "LIMIT_EXCEEDED",

  // --- job manager (src/manager) ---------------------------------------------------------
  BAD_JOBID: "BAD_JOBID",
  UNKNOWN_JOB: "UNKNOWN_JOB",
  JOB_INACTIVE: "JOB_INACTIVE",
  BAD_JOBSPEC: "BAD_JOBSPEC",
  BAD_URGENCY: "BAD_URGENCY",
  BAD_EXCEPTION: "BAD_EXCEPTION",
  BAD_EVENT: "BAD_EVENT",
  BAD_STATE: "BAD_STATE",
  STORE_OPEN: "STORE_OPEN",
  STORE_WRITE: "STORE_WRITE",
  STORE_CORRUPT: "STORE_CORRUPT",
  MANAGER_CLOSED: "MANAGER_CLOSED",
  JOB_REJECTED: "JOB_REJECTED",
  /** A job names a slot that does not exist (`attributes.system.slot`). */
  UNKNOWN_SLOT: "UNKNOWN_SLOT",

  // --- plugin host (src/plugins) ---------------------------------------------------------
  PLUGIN_NOT_FOUND: "PLUGIN_NOT_FOUND",
  PLUGIN_ALREADY_LOADED: "PLUGIN_ALREADY_LOADED",
  PLUGIN_LOAD: "PLUGIN_LOAD",
  PLUGIN_BAD_SHAPE: "PLUGIN_BAD_SHAPE",
  PLUGIN_PHASE: "PLUGIN_PHASE",
  PLUGIN_CALL: "PLUGIN_CALL",
  PLUGIN_DEADLINE: "PLUGIN_DEADLINE",
  CONFIG: "CONFIG",

  // --- ClassAd language (src/classad) ----------------------------------------------------
  CLASSAD_SYNTAX: "CLASSAD_SYNTAX",
  /** A write to a read-only (shared) ClassAd, such as a cached job ad. */
  FROZEN_AD: "FROZEN_AD",

  // --- HTCondor config and transforms (src/condor) ---------------------------------------
  CONDOR_CONFIG: "CONDOR_CONFIG",
  CONDOR_TRANSFORM: "CONDOR_TRANSFORM",

  // --- hook programs (src/hooks) ---------------------------------------------------------
  HOOK: "HOOK",

  // --- daemon and CLI (src/server, src/cli) ----------------------------------------------
  NO_DAEMON: "NO_DAEMON",
  NOT_AUTHENTICATED: "NOT_AUTHENTICATED",
  PROTOCOL: "PROTOCOL",
  USAGE: "USAGE",
  /** An HTTP path or REST route that does not exist (404). */
  NOT_FOUND: "NOT_FOUND",
  /** A bearer token spent its request rate (`[daemon] http-rate-limit`): 429 with Retry-After. */
  RATE_LIMITED: "RATE_LIMITED",
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The plain-object form of a JobtapError: what crosses a worker thread or the socket. */
export interface JobtapErrorData {
  code: ErrorCode;
  message: string;
  /** Optional structured details (a TOML path, a job id in f58, a plugin name, ...). */
  details?: Record<string, unknown>;
}

/** An error with a stable code. The message names what was wrong and where. */
export class JobtapError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = "JobtapError";
    this.code = code;
    this.details = details;
  }

  /** Plain-object form, safe to structured-clone or JSON-encode. */
  toJSON(): JobtapErrorData {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }

  /** Rebuilds an error from its plain-object form (e.g. received from a worker). */
  static from(data: JobtapErrorData): JobtapError {
    return new JobtapError(data.code, data.message, data.details);
  }
}

/**
 * `e` as a JobtapError when it carries a jobtap error code (itself, or rebuilt from its
 * plain-object form, e.g. from a worker thread); undefined for any other error. Branch on
 * this, never on `instanceof JobtapError`.
 */
export function codedError(e: unknown): JobtapError | undefined {
  if (!isJobtapError(e)) return undefined;
  return e instanceof Error ? (e as JobtapError) : JobtapError.from(e);
}

/** True if `e` carries a jobtap error code (a JobtapError or its plain-object form). */
export function isJobtapError(e: unknown, code?: ErrorCode): e is JobtapErrorData {
  if (typeof e !== "object" || e === null) return false;
  const c = (e as { code?: unknown }).code;
  if (typeof c !== "string" || !(Object.values(ErrorCode) as string[]).includes(c)) return false;
  return code === undefined || c === code;
}

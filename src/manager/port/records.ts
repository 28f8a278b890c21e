/**
 * The records that cross the seam between the manager and the plugin host: eventlog
 * entries, jobspecs and the args of a job topic. The bottom of src/manager's interface
 * types: port.ts, topics.ts and executor.ts build on them.
 */
import type { JobId } from "../base/ids.js";
import type { State } from "../base/states.js";

/** One eventlog entry (RFC 18). */
export interface EventEntry {
  timestamp: number;
  name: string;
  context?: Record<string, unknown>;
}

/** A Flux jobspec v1, loosely typed: plugins read it, the manager validates what it uses. */
export interface Jobspec {
  version: number;
  resources: unknown[];
  tasks: unknown[];
  attributes: {
    system?: Record<string, unknown>;
    user?: Record<string, unknown>;
    [k: string]: unknown;
  };
}

/**
 * The standard IN args of a job topic (spec §4.1), built fresh for each stack call.
 * `jobspec` is redacted: `attributes.system.environment` is never present.
 */
export interface JobArgs {
  id: JobId;
  userid: number;
  urgency: number;
  /** -1 until the first `priority` event. */
  priority: number;
  state: State;
  t_submit: number;
  jobspec: Jobspec;
  /** Present once allocated (or supplied by a plugin in SCHED). */
  R?: Record<string, unknown>;
  /** The event that moved the job to CLEANUP, if any. */
  end_event?: EventEntry;
  /** `job.state.*` and `job.event.*`: the posted entry. */
  entry?: EventEntry;
  /** `job.state.*`: the state before the transition. */
  prev_state?: State;
  /** `job.dependency.<scheme>`: the dependency object from the jobspec. */
  dependency?: { scheme: string; value?: unknown; [k: string]: unknown };
  /** `job.update`: the jobspec-update context. */
  updates?: Record<string, unknown>;
  /** `job.update.<key>` only. */
  cred?: { userid: number; owner: boolean };
  key?: string;
  value?: unknown;
  /** Outstanding dependency descriptions, insertion order (frozen). */
  dependencies: readonly string[];
  annotations: Record<string, unknown> | null;
  flags: readonly string[];
}

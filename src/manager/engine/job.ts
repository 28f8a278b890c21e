/**
 * The manager's runtime record of an active job: the folded JobCore plus the things that
 * are not in the eventlog (mailbox queue, holds, requests in flight, caches).
 */
import type { ClassAd } from "../../classad/classad.js";
import type { JobAdBase, MatchTimes } from "../ads/jobad.js";
import type { PolicyAdCache } from "../ads/policy-ad.js";
import type { JobId } from "../base/ids.js";
import type { JobResult } from "../base/states.js";
import type { ExecReport, Executor } from "../port/executor.js";
import type { EventEntry, Jobspec } from "../port/records.js";
import type { QueueEntry } from "../scheduler/scheduler.js";
import type { JobCore } from "../core/transition.js";
import { hasEnvironment, redactJobspec, type ResourceRequest } from "../core/jobspec.js";

/** One registered executor and the report handle bound to it. */
export interface ExecRegistration {
  readonly name: string;
  readonly executor: Executor;
  /** The plugin that registered it (undefined: the manager's builtins). */
  readonly plugin: string | undefined;
  readonly report: ExecReport;
}

/** A job's executor while it runs (ActiveJob.exec). */
export interface ExecBinding {
  readonly reg: ExecRegistration;
  released: boolean;
  killed: boolean;
}

/** The outcome `wait(id)` resolves with. */
export interface WaitResult {
  id: JobId;
  result: JobResult;
  success: boolean;
  /** Why it did not succeed, in Flux's words. */
  errstr?: string;
}

export interface ActiveJob {
  /** Updated in place by the engine (applyEvent): not a snapshot. */
  readonly core: JobCore;
  /** Bumped whenever the engine changes `core`: what caches keyed on the core compare. */
  revision: number;
  /**
   * The committed eventlog, in memory only while the job is active (a restored job's may be
   * read back from the store on first use: dropEventlog). Appends go through appendEvent.
   */
  eventlog: EventEntry[];
  /** Appends one committed entry (without reading a dropped eventlog back). */
  appendEvent(e: EventEntry): void;
  /** How many entries the eventlog has (without reading a dropped one back). */
  readonly eventCount: number;
  /**
   * The exec eventlog (executor state saved for reattach: `exec-state` entries), apart from
   * the main eventlog as in Flux. Undefined until the executor first saves something.
   */
  execlog: EventEntry[] | undefined;
  /** Mailbox: events posted but not yet processed (FIFO). */
  queue: EventEntry[];
  /** True while an event of this job is being processed (posts are queued). */
  busy: boolean;
  /** Holds: > 0 keeps queued events waiting (batch commit at submit, async callbacks). */
  hold: number;
  /** Runtime flags Flux keeps on its job struct. */
  dependQueued: boolean;
  startRequested: boolean;
  freeRequested: boolean;
  cleanQueued: boolean;
  /** Cached redacted jobspec (cleared on jobspec-update). */
  redacted?: Jobspec | undefined;
  /** Cached resource request (cleared on jobspec-update). */
  request?: ResourceRequest | undefined;
  /** Its alloc request in the scheduler's queue (live while queued; scheduler.ts). */
  schedEntry?: QueueEntry | undefined;
  /** Bytes of the jobspec as stored (its JSON), counted against [limits] jobspec-bytes-per-user. */
  jobspecBytes: number;
  /** The job's slot in the current store batch, once it has text there (see batch.ts). */
  batchSlot?: number | undefined;
  /** The number of the last store batch the job had text in (StoreBatcher.durableFor). */
  batchCut?: number | undefined;
  /**
   * Set while the job is under admission: its eventlog from this index on is not in the
   * store yet (it reaches the store only once accepted).
   */
  unstoredFrom?: number | undefined;
  /** Set while the job is under admission (submit.ts): told its id once its batch is
   *  durable (the submitter's promise's own resolve), or the error (its reject). */
  admitted?: ((id: JobId) => void) | undefined;
  refused?: ((err: unknown) => void) | undefined;
  /**
   * Its admission reached job.new (it passed job.validate and its dependencies): a plugin
   * loaded or restarted from then on gets job.new for it in its replay, even while it is
   * still in NEW waiting for its batch (submit.ts).
   */
  announced: boolean;
  /** The executor running the job, from start (or reattach) until it is released. */
  exec?: ExecBinding | undefined;
  /** The job ad built for `core` (jobads.ts); stale once the core or `matchTimes` changed. */
  adCache?: { revision: number; base: JobAdBase; ad: ClassAd; times: MatchTimes | undefined } | undefined;
  /** The policy-only ad (ads/policy-ad.ts), for the periodic policy; stale as `adCache` is. */
  policyAd?: PolicyAdCache | undefined;
  /** LastMatchTime / LastRejMatchTime (policy/matchmaker.ts): replaced, never changed in place. */
  matchTimes?: MatchTimes | undefined;
  /** The matchmaker's group for this job and what it was made from (policy/matchmaker.ts). */
  matchKey?: { revision: number; generation: number; group: object } | undefined;
  /** Resolvers of `wait(id)`: each gets a result of its own when the job retires. */
  waiters?: Array<(r: WaitResult) => void>;
}

/**
 * Reads a restored job's committed eventlog back from the store (see dropEventlog).
 * `recalled`, if set, is told of each job whose entries were read back and are now in
 * memory again (kept.ts: it drops the oldest of them again).
 */
export type EventlogReader = ((id: JobId) => EventEntry[]) & { recalled?: (job: ActiveJob) => void };

/**
 * The ActiveJob record. Its eventlog is a field read through an accessor: a job restored
 * from the store may leave its parsed entries there (dropEventlog), to be read back on
 * first use; everything else is a plain field, each set from the start (added later,
 * every job would need a property array).
 */
class JobRecord implements ActiveJob {
  revision = 0;
  /** The eventlog, or undefined while its first `stored` entries are in the store only. */
  private log: EventEntry[] | undefined = [];
  private reader: EventlogReader | undefined = undefined;
  /** While dropped: how many entries the store holds for sure, and those appended since. */
  private stored = 0;
  private tail: EventEntry[] | undefined = undefined;
  execlog: EventEntry[] | undefined = undefined;
  queue: EventEntry[] = [];
  busy = false;
  hold = 0;
  dependQueued = false;
  startRequested = false;
  freeRequested = false;
  cleanQueued = false;
  jobspecBytes = 0;
  redacted: Jobspec | undefined = undefined;
  request: ResourceRequest | undefined = undefined;
  schedEntry: QueueEntry | undefined = undefined;
  batchSlot: number | undefined = undefined;
  batchCut: number | undefined = undefined;
  unstoredFrom: number | undefined = undefined;
  admitted: ((id: JobId) => void) | undefined = undefined;
  refused: ((err: unknown) => void) | undefined = undefined;
  announced = false;
  exec: ExecBinding | undefined = undefined;
  adCache: ActiveJob["adCache"] = undefined;
  policyAd: PolicyAdCache | undefined = undefined;
  matchTimes: MatchTimes | undefined = undefined;
  matchKey: ActiveJob["matchKey"] = undefined;
  waiters: Array<(r: WaitResult) => void> | undefined = undefined;

  constructor(readonly core: JobCore) {}

  get eventlog(): EventEntry[] {
    return this.log ?? this.readBack();
  }

  set eventlog(entries: EventEntry[]) {
    this.log = entries;
    this.reader = undefined;
    this.tail = undefined;
  }

  appendEvent(e: EventEntry): void {
    if (this.log !== undefined) this.log.push(e);
    else (this.tail ??= []).push(e);
  }

  get eventCount(): number {
    return this.log?.length ?? this.stored + (this.tail?.length ?? 0);
  }

  get dropped(): boolean {
    return this.log === undefined;
  }

  /** See dropEventlog. Dropped again, the entries appended meanwhile count as stored. */
  drop(read: EventlogReader): void {
    if (this.log === undefined) this.stored += this.tail?.length ?? 0;
    else this.stored = this.log.length;
    this.log = undefined;
    this.tail = undefined;
    this.reader = read;
    // A drained mailbox keeps the backing store its events grew (~150 bytes); setting the
    // length releases it. Only here: on the hot path it would be grown again per event.
    if (this.queue.length === 0) this.queue.length = 0;
  }

  /** The store's first `stored` entries (it may hold more, in a batch since), then the tail. */
  private readBack(): EventEntry[] {
    const reader = this.reader!;
    const read = reader(this.core.id);
    const entries = read.length > this.stored ? read.slice(0, this.stored) : read;
    if (this.tail !== undefined) for (const e of this.tail) entries.push(e);
    this.eventlog = entries;
    reader.recalled?.(this);
    return entries;
  }
}

/** An active job around a replayed or freshly submitted core: empty mailbox, not held. */
export function newActiveJob(core: JobCore): ActiveJob {
  return new JobRecord(core);
}

/**
 * Drops a job's parsed eventlog: read back from the store (`read`) the first time anything
 * reads `job.eventlog`; entries appended meanwhile (appendEvent) stay in memory and follow
 * the stored ones. Only for a job whose whole eventlog is durable in the store: just
 * replayed from it, or dropped before with everything appended since committed. A waiting
 * job's entries are most of its memory (issue 41).
 */
export function dropEventlog(job: ActiveJob, read: EventlogReader): void {
  if (job instanceof JobRecord) job.drop(read);
}

/** True while the job's eventlog is dropped (dropEventlog): its entries are read back on use. */
export function eventlogDropped(job: ActiveJob): job is JobRecord {
  return job instanceof JobRecord && job.dropped;
}

/**
 * The jobspec plugins see, computed once per jobspec version. `shared` (one per manager)
 * maps a jobspec object to its redaction, so jobs submitted with one shared jobspec (the
 * daemon's `--cc`) share one redacted object too, and the plugin host's frozen copy of it.
 * A jobspec without an environment is its own redaction: no lookup (a WeakMap holding one
 * key per job cost more than the whole redaction).
 */
export function redactedJobspec(job: ActiveJob, shared?: WeakMap<Jobspec, Jobspec>): Jobspec {
  if (job.redacted) return job.redacted;
  const js = job.core.jobspec;
  if (!hasEnvironment(js)) return (job.redacted = js);
  let r = shared?.get(js);
  if (r === undefined) {
    r = redactJobspec(js);
    shared?.set(js, r);
  }
  return (job.redacted = r);
}

/** True if an event with this name sits in the job's mailbox. */
export function queued(job: ActiveJob, name: string): boolean {
  for (const e of job.queue) if (e.name === name) return true;
  return false;
}

/** `attributes.system.duration` in seconds (0 = unlimited). */
export function durationOf(jobspec: Jobspec): number {
  const d = jobspec.attributes.system?.duration;
  return typeof d === "number" && d > 0 ? d : 0;
}

/** The job name Flux shows: attributes.system.job.name, else the command's basename. */
export function jobName(jobspec: Jobspec): string {
  const n = (jobspec.attributes.system?.job as { name?: unknown } | undefined)?.name;
  if (typeof n === "string") return n;
  const cmd = (jobspec.tasks[0] as { command?: string[] } | undefined)?.command?.[0] ?? "";
  return cmd.slice(cmd.lastIndexOf("/") + 1);
}

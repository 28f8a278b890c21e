/**
 * The inactive cache: compact records of finished jobs, kept up to an age and a count
 * limit, then purged (from memory and the store) with `job.inactive-remove`. Full
 * eventlogs and jobspecs of inactive jobs are not kept in memory; they are read from the
 * store on demand.
 *
 * This is the manager's memory per finished job, so it is kept in columns (typed arrays
 * indexed by a slot number) rather than an object per job: a record object costs about
 * 150 bytes of heap with its boxed times, the columns about 45. A Map from job id to slot
 * keeps the order (inactivation order) and the lookup; InactiveRecord objects are built only
 * for the caller that asks.
 */
import type { Clock, TimerHandle } from "./clock.js";
import type { JobId } from "./ids.js";
import { RESULTS, type JobResult } from "./states.js";

/** What is kept of an inactive job (a view built on demand; the cache holds columns). */
export interface InactiveRecord {
  readonly id: JobId;
  readonly userid: number;
  readonly urgency: number;
  readonly priority: number;
  readonly t_submit: number;
  readonly t_clean: number;
  /** Index into RESULTS. */
  readonly result: number;
  readonly name: string;
  /** Wait status from `finish`, -1 if none. */
  readonly waitStatus: number;
  /** The job's annotations when it became inactive (Flux keeps them on inactive jobs;
   *  after a restart only the eventlog's `memo`s are left). Null for most jobs. */
  readonly annotations: Record<string, unknown> | null;
}

/** The result name (COMPLETED, FAILED, ...) of an inactive record. */
export function resultName(r: InactiveRecord): JobResult {
  return RESULTS[r.result] ?? "FAILED";
}

export interface InactiveLimits {
  /** Seconds an inactive job is kept (default: forever). */
  ageLimit?: number;
  /** How many inactive jobs are kept (default: unlimited). */
  numLimit?: number;
}

/** Names kept as one shared string each while this many distinct ones are seen. */
const NAME_CACHE_MAX = 1024;

/**
 * The records' fields, one typed array per field, indexed by slot. Freed slots are reused;
 * the arrays double when full and never shrink (a daemon that once held N inactive jobs
 * will again).
 */
class Columns {
  userid = new Float64Array(0);
  urgency = new Int32Array(0);
  priority = new Float64Array(0);
  t_submit = new Float64Array(0);
  t_clean = new Float64Array(0);
  waitStatus = new Float64Array(0);
  result = new Uint8Array(0);
  /** Strings are shared between jobs of the same name (see `intern`). */
  name: string[] = [];
  /** The rare annotated job's annotations, by slot. */
  readonly annotations = new Map<number, Record<string, unknown>>();
  private readonly free: number[] = [];
  private used = 0;
  private readonly names = new Map<string, string>();

  /** Stores a record's fields in a free slot; returns the slot. */
  put(r: InactiveRecord): number {
    const slot = this.free.pop() ?? this.used++;
    if (slot >= this.userid.length) this.grow(Math.max(64, this.userid.length * 2));
    this.userid[slot] = r.userid;
    this.urgency[slot] = r.urgency;
    this.priority[slot] = r.priority;
    this.t_submit[slot] = r.t_submit;
    this.t_clean[slot] = r.t_clean;
    this.waitStatus[slot] = r.waitStatus;
    this.result[slot] = r.result;
    this.name[slot] = this.intern(r.name);
    if (r.annotations !== null) this.annotations.set(slot, r.annotations);
    return slot;
  }

  /** The record in `slot`, as an object. */
  record(id: JobId, slot: number): InactiveRecord {
    return {
      id,
      userid: this.userid[slot]!,
      urgency: this.urgency[slot]!,
      priority: this.priority[slot]!,
      t_submit: this.t_submit[slot]!,
      t_clean: this.t_clean[slot]!,
      result: this.result[slot]!,
      name: this.name[slot]!,
      waitStatus: this.waitStatus[slot]!,
      annotations: this.annotations.get(slot) ?? null,
    };
  }

  release(slot: number): void {
    this.name[slot] = "";
    this.annotations.delete(slot);
    this.free.push(slot);
  }

  private grow(n: number): void {
    const widen = <T extends Uint32Array | Int32Array | Float64Array | Uint8Array>(a: T, make: new (n: number) => T): T => {
      const b = new make(n);
      b.set(a);
      return b;
    };
    this.userid = widen(this.userid, Float64Array);
    this.urgency = widen(this.urgency, Int32Array);
    this.priority = widen(this.priority, Float64Array);
    this.t_submit = widen(this.t_submit, Float64Array);
    this.t_clean = widen(this.t_clean, Float64Array);
    this.waitStatus = widen(this.waitStatus, Float64Array);
    this.result = widen(this.result, Uint8Array);
  }

  /** One string object per distinct name while few are seen (most jobs share a handful). */
  private intern(name: string): string {
    const known = this.names.get(name);
    if (known !== undefined) return known;
    if (this.names.size >= NAME_CACHE_MAX) this.names.clear();
    this.names.set(name, name);
    return name;
  }
}

export class InactiveCache {
  /** Insertion order is inactivation order: oldest first, which is purge order. */
  private slots = new Map<JobId, number>();
  private readonly columns = new Columns();
  private timer: TimerHandle | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly limits: InactiveLimits,
    private readonly purge: (r: InactiveRecord) => void,
  ) {}

  get size(): number {
    return this.slots.size;
  }

  has(id: JobId): boolean {
    return this.slots.has(id);
  }

  /** The job's record (a new object each call), or undefined if it is not cached. */
  get(id: JobId): InactiveRecord | undefined {
    const slot = this.slots.get(id);
    return slot === undefined ? undefined : this.columns.record(id, slot);
  }

  /** The job's user, or undefined if it is not cached (no record built). */
  userid(id: JobId): number | undefined {
    const slot = this.slots.get(id);
    return slot === undefined ? undefined : this.columns.userid[slot];
  }

  /** The records, oldest inactivation first. */
  oldestFirst(): InactiveRecord[] {
    const out: InactiveRecord[] = [];
    this.slots.forEach((slot, id) => out.push(this.columns.record(id, slot)));
    return out;
  }

  /** The records, most recent inactivation first, optionally only one user's. */
  newestFirst(userid?: number): InactiveRecord[] {
    const ids: JobId[] = [];
    const slots: number[] = [];
    const uids = this.columns.userid;
    this.slots.forEach((slot, id) => {
      if (userid !== undefined && uids[slot] !== userid) return;
      ids.push(id);
      slots.push(slot);
    });
    const out = new Array<InactiveRecord>(ids.length);
    for (let i = 0, j = ids.length - 1; j >= 0; i++, j--) out[i] = this.columns.record(ids[j]!, slots[j]!);
    return out;
  }

  /** The cached ids, oldest inactivation first; live (a job purged meanwhile is skipped). */
  ids(): IterableIterator<JobId> {
    return this.slots.keys();
  }

  /** Adds a record; returns false if it was already there. Then enforces the limits. */
  add(r: InactiveRecord): boolean {
    if (this.slots.has(r.id)) return false;
    this.slots.set(r.id, this.columns.put(r));
    this.enforce();
    return true;
  }

  /**
   * Restart replay: puts a stored job's record in (replacing one of the same id) without
   * enforcing the limits; replay calls `sortById` and, once plugins are attached, `enforce`.
   */
  restore(r: InactiveRecord): void {
    const old = this.slots.get(r.id);
    if (old !== undefined) this.columns.release(old);
    this.slots.set(r.id, this.columns.put(r));
  }

  /** Restart replay: the cache in id (submit) order, the order a restarted manager purges in. */
  sortById(): void {
    let last: JobId | undefined;
    let sorted = true;
    for (const id of this.slots.keys()) {
      if (last !== undefined && id < last) sorted = false;
      last = id;
    }
    if (sorted) return;
    const entries = [...this.slots].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    this.slots = new Map(entries);
  }

  /** Purges one job now (e.g. an explicit purge request). Returns false if not cached. */
  remove(id: JobId): boolean {
    const slot = this.slots.get(id);
    if (slot === undefined) return false;
    const r = this.columns.record(id, slot);
    this.slots.delete(id);
    this.columns.release(slot);
    this.purge(r);
    return true;
  }

  /** Applies the count limit, then the age limit, and arms a timer for the next expiry. */
  enforce(): void {
    const num = this.limits.numLimit;
    if (num !== undefined) {
      for (const id of this.slots.keys()) {
        if (this.slots.size <= num) break;
        this.remove(id);
      }
    }
    const age = this.limits.ageLimit;
    if (age === undefined) return;
    const cutoff = this.clock.now() / 1000 - age;
    for (const [id, slot] of this.slots) {
      const t_clean = this.columns.t_clean[slot]!;
      if (t_clean > cutoff) {
        this.arm((t_clean - cutoff) * 1000);
        return;
      }
      this.remove(id);
    }
  }

  private arm(ms: number): void {
    if (this.timer) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.enforce();
    }, Math.max(0, ms));
  }

  close(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}

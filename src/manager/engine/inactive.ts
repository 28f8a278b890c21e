/**
 * The inactive cache: compact records of finished jobs, kept up to an age and a count
 * limit, then purged (from memory and the store) with `job.inactive-remove`. Full
 * eventlogs and jobspecs of inactive jobs are not kept in memory; they are read from the
 * store on demand.
 *
 * This is the manager's memory per finished job, so it is kept in columns (typed arrays
 * indexed by a slot number) rather than an object per job: a record object costs about
 * 150 bytes of heap with its boxed times, the columns 57 (49 in typed arrays, 8 for the
 * name's reference). A Map from job id to slot keeps the order (inactivation order) and
 * the lookup; InactiveRecord objects are built only for the caller that asks.
 *
 * Jobs already inactive when the manager opened a store that can read summaries one at a
 * time are not in the columns: they sit in the stored tier (inactive-stored.ts), which
 * keeps 20 bytes a job and reads records on demand. They are older than every job in the
 * columns, so they come first in purge order and last in newest-first order.
 */
import type { Clock, TimerHandle } from "../base/clock.js";
import type { JobId } from "../base/ids.js";
import { RESULTS, type JobResult } from "../base/states.js";
import { smallInt } from "../base/numbers.js";
import type { StoredInactive } from "./inactive-stored.js";

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
  /** Bytes of its stored jobspec (handed back to its user's count at purge). */
  readonly jobspecBytes: number;
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

/** Slots per page of columns (a page is 49 bytes a slot: 196 KiB). */
const PAGE_SLOTS = 4096;
const PAGE_SHIFT = 12;

/**
 * One page of the numeric columns: a typed array per field, all in one buffer. Pages are
 * added as slots are needed and never copied: an array doubled when full would hold (and
 * have touched) up to twice the memory the records need.
 */
class Page {
  readonly userid: Float64Array;
  readonly priority: Float64Array;
  readonly t_submit: Float64Array;
  readonly t_clean: Float64Array;
  readonly waitStatus: Float64Array;
  readonly urgency: Int32Array;
  /** A jobspec is far below 4 GiB: a request body is at most [daemon] max-request-size. */
  readonly jobspecBytes: Uint32Array;
  readonly result: Uint8Array;

  constructor() {
    const buf = new ArrayBuffer(PAGE_SLOTS * (5 * 8 + 4 + 4 + 1));
    const f64 = (k: number) => new Float64Array(buf, k * PAGE_SLOTS * 8, PAGE_SLOTS);
    this.userid = f64(0);
    this.priority = f64(1);
    this.t_submit = f64(2);
    this.t_clean = f64(3);
    this.waitStatus = f64(4);
    this.urgency = new Int32Array(buf, 5 * PAGE_SLOTS * 8, PAGE_SLOTS);
    this.jobspecBytes = new Uint32Array(buf, 5 * PAGE_SLOTS * 8 + PAGE_SLOTS * 4, PAGE_SLOTS);
    this.result = new Uint8Array(buf, 5 * PAGE_SLOTS * 8 + PAGE_SLOTS * 8, PAGE_SLOTS);
  }
}

/**
 * The records' fields in columns indexed by slot: numbers in pages of typed arrays, names
 * in an array of strings (shared between jobs of the same name), annotations in a Map for
 * the rare job that has them. Freed slots are reused; pages are never given back (a daemon
 * that once held N inactive jobs will again).
 */
class Columns {
  private readonly pages: Page[] = [];
  private readonly name: string[] = [];
  private readonly annotations = new Map<number, Record<string, unknown>>();
  private readonly free: number[] = [];
  private used = 0;
  private readonly names = new Map<string, string>();

  /** Stores a record's fields in a free slot; returns the slot. */
  put(r: InactiveRecord): number {
    const slot = this.free.pop() ?? this.used++;
    const p = (this.pages[slot >>> PAGE_SHIFT] ??= new Page());
    const i = slot & (PAGE_SLOTS - 1);
    p.userid[i] = r.userid;
    p.urgency[i] = r.urgency;
    p.priority[i] = r.priority;
    p.t_submit[i] = r.t_submit;
    p.t_clean[i] = r.t_clean;
    p.waitStatus[i] = r.waitStatus;
    p.result[i] = r.result;
    p.jobspecBytes[i] = r.jobspecBytes;
    this.name[slot] = this.intern(r.name);
    if (r.annotations !== null) this.annotations.set(slot, r.annotations);
    return slot;
  }

  /** The record in `slot`, as an object. */
  record(id: JobId, slot: number): InactiveRecord {
    const p = this.pages[slot >>> PAGE_SHIFT]!;
    const i = slot & (PAGE_SLOTS - 1);
    return {
      id,
      // Whole numbers as small integers: see smallInt.
      userid: smallInt(p.userid[i]!),
      urgency: p.urgency[i]!,
      priority: smallInt(p.priority[i]!),
      t_submit: p.t_submit[i]!,
      t_clean: p.t_clean[i]!,
      result: p.result[i]!,
      name: this.name[slot]!,
      waitStatus: smallInt(p.waitStatus[i]!),
      annotations: this.annotations.get(slot) ?? null,
      jobspecBytes: p.jobspecBytes[i]!,
    };
  }

  userid(slot: number): number {
    return this.pages[slot >>> PAGE_SHIFT]!.userid[slot & (PAGE_SLOTS - 1)]!;
  }

  t_clean(slot: number): number {
    return this.pages[slot >>> PAGE_SHIFT]!.t_clean[slot & (PAGE_SLOTS - 1)]!;
  }

  release(slot: number): void {
    this.name[slot] = "";
    this.annotations.delete(slot);
    this.free.push(slot);
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
  /** The jobs inactive at open, read on demand (undefined: all are in the columns). */
  private stored: StoredInactive<InactiveRecord> | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly limits: InactiveLimits,
    private readonly purge: (r: InactiveRecord) => void,
  ) {}

  /** Restart: the tier of jobs inactive at open (filled by the restart pass). */
  attachStored(stored: StoredInactive<InactiveRecord>): void {
    this.stored = stored;
  }

  /** Restart pass: a stored job joins the stored tier (ids in increasing order). */
  appendStored(id: JobId, userid: number, t_clean: number): void {
    if (id > this.maxId) this.maxId = id;
    this.stored!.append(id, userid, t_clean);
  }

  /** Restart pass done (see StoredInactive.seal). */
  sealStored(): void {
    this.stored?.seal();
  }

  get size(): number {
    return this.slots.size + (this.stored?.size ?? 0);
  }

  has(id: JobId): boolean {
    return this.slots.has(id) || (this.stored?.has(id) ?? false);
  }

  /** The job's record (a new object each call; a stored job's is read on demand), or undefined if it is not cached. */
  get(id: JobId): InactiveRecord | undefined {
    const slot = this.slots.get(id);
    return slot === undefined ? this.stored?.get(id) : this.columns.record(id, slot);
  }

  /** The job's user, or undefined if it is not cached (no record built, no store read). */
  userid(id: JobId): number | undefined {
    const slot = this.slots.get(id);
    return slot === undefined ? this.stored?.userid(id) : this.columns.userid(slot);
  }

  /**
   * Each job's id, user and clean time in purge order (stored tier first, then inactivation
   * order) until `fn` returns false; no record is built, no store read.
   */
  eachOldest(fn: (id: JobId, userid: number, t_clean: number) => boolean | void): void {
    if (this.stored?.eachOldest(fn) === false) return;
    for (const [id, slot] of this.slots) if (fn(id, this.columns.userid(slot), this.columns.t_clean(slot)) === false) return;
  }

  /** The records, oldest inactivation first (a stored job's read from the store). */
  oldestFirst(): InactiveRecord[] {
    const out: InactiveRecord[] = [];
    this.stored?.eachOldest((id) => {
      const r = this.stored!.get(id);
      if (r !== undefined) out.push(r);
    });
    this.slots.forEach((slot, id) => out.push(this.columns.record(id, slot)));
    return out;
  }

  /** The records, most recent inactivation first, optionally only one user's. */
  newestFirst(userid?: number): InactiveRecord[] {
    const ids: JobId[] = [];
    const slots: number[] = [];
    this.slots.forEach((slot, id) => {
      if (userid !== undefined && this.columns.userid(slot) !== userid) return;
      ids.push(id);
      slots.push(slot);
    });
    const out = new Array<InactiveRecord>(ids.length);
    for (let i = 0, j = ids.length - 1; j >= 0; i++, j--) out[i] = this.columns.record(ids[j]!, slots[j]!);
    if (this.stored !== undefined) {
      for (const id of this.stored.newestIds(userid)) {
        const r = this.stored.get(id);
        if (r !== undefined) out.push(r);
      }
    }
    return out;
  }

  /**
   * The records most recently cleaned first (a listing's order), optionally one user's,
   * built as the caller iterates: a listing that stops after N jobs reads N stored records.
   */
  *newestCleaned(userid?: number): IterableIterator<InactiveRecord> {
    const mine: Array<{ id: JobId; slot: number; t: number }> = [];
    this.slots.forEach((slot, id) => {
      if (userid === undefined || this.columns.userid(slot) === userid) mine.push({ id, slot, t: this.columns.t_clean(slot) });
    });
    mine.sort((a, b) => b.t - a.t);
    const stored = this.stored?.newestCleaned(userid);
    let next = stored?.next();
    let head = next?.done === false ? this.stored!.get(next.value) : undefined;
    for (const m of mine) {
      while (head !== undefined && head.t_clean > m.t) {
        yield head;
        next = stored!.next();
        head = next.done === false ? this.stored!.get(next.value) : undefined;
      }
      yield this.columns.record(m.id, m.slot);
    }
    while (head !== undefined) {
      yield head;
      next = stored!.next();
      head = next.done === false ? this.stored!.get(next.value) : undefined;
    }
  }

  /** The cached ids, oldest inactivation first. */
  *ids(): IterableIterator<JobId> {
    if (this.stored !== undefined) {
      const ids: JobId[] = [];
      this.stored.eachOldest((id) => void ids.push(id));
      yield* ids;
    }
    yield* this.slots.keys();
  }

  /** Adds a record; returns false if it was already there. Then enforces the limits. */
  add(r: InactiveRecord): boolean {
    // Jobs mostly become inactive in id (submit) order: an id above every id added so far
    // cannot be here, and needs no lookup (in a map of 100,000 jobs, a lookup by bigint is
    // a few cache misses: a twentieth of a job's whole cost).
    if (r.id > this.maxId) this.maxId = r.id;
    else if (this.slots.has(r.id)) return false;
    this.slots.set(r.id, this.columns.put(r));
    this.enforce();
    return true;
  }

  /** The highest id ever added or restored (see add). */
  private maxId = -1n as JobId;

  /**
   * Restart replay: puts a stored job's record in (replacing one of the same id) without
   * enforcing the limits; replay calls `sortById` and, once plugins are attached, `enforce`.
   */
  restore(r: InactiveRecord): void {
    if (r.id > this.maxId) this.maxId = r.id;
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
    if (slot === undefined) return this.removeStored(id);
    const r = this.columns.record(id, slot);
    this.slots.delete(id);
    this.columns.release(slot);
    this.purge(r);
    return true;
  }

  /** Purges a job of the stored tier (its record read first: the purge hands it on). */
  private removeStored(id: JobId): boolean {
    const s = this.stored;
    const userid = s?.userid(id);
    if (s === undefined || userid === undefined) return false;
    // A record that cannot be read (its summary and eventlog unreadable) is purged all the same.
    const r = s.get(id) ?? { id, userid, urgency: 0, priority: 0, t_submit: 0, t_clean: 0, result: 0, name: "", waitStatus: -1, annotations: null, jobspecBytes: 0 };
    s.delete(id);
    this.purge(r);
    return true;
  }

  /** Applies the count limit, then the age limit, and arms a timer for the next expiry. */
  enforce(): void {
    const num = this.limits.numLimit;
    if (num !== undefined && this.size > num) {
      const victims: JobId[] = [];
      let excess = this.size - num;
      this.eachOldest((id) => (victims.push(id), --excess > 0));
      for (const id of victims) this.remove(id);
    }
    const age = this.limits.ageLimit;
    if (age === undefined) return;
    const cutoff = this.clock.now() / 1000 - age;
    const expired: JobId[] = [];
    this.eachOldest((id, _userid, t_clean) => {
      if (t_clean > cutoff) {
        this.arm((t_clean - cutoff) * 1000);
        return false;
      }
      expired.push(id);
      return true;
    });
    for (const id of expired) this.remove(id);
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

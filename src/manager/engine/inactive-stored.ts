/**
 * The stored tier of the inactive cache: the jobs that were already inactive when the
 * manager opened its store. A million of them must not cost a million records in memory
 * (issue 41), so this tier keeps only what purge order, ownership checks and listing order
 * need — the id, the user and the clean time in typed arrays, in id order, 21 bytes a job
 * with the purge marks (a user id takes 32 bits, as a Unix uid does; the column turns to
 * 64-bit floats if another number comes) — and reads a job's full record from its stored
 * summary on demand, through a small cache of the records read last.
 *
 * Jobs leave the tier (purge) but never join it after the restart pass: jobs that become
 * inactive later go to the cache's in-memory columns (inactive.ts).
 */
import type { JobId } from "../base/ids.js";

/** The largest size hint taken (a hint beyond it is not believed: the columns grow instead). */
const MAX_EXPECTED = 1 << 28;

/** Records kept after a read: enough for a page of a listing and a burst of lookups. */
const RECORD_CACHE_MAX = 4096;

/**
 * Reads one stored job's record (its summary, or a replay of its eventlog); undefined if
 * gone. Generic in the record (inactive.ts's InactiveRecord) so this file imports nothing
 * from the cache that holds it.
 */
export type RecordReader<R> = (id: JobId) => R | undefined;

export class StoredInactive<R> {
  private ids: BigUint64Array;
  private userids: Uint32Array | Float64Array;
  private cleaned: Float64Array;
  private gone: Uint8Array | undefined;
  private n = 0;
  private goneCount = 0;
  /** The first slot not gone: purges take the oldest, so a scan from 0 would cross them all. */
  private first = 0;
  /**
   * Slots by t_clean, newest first: built at the first listing that asks, then kept; null
   * when the slots are already in clean order (jobs cleaned in id order, the usual case),
   * which is then the slots from the last.
   */
  private byClean: Uint32Array | null | undefined;
  private readonly records = new Map<JobId, R>();

  /**
   * `expected`: how many jobs the restart pass will likely append (the store's count from
   * its last clean shutdown). The columns start at that size: grown by doubling from 1,024
   * instead, a million jobs left ~20 MB of outgrown columns for the GC (RSS after open).
   */
  constructor(
    private readonly read: RecordReader<R>,
    expected?: number,
  ) {
    const size = expected !== undefined && expected > 1024 && expected <= MAX_EXPECTED ? expected : 1024;
    this.ids = new BigUint64Array(size);
    this.userids = new Uint32Array(size);
    this.cleaned = new Float64Array(size);
  }

  /** Slots the columns hold before they grow. */
  get capacity(): number {
    return this.ids.length;
  }

  /** How many stored inactive jobs are left. */
  get size(): number {
    return this.n - this.goneCount;
  }

  /** Restart pass: adds a job; ids must come in increasing order. */
  append(id: JobId, userid: number, t_clean: number): void {
    if (this.n > 0 && id <= this.ids[this.n - 1]!) throw new Error(`stored inactive jobs out of order at ${id}`);
    if (this.n === this.ids.length) this.grow();
    this.ids[this.n] = id;
    if (this.userids instanceof Uint32Array && userid >>> 0 !== userid) this.userids = Float64Array.from(this.userids);
    this.userids[this.n] = userid;
    this.cleaned[this.n] = t_clean;
    this.n++;
    this.byClean = undefined;
  }

  /**
   * Restart pass done: gives back the unused part of the arrays, unless it is small (a
   * copy of a million jobs' columns costs more than the few slots it frees).
   */
  seal(): void {
    const n = this.n;
    const loose = this.ids.length - n > this.ids.length / 8;
    this.ids = loose ? this.ids.slice(0, n) : this.ids.subarray(0, n);
    this.userids = loose ? this.userids.slice(0, n) : this.userids.subarray(0, n);
    this.cleaned = loose ? this.cleaned.slice(0, n) : this.cleaned.subarray(0, n);
    this.gone = this.gone === undefined ? new Uint8Array(n) : this.gone.slice(0, n);
  }

  private grow(): void {
    const size = this.ids.length * 2;
    const ids = new BigUint64Array(size);
    ids.set(this.ids);
    const userids = this.userids instanceof Uint32Array ? new Uint32Array(size) : new Float64Array(size);
    userids.set(this.userids);
    const cleaned = new Float64Array(size);
    cleaned.set(this.cleaned);
    this.ids = ids;
    this.userids = userids;
    this.cleaned = cleaned;
  }

  /** The slot of `id`, or -1 if it is not (or no longer) here. */
  private slotOf(id: JobId): number {
    let lo = 0;
    let hi = this.n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = this.ids[mid]!;
      if (v === id) return this.gone?.[mid] === 1 ? -1 : mid;
      if (v < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  has(id: JobId): boolean {
    return this.slotOf(id) >= 0;
  }

  /** The job's user, or undefined if it is not here (no store read). */
  userid(id: JobId): number | undefined {
    const slot = this.slotOf(id);
    return slot < 0 ? undefined : this.userids[slot]!;
  }

  /** The job's full record, read from the store unless read lately; undefined if not here. */
  get(id: JobId): R | undefined {
    if (this.slotOf(id) < 0) return undefined;
    const known = this.records.get(id);
    if (known !== undefined) return known;
    const r = this.read(id);
    if (r === undefined) return undefined;
    if (this.records.size >= RECORD_CACHE_MAX) this.records.delete(this.records.keys().next().value!);
    this.records.set(id, r);
    return r;
  }

  /** Takes a job out (purge); false if it was not here. */
  delete(id: JobId): boolean {
    const slot = this.slotOf(id);
    if (slot < 0) return false;
    (this.gone ??= new Uint8Array(this.ids.length))[slot] = 1;
    this.goneCount++;
    while (this.first < this.n && this.gone[this.first] === 1) this.first++;
    this.records.delete(id);
    return true;
  }

  /** Calls `fn` for each job in id order (the purge order after a restart) until it returns false. */
  eachOldest(fn: (id: JobId, userid: number, t_clean: number) => boolean | void): boolean {
    for (let i = this.first; i < this.n; i++) {
      if (this.gone?.[i] === 1) continue;
      if (fn(this.ids[i] as JobId, this.userids[i]!, this.cleaned[i]!) === false) return false;
    }
    return true;
  }

  /** The ids, newest id first, optionally one user's only (lazy: a listing stops early). */
  *newestIds(userid?: number): IterableIterator<JobId> {
    for (let i = this.n - 1; i >= 0; i--) {
      if (this.gone?.[i] === 1 || (userid !== undefined && this.userids[i] !== userid)) continue;
      yield this.ids[i] as JobId;
    }
  }

  /** The ids, most recently cleaned first (a listing's order), optionally one user's only. */
  *newestCleaned(userid?: number): IterableIterator<JobId> {
    if (this.byClean === undefined) this.byClean = this.cleanOrder();
    if (this.byClean === null) {
      yield* this.newestIds(userid);
      return;
    }
    for (const i of this.byClean) {
      if (this.gone?.[i] === 1 || (userid !== undefined && this.userids[i] !== userid)) continue;
      yield this.ids[i] as JobId;
    }
  }

  private cleanOrder(): Uint32Array | null {
    const t = this.cleaned;
    let inOrder = true;
    for (let i = 1; i < this.n && inOrder; i++) inOrder = t[i]! >= t[i - 1]!;
    // Newest slot first is then the sort's order too, ties included.
    if (inOrder) return null;
    const order = new Uint32Array(this.n);
    for (let i = 0; i < this.n; i++) order[i] = i;
    // Ties (same clean time) keep the newest id first, as the listing's stable sort would.
    return order.sort((a, b) => t[b]! - t[a]! || b - a);
  }
}

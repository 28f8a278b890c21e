/**
 * One user's job history, kept oldest first by (t_submit, id): jobs almost always arrive in
 * submit order, so adding one is an append; only an out-of-order add (restart replay of
 * inactive jobs, a runtime load) binary-searches its place. Queries read it newest first.
 *
 * The list is kept in two columns (ids and submit times in typed arrays) rather than an
 * object per job: every inactive job stays in its user's history until purged, so this is
 * memory per inactive job (an entry object with its boxed time cost about 60 bytes, the
 * columns 16). The columns are chunks of a fixed size past the first (which grows by
 * doubling up to that size, so a user with a few jobs holds a few bytes): a list never
 * copies itself to grow, so a million jobs hold 16 MB and never twice that plus the copy
 * (48 MB at the last doubling, during a restart's replay).
 *
 * A job's submit time never changes, so (t_submit, id) names it: a duplicate is found where
 * the job would sort, with no set of ids beside the columns (a Set of job ids cost more per
 * add than the rest of the list, and about 40 bytes per inactive job).
 */
import type { JobId } from "jobtap/plugin";

/** One job in a user's history. */
export interface HistoryEntry {
  id: JobId;
  t_submit: number;
}

/** Entries per chunk past the first: 64 Ki (1 MB of columns). */
const CHUNK_BITS = 16;

/** A user's jobs, oldest first, without duplicates. */
export class UserHistory {
  private idChunks: BigUint64Array[] = [];
  private timeChunks: Float64Array[] = [];
  private n = 0;
  /** Entries the chunks have room for (kept: add reads it for every job). */
  private room = 0;
  private readonly bits: number;
  private readonly mask: number;

  /**
   * `probe`, if given, is called at each entry the list reads (tests count them);
   * `chunkBits` sets the chunk size (tests use small ones to cross chunks).
   */
  constructor(
    private readonly probe?: () => void,
    chunkBits = CHUNK_BITS,
  ) {
    this.bits = chunkBits;
    this.mask = (1 << chunkBits) - 1;
  }

  get size(): number {
    return this.n;
  }

  /** Entries it has room for without allocating. */
  get capacity(): number {
    return this.room;
  }

  /** Adds a job; false if it is already there. O(1) when it is the newest so far. */
  add(e: HistoryEntry): boolean {
    const n = this.n;
    const at = n === 0 || this.notAfter(n - 1, e) ? n : this.firstAfter(e);
    // A job added before sorts just ahead of its place.
    if (at > 0 && this.time(at - 1) === e.t_submit && this.id(at - 1) === e.id) return false;
    if (n === this.room) this.grow();
    if (at < n) this.shiftRight(at);
    this.put(at, e.id, e.t_submit);
    this.n++;
    return true;
  }

  /** Removes a job (purge); false if it is not there. */
  remove(e: HistoryEntry): boolean {
    let i = this.firstAfter(e) - 1;
    // The caller's t_submit should match the stored one; fall back to a scan if not.
    if (i < 0 || this.id(i) !== e.id) i = this.indexOfId(e.id);
    if (i < 0) return false;
    this.shiftLeft(i);
    this.n--;
    return true;
  }

  /** The jobs newest first (a copy). */
  newestFirst(): HistoryEntry[] {
    const out: HistoryEntry[] = [];
    for (let i = this.n - 1; i >= 0; i--) out.push({ id: this.id(i) as JobId, t_submit: this.time(i) });
    return out;
  }

  /**
   * Gives back the room a lone first chunk grew for jobs that did not come (a restart's
   * replay is over): keeps an eighth more than it holds, so the next adds append. Later
   * chunks are of a fixed size: nothing to give back.
   */
  trim(): void {
    if (this.timeChunks.length !== 1) return;
    const size = Math.max(16, this.n + (this.n >> 3));
    if (size >= this.timeChunks[0]!.length) return;
    this.idChunks[0] = this.idChunks[0]!.slice(0, size);
    this.timeChunks[0] = this.timeChunks[0]!.slice(0, size);
    this.room = size;
  }

  private id(i: number): bigint {
    return this.idChunks[i >>> this.bits]![i & this.mask]!;
  }

  private time(i: number): number {
    return this.timeChunks[i >>> this.bits]![i & this.mask]!;
  }

  private put(i: number, id: bigint, t: number): void {
    this.idChunks[i >>> this.bits]![i & this.mask] = id;
    this.timeChunks[i >>> this.bits]![i & this.mask] = t;
  }

  /** True unless the entry at `i` sorts after `e` (by submit time, then id). */
  private notAfter(i: number, e: HistoryEntry): boolean {
    this.probe?.();
    const t = this.time(i);
    return t < e.t_submit || (t === e.t_submit && this.id(i) <= e.id);
  }

  /** Index of the first entry that sorts after `e` (binary search). */
  private firstAfter(e: HistoryEntry): number {
    let lo = 0;
    let hi = this.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.notAfter(mid, e)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private indexOfId(id: bigint): number {
    for (let c = 0; c < this.idChunks.length; c++) {
      const used = Math.min(this.idChunks[c]!.length, this.n - (c << this.bits));
      if (used <= 0) break;
      const k = this.idChunks[c]!.subarray(0, used).indexOf(id);
      if (k >= 0) return (c << this.bits) + k;
    }
    return -1;
  }

  /** Room for one more: the first chunk doubles up to the chunk size, then a chunk is added. */
  private grow(): void {
    const full = 1 << this.bits;
    const last = this.timeChunks.length - 1;
    if (last <= 0 && (this.timeChunks[0]?.length ?? 0) < full) {
      const size = Math.min(full, Math.max(16, (this.timeChunks[0]?.length ?? 0) * 2));
      const ids = new BigUint64Array(size);
      const times = new Float64Array(size);
      if (last === 0) {
        ids.set(this.idChunks[0]!);
        times.set(this.timeChunks[0]!);
      }
      this.idChunks[0] = ids;
      this.timeChunks[0] = times;
      this.room = size;
      return;
    }
    this.idChunks.push(new BigUint64Array(full));
    this.timeChunks.push(new Float64Array(full));
    this.room += full;
  }

  /** Moves entries at..n-1 one place up (n < capacity), chunk by chunk, last chunk first. */
  private shiftRight(at: number): void {
    const first = at >>> this.bits;
    for (let c = (this.n - 1) >>> this.bits; c >= first; c--) {
      const ids = this.idChunks[c]!;
      const times = this.timeChunks[c]!;
      const from = c === first ? at & this.mask : 0;
      const end = Math.min(ids.length, this.n - (c << this.bits));
      // The chunk's last entry, if it is full, moves to the next chunk's first place.
      if (end === ids.length) {
        this.idChunks[c + 1]![0] = ids[end - 1]!;
        this.timeChunks[c + 1]![0] = times[end - 1]!;
      }
      ids.copyWithin(from + 1, from, Math.min(end, ids.length - 1));
      times.copyWithin(from + 1, from, Math.min(end, times.length - 1));
    }
  }

  /** Moves entries i+1..n-1 one place down, chunk by chunk, first chunk first. */
  private shiftLeft(i: number): void {
    const last = (this.n - 1) >>> this.bits;
    for (let c = i >>> this.bits; c <= last; c++) {
      const ids = this.idChunks[c]!;
      const times = this.timeChunks[c]!;
      const from = c === i >>> this.bits ? i & this.mask : 0;
      const end = Math.min(ids.length, this.n - (c << this.bits));
      ids.copyWithin(from, from + 1, end);
      times.copyWithin(from, from + 1, end);
      // The next chunk's first entry comes down to this chunk's last place.
      if (c < last) {
        ids[ids.length - 1] = this.idChunks[c + 1]![0]!;
        times[times.length - 1] = this.timeChunks[c + 1]![0]!;
      }
    }
  }
}

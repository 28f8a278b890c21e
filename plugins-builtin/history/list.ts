/**
 * One user's job history, kept oldest first by (t_submit, id): jobs almost always arrive in
 * submit order, so adding one is an append; only an out-of-order add (restart replay of
 * inactive jobs, a runtime load) binary-searches its place. Queries read it newest first.
 *
 * The list is kept in two columns (ids and submit times in typed arrays) rather than an
 * object per job: every inactive job stays in its user's history until purged, so this is
 * memory per inactive job (an entry object with its boxed time cost about 60 bytes, the
 * columns 16).
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

/** A user's jobs, oldest first, without duplicates. */
export class UserHistory {
  private jobIds = new BigUint64Array(0);
  private times = new Float64Array(0);
  private n = 0;

  /** `probe`, if given, is called at each entry the list reads (tests count them). */
  constructor(private readonly probe?: () => void) {}

  get size(): number {
    return this.n;
  }

  /** Entries it has room for without growing. */
  get capacity(): number {
    return this.times.length;
  }

  /** Adds a job; false if it is already there. O(1) when it is the newest so far. */
  add(e: HistoryEntry): boolean {
    const n = this.n;
    const at = n === 0 || this.notAfter(n - 1, e) ? n : this.firstAfter(e);
    // A job added before sorts just ahead of its place.
    if (at > 0 && this.times[at - 1] === e.t_submit && this.jobIds[at - 1] === e.id) return false;
    if (n === this.times.length) this.grow();
    if (at < n) {
      this.jobIds.copyWithin(at + 1, at, n);
      this.times.copyWithin(at + 1, at, n);
    }
    this.jobIds[at] = e.id;
    this.times[at] = e.t_submit;
    this.n++;
    return true;
  }

  /** Removes a job (purge); false if it is not there. */
  remove(e: HistoryEntry): boolean {
    let i = this.firstAfter(e) - 1;
    // The caller's t_submit should match the stored one; fall back to a scan if not.
    if (i < 0 || this.jobIds[i] !== e.id) i = this.jobIds.subarray(0, this.n).indexOf(e.id);
    if (i < 0) return false;
    this.jobIds.copyWithin(i, i + 1, this.n);
    this.times.copyWithin(i, i + 1, this.n);
    this.n--;
    return true;
  }

  /** The jobs newest first (a copy). */
  newestFirst(): HistoryEntry[] {
    const out: HistoryEntry[] = [];
    for (let i = this.n - 1; i >= 0; i--) out.push({ id: this.jobIds[i] as JobId, t_submit: this.times[i]! });
    return out;
  }

  /** True unless the entry at `i` sorts after `e` (by submit time, then id). */
  private notAfter(i: number, e: HistoryEntry): boolean {
    this.probe?.();
    const t = this.times[i]!;
    return t < e.t_submit || (t === e.t_submit && this.jobIds[i]! <= e.id);
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

  /**
   * Gives back the room grown for jobs that did not come: after a restart's replay a list
   * of a million jobs would otherwise keep up to twice its 16 bytes a job. Keeps an eighth
   * more than it holds, so the next adds append.
   */
  trim(): void {
    const size = Math.max(16, this.n + (this.n >> 3));
    if (size >= this.times.length) return;
    this.jobIds = this.jobIds.slice(0, size);
    this.times = this.times.slice(0, size);
  }

  private grow(): void {
    const size = Math.max(16, this.times.length * 2);
    const ids = new BigUint64Array(size);
    ids.set(this.jobIds);
    const times = new Float64Array(size);
    times.set(this.times);
    this.jobIds = ids;
    this.times = times;
  }
}

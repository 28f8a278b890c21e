/**
 * One user's job history, kept oldest first by (t_submit, id): jobs almost always arrive in
 * submit order, so adding one is an append; only an out-of-order add (restart replay of
 * inactive jobs, a runtime load) binary-searches its place. Queries read it newest first.
 */
import type { JobId } from "jobtap/plugin";

/** One job in a user's history. */
export interface HistoryEntry {
  id: JobId;
  t_submit: number;
}

/** True if `a` sorts before `b` (older submit, then smaller id). */
function before(a: HistoryEntry, b: HistoryEntry): boolean {
  return a.t_submit < b.t_submit || (a.t_submit === b.t_submit && a.id < b.id);
}

/** A user's jobs, oldest first, without duplicates. */
export class UserHistory {
  private readonly ids = new Set<JobId>();

  /** `entries` is the backing array (oldest first); tests pass one to count accesses. */
  constructor(private readonly entries: HistoryEntry[] = []) {}

  get size(): number {
    return this.entries.length;
  }

  /** Adds a job; false if it is already there. O(1) when it is the newest so far. */
  add(e: HistoryEntry): boolean {
    if (this.ids.has(e.id)) return false;
    this.ids.add(e.id);
    const n = this.entries.length;
    if (n === 0 || before(this.entries[n - 1]!, e)) this.entries.push(e);
    else this.entries.splice(this.firstAfter(e), 0, e);
    return true;
  }

  /** Removes a job (purge); false if it is not there. */
  remove(e: HistoryEntry): boolean {
    if (!this.ids.delete(e.id)) return false;
    let i = this.firstAfter(e) - 1;
    // The caller's t_submit should match the stored one; fall back to a scan if not.
    if (this.entries[i]?.id !== e.id) i = this.entries.findIndex((x) => x.id === e.id);
    this.entries.splice(i, 1);
    return true;
  }

  /** The jobs newest first (a copy). */
  newestFirst(): HistoryEntry[] {
    return this.entries.slice().reverse();
  }

  /** Index of the first entry that sorts after `e` (binary search). */
  private firstAfter(e: HistoryEntry): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(e, this.entries[mid]!)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

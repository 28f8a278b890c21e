/**
 * What a waiting job holds only because someone looked at it: its eventlog read back from
 * the store (job.ts, dropEventlog) and its job ad (jobads.ts). A listing with a constraint,
 * the dashboard or `why` over every waiting job would otherwise leave each job's entries and
 * ad in memory for good: 50,000 held jobs went from 39 to 145 MB of heap after one look at
 * each (issue 41). `Kept` remembers the last `limit` jobs that gained such a thing; past
 * that, the oldest are offered to `release`, which lets go of what it can.
 */

/** Members offered to `release` in one trim beyond those over the limit (a member it keeps stays). */
const SCAN_SLACK = 64;

export class Kept<T> {
  /** Insertion order: the first is the oldest. */
  private readonly members = new Set<T>();

  /**
   * `release(m)` lets go of what `m` holds and returns true, or returns false to keep it
   * for now (it is offered again at a later trim). It is called from `add`, for older
   * members only (never the one being added): it must refuse a member whose holdings are in
   * use (for a job: while an event of it is processed or its callbacks are out).
   */
  constructor(
    private readonly limit: number,
    private readonly release: (m: T) => boolean,
  ) {}

  /** `m` gained something to let go of later: it is now the newest member. */
  add(m: T): void {
    this.members.delete(m);
    this.members.add(m);
    if (this.members.size > this.limit) this.trim(m);
  }

  private trim(newest: T): void {
    let over = this.members.size - this.limit;
    let offers = over + SCAN_SLACK;
    for (const m of this.members) {
      if (over <= 0 || offers-- <= 0 || m === newest) break;
      if (this.release(m)) {
        this.members.delete(m);
        over--;
      }
    }
  }
}

/**
 * Per-association and per-bank counts, and the limits on them. A job counts as *active*
 * from job.new to INACTIVE and as *running* (with its cores) from the moment it leaves
 * DEPEND to INACTIVE, so a limit also covers jobs already sent to the scheduler. A job
 * over a running limit is held in DEPEND with a named dependency and released, oldest
 * first, as soon as the counts drop (as flux-accounting holds and releases them).
 */
import type { JobId } from "jobtap/plugin";
import { ancestry, assocKey, LIMIT_NAMES, type Associations, type Limits } from "./tree.js";

/** What the plugin remembers of one active job. */
export interface JobRec {
  id: JobId;
  uid: number;
  bank: string;
  cores: number;
  gpus: number;
  /** Counted as running (left DEPEND, not held). */
  running: boolean;
  /** The dependency description holding it, while held. */
  held?: string;
  /** The counts it adds to: its association's, then its banks' (set by `activate`). */
  counts?: Counts[];
}

export interface Counts {
  active: number;
  running: number;
  cores: number;
}

const zero = (): Counts => ({ active: 0, running: 0, cores: 0 });
/** The counts key of a bank (users use assocKey, which always has an '@'). */
const bankKey = (bank: string) => `bank:${bank}`;

/** The counts of every association and bank, and the limit checks on them. */
export class Ledger {
  readonly counts = new Map<string, Counts>();
  /** Each association's counts chain (its own, then its banks'), built once: the per-job
   *  updates then touch those objects directly, with no key strings or map lookups. */
  private chains = new Map<string, Counts[]>();
  /** Whether any association or bank has an active limit, or a running/cores limit:
   *  without one, the checks cost nothing per job. */
  private limited = { active: false, running: false };

  /** Notes which kinds of limit the table sets (after every change). */
  noteLimits(t: Associations): void {
    const all = [...Object.values(t.banks), ...Object.values(t.users)].map((x) => x.limits);
    this.limited = {
      active: all.some((l) => l.maxActiveJobs !== undefined),
      running: all.some((l) => l.maxRunningJobs !== undefined || l.maxCores !== undefined),
    };
  }

  /** The table changed: chains are built afresh for new jobs (a job keeps its own). */
  tableChanged(): void {
    this.chains.clear();
  }

  /** Counts of an association (uid, bank) or, with uid undefined, of a bank. */
  of(uid: number | undefined, bank: string): Counts {
    return this.counts.get(uid === undefined ? bankKey(bank) : assocKey(uid, bank)) ?? zero();
  }

  /** The association's key and its banks' keys, nearest first, with their limits. */
  private chain(t: Associations, uid: number, bank: string): { key: string; who: string; limits: Limits }[] {
    const user = t.users[assocKey(uid, bank)];
    const out = [{ key: assocKey(uid, bank), who: `user ${uid} in bank ${bank}`, limits: user?.limits ?? {} }];
    for (const b of ancestry(t, bank)) out.push({ key: bankKey(b), who: `bank ${b}`, limits: t.banks[b]?.limits ?? {} });
    return out;
  }

  /** The counts a job of (uid, bank) adds to, nearest first (cached per association). */
  private countsOf(t: Associations, r: JobRec): Counts[] {
    const assoc = assocKey(r.uid, r.bank);
    let chain = this.chains.get(assoc);
    if (chain === undefined) {
      chain = this.chain(t, r.uid, r.bank).map(({ key }) => this.counts.get(key) ?? this.counts.set(key, zero()).get(key)!);
      this.chains.set(assoc, chain);
    }
    return chain;
  }

  private add(t: Associations, r: JobRec, field: keyof Counts, n: number): void {
    const chain = (r.counts ??= this.countsOf(t, r));
    for (let i = 0; i < chain.length; i++) chain[i]![field] += n;
  }

  /** The rejection message if one more active job would pass a max-active-jobs limit. */
  overActive(t: Associations, uid: number, bank: string): string | undefined {
    if (!this.limited.active) return undefined;
    for (const { key, who, limits } of this.chain(t, uid, bank)) {
      const have = this.counts.get(key)?.active ?? 0;
      if (limits.maxActiveJobs !== undefined && have + 1 > limits.maxActiveJobs) {
        return `${LIMIT_NAMES.maxActiveJobs} of ${who} reached: ${have} active jobs, limit ${limits.maxActiveJobs}`;
      }
    }
    return undefined;
  }

  /** The dependency description of the first running limit `r` would pass, if any. */
  overRunning(t: Associations, r: JobRec): string | undefined {
    if (!this.limited.running) return undefined;
    for (const { key, who, limits } of this.chain(t, r.uid, r.bank)) {
      const c = this.counts.get(key) ?? zero();
      if (limits.maxRunningJobs !== undefined && c.running + 1 > limits.maxRunningJobs) return `accounting: ${LIMIT_NAMES.maxRunningJobs} of ${who}`;
      if (limits.maxCores !== undefined && c.cores + r.cores > limits.maxCores) return `accounting: ${LIMIT_NAMES.maxCores} of ${who}`;
    }
    return undefined;
  }

  /** A job accepted: counted active. */
  activate(t: Associations, r: JobRec): void {
    this.add(t, r, "active", 1);
  }

  /** A job let past DEPEND: counted running with its cores. */
  run(t: Associations, r: JobRec): void {
    r.running = true;
    this.add(t, r, "running", 1);
    this.add(t, r, "cores", r.cores);
  }

  /** A job gone INACTIVE: every count it held is given back. */
  retire(t: Associations, r: JobRec): void {
    this.add(t, r, "active", -1);
    if (r.running) {
      this.add(t, r, "running", -1);
      this.add(t, r, "cores", -r.cores);
      r.running = false;
    }
  }

  /** Recounts from scratch (after the tree changed shape: a bank moved). */
  rebuild(t: Associations, jobs: Iterable<JobRec>): void {
    this.counts.clear();
    this.chains.clear();
    for (const r of jobs) {
      r.counts = undefined;
      this.activate(t, r);
      if (r.running) {
        r.running = false;
        this.run(t, r);
      }
    }
  }
}

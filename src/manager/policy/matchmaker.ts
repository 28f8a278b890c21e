/**
 * Matchmaking for the scheduler (HTCondor's negotiator, spec htcondor.md §8.5): a job goes
 * only to a slot where the slot's Requirements (its START) holds with MY = slot, TARGET =
 * job, and the job's Requirements holds with MY = job, TARGET = slot; undefined or error is
 * no match. A slot whose Preempt is true against the job does not take it either (it would
 * evict it at once: policy/preempt.ts). Among matching slots the job's Rank (higher first) chooses, then the slot's
 * Rank, then slot order.
 *
 * Each pass takes the slot ads once. Jobs that agree on every attribute the match reads
 * (their Requirements and Rank texts, what those read in the job ad, and every name the
 * slots' policy reads) match the same slots, so a pass evaluates each such group once —
 * HTCondor's autoclusters. A job's key is kept until its next event.
 *
 * The key is made without the job's ad when it can be: when every name the match reads is
 * a user attribute of the jobspec or a computed attribute fixed by the jobspec and the
 * owner (SUBMIT_FIXED), jobs sharing one frozen jobspec and one owner have one key, kept on
 * the jobspec. A pass over 100,000 jobs from a few jobspecs then builds a few ads, not
 * 100,000 (bench policy). A job with a `classad-update` event takes the slow path.
 */
import type { ClassAd } from "../../classad/classad.js";
import type { Evaluator } from "../../classad/evaluator.js";
import { namesReadThrough, targetNamesRead } from "../../classad/refs.js";
import { unparse } from "../../classad/unparse.js";
import { isError } from "../../classad/values.js";
import { rankOf } from "../../classad/analyze.js";
import { formatJobId, type JobId } from "../base/ids.js";
import type { HostAds } from "../ads/hostads.js";
import { JOB_AD_ATTRIBUTES } from "../ads/jobad.js";
import type { Jobspec } from "../port/records.js";
import type { Logger } from "../engine/engine.js";
import type { ActiveJob } from "../engine/job.js";
import type { Matcher } from "../scheduler/scheduler.js";

export interface MatchmakerDeps {
  hostAds: HostAds;
  active(id: JobId): ActiveJob | undefined;
  jobAd(job: ActiveJob): ClassAd;
  evaluator: Evaluator;
  log: Logger;
}

/** Computed job-ad attributes (lower-cased) that depend only on the jobspec and the owner. */
const SUBMIT_FIXED = new Set(["owner", "user", "requestcpus", "requestgpus", "requestmemory", "cmd", "arguments", "iwd", "jobuniverse"]);
/** Computed attributes that differ between jobs of one jobspec (their ids, times, state). */
const PER_JOB = new Set(JOB_AD_ATTRIBUTES.map((n) => n.toLowerCase()).filter((n) => !SUBMIT_FIXED.has(n)));

/** Interned groups and printed jobspecs beyond this many are dropped (all-distinct jobs). */
const MEMO_KEPT = 65536;

/**
 * Jobs with one key (HTCondor's autocluster): they match the same slots, so a pass matches
 * the group once. Jobs hold their group (ActiveJob.matchKey): no lookup by key per job.
 */
interface MatchGroup {
  readonly key: string;
  /** The part of `key` the slots' START, RANK and PREEMPT read (their side of the match). */
  readonly slotKey: string;
  /** The pass `order` was made in. */
  pass: number;
  order: readonly number[];
}

/** The scheduler's matchmaker over the host's slot ads. */
export class Matchmaker implements Matcher {
  private slotAds: ClassAd[] = [];
  /** Lower-cased names of the job (TARGET) that the slot ads' expressions may read. */
  private slotNames: string[] = [];
  /** Groups by key, so jobs whose keys were made apart share one group. */
  private readonly groups = new Map<string, MatchGroup>();
  /** Bumped at each pass: a group's order is made again once per pass. */
  private passNo = 0;
  /** Keys shared by the jobs of one jobspec, per owner (see SUBMIT_FIXED). */
  private readonly specKeys = new WeakMap<Jobspec, SpecKeys>();
  /**
   * The same, by the jobspec's text (without its environment): jobs submitted in separate
   * calls have separate jobspec objects, and a key made from an ad costs as much as the ad.
   */
  private readonly printed = new Map<string, SpecKeys>();
  /** Bumped when the names the slots read change: every job's key is made again. */
  private generation = 0;
  /** This pass's slot side per slot key: jobs alike in what the slots read get one verdict. */
  private readonly slotSides = new Map<string, readonly SlotSide[]>();
  /** Expressions whose evaluation error was logged (once each, not per pass). */
  private readonly logged = new Set<string>();

  constructor(private readonly d: MatchmakerDeps) {}

  get slotsConstrained(): boolean {
    return this.d.hostAds.constrained;
  }

  beginPass(_now: number): void {
    this.slotAds = this.d.hostAds.slotAds();
    const names = new Set<string>();
    // Every attribute of the slot ads, not only START/RANK/PREEMPT: a job's Requirements may
    // read a slot expression that reads the job back (TARGET.x with x = TARGET.RequestMemory).
    // Only names that reach the job count: a slot's own Requirements is not the job's.
    for (const ad of this.slotAds) for (const n of targetNamesRead(ad, ad.names())) names.add(n);
    const sorted = [...names].sort();
    if (sorted.join(",") !== this.slotNames.join(",")) this.generation++;
    this.slotNames = sorted;
    this.passNo++;
    this.slotSides.clear();
  }

  candidates(id: JobId, ref: object | undefined): readonly number[] | undefined {
    // The scheduler hands back the job the manager queued (no Map lookup by id per job).
    const job = (ref as ActiveJob | undefined) ?? this.d.active(id);
    if (job === undefined) return [];
    const group = this.groupOf(job);
    if (group.pass !== this.passNo) {
      group.order = this.match(this.d.jobAd(job), id, group.slotKey);
      group.pass = this.passNo;
    }
    return group.order;
  }

  /** The slots matching `jobAd`, best first (the slot side shared by jobs with `slotKey`). */
  private match(jobAd: ClassAd, id: JobId, slotKey: string): number[] {
    const ev = this.d.evaluator;
    let sides = this.slotSides.get(slotKey);
    if (sides === undefined) {
      sides = this.slotAds.map((slotAd, i) => this.slotSide(slotAd, jobAd, i));
      this.slotSides.set(slotKey, sides);
    }
    const found: Array<{ i: number; jobRank: number; slotRank: number }> = [];
    for (let i = 0; i < this.slotAds.length; i++) {
      const side = sides[i]!;
      if (!side.takes) continue;
      const slotAd = this.slotAds[i]!;
      if (!this.holds(jobAd, slotAd, id)) continue;
      found.push({ i, jobRank: rankOf(ev, jobAd, slotAd), slotRank: side.rank });
    }
    found.sort((a, b) => b.jobRank - a.jobRank || b.slotRank - a.slotRank || a.i - b.i);
    return found.map((f) => f.i);
  }

  /** Slot `i`'s side: its START against the job, and not its PREEMPT (it would evict the job at once). */
  private slotSide(slotAd: ClassAd, jobAd: ClassAd, i: number): SlotSide {
    const ev = this.d.evaluator;
    if (!this.holds(slotAd, jobAd, i + 1)) return NOT_TAKEN;
    if (slotAd.has("Preempt") && ev.evaluateAttr(slotAd, "Preempt", jobAd) === true) return NOT_TAKEN;
    return { takes: true, rank: rankOf(ev, slotAd, jobAd) };
  }

  /** `ad`'s Requirements against `target`; absent is true (a job without Requirements). */
  private holds(ad: ClassAd, target: ClassAd, who: JobId | number): boolean {
    const req = ad.lookup("Requirements");
    if (req === undefined) return true;
    const v = this.d.evaluator.evaluateAttr(ad, "Requirements", target);
    if (v === true) return true;
    // The label is made only for a log line (a job id's text costs more than the match).
    if (isError(v)) this.logOnce(typeof who === "number" ? `slot ${who}` : `job ${formatJobId(who)}`, unparse(req, true));
    return false;
  }

  private logOnce(who: string, text: string): void {
    const key = `${who}\0${text}`;
    if (this.logged.has(key) || this.logged.size > 4096) return;
    this.logged.add(key);
    this.d.log("error", `matchmaking: ${who}: Requirements = ${text} evaluates to error: no match`);
  }

  /** The job's group (kept on the job until its next event or a change of the slots' names). */
  private groupOf(job: ActiveJob): MatchGroup {
    const kept = job.matchKey;
    if (kept !== undefined && kept.revision === job.revision && kept.generation === this.generation) return kept.group as MatchGroup;
    const updated = adUpdated(job);
    const group = (updated ? undefined : this.sharedGroup(job)) ?? this.groupFromAd(job, !updated);
    // Kept on the job itself: a WeakMap entry per job cost more than the match in a 100,000-job pass.
    job.matchKey = { revision: job.revision, generation: this.generation, group };
    return group;
  }

  /** The group kept on the job's jobspec (or an equal one) for its owner, if one was made. */
  private sharedGroup(job: ActiveJob): MatchGroup | undefined {
    const js = job.core.jobspec;
    let s = this.specKeys.get(js);
    if (s === undefined) {
      s = this.printed.get(fingerprint(js));
      if (s !== undefined) this.specKeys.set(js, s);
    }
    return s !== undefined && s.generation === this.generation ? s.byUser.get(job.core.userid) : undefined;
  }

  /** The shared groups of `js`, emptied when the slots' names changed since they were made. */
  private keysOfSpec(js: Jobspec): SpecKeys {
    let s = this.specKeys.get(js);
    if (s === undefined) {
      const print = fingerprint(js);
      s = this.printed.get(print);
      if (s === undefined) {
        if (this.printed.size >= MEMO_KEPT) this.printed.clear();
        s = { generation: this.generation, byUser: new Map() };
        this.printed.set(print, s);
      }
      this.specKeys.set(js, s);
    }
    if (s.generation !== this.generation) {
      s.generation = this.generation;
      s.byUser.clear();
    }
    return s;
  }

  /** The group of the key made from the job's ad; kept on its jobspec when `share` and nothing read is per job. */
  private groupFromAd(job: ActiveJob, share: boolean): MatchGroup {
    const ad = this.d.jobAd(job);
    const names = [...namesReadThrough(ad, ["requirements", "rank", ...this.slotNames])].sort();
    const slotRead = namesReadThrough(ad, this.slotNames);
    let key = "";
    let slotKey = "";
    for (const n of names) {
      const e = ad.lookup(n);
      if (e === undefined) continue;
      const part = `${n}=${unparse(e, true)}\n`;
      key += part;
      if (slotRead.has(n)) slotKey += part;
    }
    let group = this.groups.get(key);
    if (group === undefined) {
      if (this.groups.size >= MEMO_KEPT) this.groups.clear();
      group = { key, slotKey, pass: -1, order: [] };
      this.groups.set(key, group);
    }
    if (share && !names.some((n) => PER_JOB.has(n))) this.keysOfSpec(job.core.jobspec).byUser.set(job.core.userid, group);
    return group;
  }
}

/** A slot's side of the match for jobs with one slot key. */
interface SlotSide {
  readonly takes: boolean;
  readonly rank: number;
}
const NOT_TAKEN: SlotSide = Object.freeze({ takes: false, rank: 0 });

/** Keys shared by equal jobspecs, per owner, for one generation of the slots' names. */
interface SpecKeys {
  generation: number;
  byUser: Map<number, MatchGroup>;
}

/**
 * What a job ad is made of in a jobspec: its text without the environment (never in the
 * ad). Made at most twice per jobspec object (its keys are then kept on it).
 */
function fingerprint(js: Jobspec): string {
  const system = js.attributes.system;
  if (system?.environment === undefined) return JSON.stringify(js);
  // A shallow copy without it: JSON.stringify with a replacer is several times slower.
  return JSON.stringify({ ...js, attributes: { ...js.attributes, system: { ...system, environment: undefined } } });
}

/** True when a plugin changed the job's ad (`classad-update`): its ad is not its jobspec's. */
function adUpdated(job: ActiveJob): boolean {
  for (const e of job.eventlog) if (e.name === "classad-update") return true;
  return false;
}

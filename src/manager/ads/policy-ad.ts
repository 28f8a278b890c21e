/**
 * The policy-only job ad (policy/periodic.ts): a job's ad restricted to the attributes its
 * periodic and exit expressions can read. HTCondor evaluates those every interval for every
 * job; building each job's whole ad for that (paths, owner, command line, ...) cost the
 * first pass over 100,000 jobs seconds, while the expressions read a handful of attributes.
 *
 * It evaluates every expression as the whole ad does: it holds every attribute, with the
 * same value, that an evaluation starting from the wanted names can reach (the names they
 * read, followed through the job's own attribute expressions), and lacks only attributes no
 * such evaluation looks up. When something reachable can read names chosen at run time
 * (`eval`, a bare `MY`; classad/refs.ts `readsOnlyNamed`), or a `classad-update` changed
 * the job's attributes, there is no policy-only ad and the caller uses the whole one.
 *
 * The layout (which names, which are computed) is made once per jobspec object and wanted
 * set; a job's ad is rebuilt only when the job had an event or a scheduling pass changed its
 * match times, from one fold of its eventlog (jobad.ts `jobAdState`).
 */
import type { ClassAd } from "../../classad/classad.js";
import type { Expr } from "../../classad/expr.js";
import { AdLayout, RecordAd, type RecordSlot } from "../../classad/record-ad.js";
import { callsFunction, readsOnlyNamed, referencedNames } from "../../classad/refs.js";
import type { Jobspec } from "../port/records.js";
import {
  cheapSubmitSlot, computedSlotOf, DYNAMIC_SLOTS, isCheapSubmitSlot, isIntegerSlot, jobAdBase, jobAdState,
  type JobAdBase, type JobAdHost, type JobAdInput, type JobAdShape, type MatchTimes,
} from "./jobad.js";

/** Layouts whose shapes are interned, and shapes kept per layout (bounds the tables). */
const MAX_INTERNED = 1024;
const MAX_INTERNED_PER_LAYOUT = 8;
/** Distinct shared ads kept for sharing (the table is emptied when full; jobs keep theirs). */
const MAX_SHARED_ADS = 16384;

/** What the policy reads: the names its expressions start from, and whether they are bounded. */
export interface PolicyReads {
  /** Lower-cased names read by the policy itself (the job's expression names, the site's reads). */
  readonly names: ReadonlySet<string>;
  /** False when the site's expressions read names chosen at run time: no job has a light ad. */
  readonly bounded: boolean;
  /** False when the site's expressions call random(): equal ads may decide differently. */
  readonly deterministic: boolean;
}

/** The names and slots of the policy-only ads of the jobs sharing one jobspec object. */
interface PolicyShape {
  /** Distinguishes shapes in the shared-ad keys. */
  readonly id: number;
  readonly layout: AdLayout;
  /** Shared slots: the user attributes' expressions (after the computed ones). */
  readonly slots: readonly RecordSlot[];
  /** For each computed name, its slot in the whole job ad (the light ad's slot is its index). */
  readonly computed: readonly number[];
  /** Some computed submit-time name needs the whole submit-time part (`jobAdBase`). */
  readonly needsBase: boolean;
  /** No reachable expression calls random(). */
  readonly deterministic: boolean;
}

/** A job's policy-only ad and what it was built from (kept on the job, ActiveJob.policyAd). */
export interface PolicyAdCache {
  readonly reads: PolicyReads;
  readonly jobspec: Jobspec;
  readonly revision: number;
  readonly times: MatchTimes | undefined;
  /** Undefined: the job needs its whole ad. */
  readonly ad: ClassAd | undefined;
  /** The submit-time part, when a computed name needs it (fixed while the jobspec is). */
  readonly base: JobAdBase | undefined;
  /**
   * The ad is shared by every job whose policy-only ad is equal and evaluation reaches no
   * random(): at one clock second these jobs are decided alike (the pass evaluates once).
   */
  readonly shared: boolean;
}

/** The job as the policy-only ad reads it. */
export interface PolicyAdJob extends JobAdInput {
  readonly revision: number;
  policyAd?: PolicyAdCache | undefined;
}

/** Builds policy-only ads for one manager and one `PolicyReads` (see the module comment). */
export class PolicyAds {
  private readonly shapes = new WeakMap<Jobspec, PolicyShape | null>();
  /** Shared ads by shape and computed values (see `shared`). */
  private readonly ads = new Map<string, { ad: ClassAd; uses: number }>();
  private shapeCount = 0;
  /** Policy-only layouts by their names: shapes with the same names share one. */
  private readonly layouts = new Map<string, AdLayout>();
  /** Shapes by job-ad layout and user expressions (shared parses): jobs submitted with
   *  equal jobspecs in separate objects share one shape, and its layout. */
  private readonly interned = new Map<AdLayout, Array<{ user: readonly Expr[]; shape: PolicyShape | null }>>();

  constructor(
    readonly reads: PolicyReads,
    private readonly host: JobAdHost,
    /** Brings the job's own fields up to date before its ad is read (LastRejMatchTime). */
    private readonly refresh?: (job: PolicyAdJob) => void,
  ) {}

  /** The job's policy-only ad, or undefined when only its whole ad evaluates the same. */
  of(job: PolicyAdJob): ClassAd | undefined {
    return this.entry(job).ad;
  }

  /** The job's (cached) policy-only ad entry, rebuilt when the job changed. */
  entry(job: PolicyAdJob): PolicyAdCache {
    this.refresh?.(job);
    const c = job.policyAd;
    const js = job.core.jobspec;
    if (c !== undefined && c.reads === this.reads && c.revision === job.revision && c.times === job.matchTimes && c.jobspec === js) return c;
    const shape = this.shape(js);
    let ad: ClassAd | undefined;
    let shared = false;
    let base = c !== undefined && c.jobspec === js ? c.base : undefined;
    if (shape !== undefined) {
      const state = jobAdState(job, this.host);
      // A plugin changed the job's attributes: their names are not the jobspec's.
      if (state.adUpdates === undefined) {
        if (shape.needsBase) base ??= jobAdBase(job, this.host);
        const own = computedSlots(job, shape, state.own, base);
        const found = this.shared(shape, own);
        ad = found?.ad ?? new RecordAd(shape.layout, shape.slots, own);
        // Counted at build: the first job of a family is decided alone, the others share.
        shared = found !== undefined && found.uses > 1 && shape.deterministic && this.reads.deterministic;
      }
    }
    return (job.policyAd = { reads: this.reads, jobspec: js, revision: job.revision, times: job.matchTimes, ad, base, shared });
  }

  /**
   * One ad for all jobs whose policy-only ads are equal (same shape, same computed values):
   * the ads are read-only and an evaluation reads nothing else of the job, so jobs of one
   * submit share one ad instead of each keeping its own (100,000 of them cost the first
   * pass more in garbage collection than in building).
   */
  private shared(shape: PolicyShape, own: RecordSlot[]): { ad: ClassAd; uses: number } | undefined {
    let key = String(shape.id);
    for (const v of own) {
      const k = slotKey(v);
      if (k === undefined) return undefined;
      key += k;
    }
    let found = this.ads.get(key);
    if (found === undefined) {
      if (this.ads.size >= MAX_SHARED_ADS) this.ads.clear();
      this.ads.set(key, (found = { ad: new RecordAd(shape.layout, shape.slots, own), uses: 0 }));
    }
    found.uses++;
    return found;
  }

  private shape(js: Jobspec): PolicyShape | undefined {
    let s = this.shapes.get(js);
    if (s === undefined) this.shapes.set(js, (s = this.reads.bounded ? this.intern(this.host.shape(js)) : null));
    return s ?? undefined;
  }

  private intern(jobShape: JobAdShape): PolicyShape | null {
    let same = this.interned.get(jobShape.layout);
    if (same === undefined) {
      if (this.interned.size >= MAX_INTERNED) this.interned.clear();
      this.interned.set(jobShape.layout, (same = []));
    }
    const found = same.find((x) => x.user.length === jobShape.user.length && x.user.every((e, i) => e === jobShape.user[i]));
    if (found !== undefined) return found.shape;
    const shape = policyShape(jobShape, this.reads.names, this.shapeCount++, this.layouts);
    if (same.length < MAX_INTERNED_PER_LAYOUT) same.push({ user: jobShape.user, shape });
    return shape;
  }
}

function computedSlots(job: JobAdInput, shape: PolicyShape, dynamic: readonly RecordSlot[], base: JobAdBase | undefined): RecordSlot[] {
  const own = new Array<RecordSlot>(shape.computed.length);
  for (let i = 0; i < own.length; i++) {
    const slot = shape.computed[i]!;
    own[i] = slot < DYNAMIC_SLOTS ? dynamic[slot] : base !== undefined ? base.slots[slot] : cheapSubmitSlot(job, slot);
  }
  return own;
}

/**
 * The names reachable from `start` through the jobspec's user attributes, laid out computed
 * first; null when a reachable expression reads names chosen at run time.
 */
function policyShape(jobShape: JobAdShape, start: ReadonlySet<string>, id: number, layouts: Map<string, AdLayout>): PolicyShape | null {
  const userStart = jobShape.layout.length - jobShape.user.length;
  const seen = new Set<string>();
  const todo = [...start];
  const computed: Array<[string, number]> = [];
  const user: Array<[string, Expr]> = [];
  while (todo.length > 0) {
    const key = todo.pop()!;
    if (seen.has(key)) continue;
    seen.add(key);
    const slot = computedSlotOf(key);
    if (slot >= 0) {
      computed.push([jobShape.layout.names[slot]!, slot]);
      continue;
    }
    const i = jobShape.layout.slotOf(key);
    if (i < userStart) continue;
    const e = jobShape.user[i - userStart]!;
    if (!readsOnlyNamed(e)) return null;
    user.push([jobShape.layout.names[i]!, e]);
    for (const n of referencedNames(e, new Set())) if (!seen.has(n)) todo.push(n);
  }
  const names = [...computed.map(([n]) => n), ...user.map(([n]) => n)];
  const key = `${computed.length}\0${names.join("\0")}`;
  let layout = layouts.get(key);
  if (layout === undefined) {
    layout = new AdLayout(names, computed.flatMap(([, slot], i) => (isIntegerSlot(slot) ? [i] : [])));
    if (layouts.size >= MAX_INTERNED) layouts.clear();
    layouts.set(key, layout);
  }
  const slots = new Array<RecordSlot>(layout.length);
  user.forEach(([, e], i) => (slots[computed.length + i] = e));
  const needsBase = computed.some(([, slot]) => slot >= DYNAMIC_SLOTS && !isCheapSubmitSlot(slot));
  const deterministic = !user.some(([, e]) => callsFunction(e, "random"));
  return { id, layout, slots, computed: computed.map(([, slot]) => slot), needsBase, deterministic };
}

/** A computed value's part of a shared-ad key (tagged by type); undefined: not shared. */
function slotKey(v: RecordSlot): string | undefined {
  switch (typeof v) {
    case "undefined":
      return "\0u";
    case "number":
      return `\0n${v}`;
    case "bigint":
      return `\0i${v}`;
    case "boolean":
      return v ? "\0t" : "\0f";
    case "string":
      // A string may hold the separator: its length keeps the key unambiguous.
      return `\0s${v.length}:${v}`;
    default:
      return undefined;
  }
}

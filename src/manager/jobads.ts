/**
 * The manager's job-ad cache. An active job's ad is built at most once per event: it is
 * kept with the job's folded core and rebuilt when the core changed (every processed event
 * replaces the core, so "the core changed" is exactly "the job had an event"). Inactive
 * jobs' ads are built from the store on demand and kept in a small LRU.
 *
 * Ads handed out are frozen (shared between callers); `clone()` gives a writable copy.
 */
import type { ClassAd } from "../classad/classad.js";
import type { AdLayout } from "../classad/record-ad.js";
import type { Expr } from "../classad/expr.js";
import { parseExpr } from "../classad/parser.js";
import { loadUserTable, type UserTable } from "./base/users.js";
import type { JobId } from "./base/ids.js";
import { buildJobAd, jobAdBase, jobAdShape, type JobAdHost, type JobAdShape } from "./ads/jobad.js";
import { PolicyAds, type PolicyReads } from "./ads/policy-ad.js";
import { Kept } from "./engine/kept.js";
import type { ActiveJob } from "./engine/job.js";
import type { Jobspec } from "./port/records.js";
import type { QueueEntry } from "./scheduler/scheduler.js";

/** Inactive job ads kept (each is a few hundred bytes plus its user attributes). */
const INACTIVE_ADS_KEPT = 1024;
/**
 * Ads of waiting jobs outside the scheduler's queue (held, or not yet in SCHED) kept on
 * their jobs: only a reader builds them (a listing's constraint, `why`, the dashboard), and
 * one look at 50,000 held jobs would keep 75 MB of ads (kept.ts). Few, for the reason
 * EVENTLOGS_KEPT gives. The ads of queued jobs, which every scheduling pass reads, and of
 * running jobs are kept as long as they are current.
 */
export const WAITING_ADS_KEPT = 64;
/** Distinct user-attribute texts whose parse is kept (the table is emptied when full). */
const PARSED_TEXTS_KEPT = 8192;

export interface JobAdsOptions {
  hostname: string;
  outputDir: string;
  /** The instance owner's uid: its jobs (and this process's user's) use `outputDir`. */
  owner?: number;
  /** An active job, or undefined. */
  active(id: JobId): ActiveJob | undefined;
  /** The scheduler: when it last passed a queued job over (LastRejMatchTime; see keepRejected). */
  scheduler?: RejectedAt;
  /** An inactive job replayed from the store (no callbacks), or undefined. */
  inactive(id: JobId): ActiveJob | undefined;
}

/** Builds and caches job ads for one manager. */
export class JobAds {
  private readonly layouts = new Map<string, AdLayout>();
  /** Expression text → tree: jobs of one workflow repeat the same attribute texts, and
   *  trees are immutable, so they are shared (a syntax error is thrown, never kept). */
  private readonly parsed = new Map<string, Expr>();
  private readonly parse = (text: string): Expr => {
    let e = this.parsed.get(text);
    if (e === undefined) {
      e = parseExpr(text, true);
      if (this.parsed.size >= PARSED_TEXTS_KEPT) this.parsed.clear();
      this.parsed.set(text, e);
    }
    return e;
  };
  private readonly inactiveAds = new Map<JobId, ClassAd>();
  private users: UserTable | undefined;
  private readonly host: JobAdHost;
  /** Waiting jobs outside the queue whose ad was built, oldest first (WAITING_ADS_KEPT). */
  private readonly waitingAds = new Kept<ActiveJob>(WAITING_ADS_KEPT, (job) => {
    if (waitingOutsideQueue(job)) job.adCache = undefined;
    return true;
  });

  constructor(private readonly opts: JobAdsOptions) {
    this.host = {
      hostname: opts.hostname,
      outputDir: (uid) => (uid === opts.owner || uid === (process.getuid?.() ?? 0) ? opts.outputDir : undefined),
      userName: (uid) => (this.users ??= loadUserTable()).name(uid),
      shape: (js) => this.shape(js),
    };
  }

  /** The job ad of an active or inactive job, or undefined if the job is unknown. */
  get(id: JobId): ClassAd | undefined {
    const job = this.opts.active(id);
    if (job) return this.of(job);
    const cached = this.inactiveAds.get(id);
    if (cached) {
      this.inactiveAds.delete(id);
      this.inactiveAds.set(id, cached);
      return cached;
    }
    const replayed = this.opts.inactive(id);
    if (!replayed) return undefined;
    const ad = buildJobAd(replayed, this.host);
    this.inactiveAds.set(id, ad);
    if (this.inactiveAds.size > INACTIVE_ADS_KEPT) this.inactiveAds.delete(this.inactiveAds.keys().next().value as JobId);
    return ad;
  }

  /** The (cached) ad of an active job. */
  of(job: ActiveJob): ClassAd {
    if (this.opts.scheduler !== undefined) keepRejected(job, this.opts.scheduler);
    const c = job.adCache;
    if (c !== undefined && c.revision === job.revision && c.times === job.matchTimes) return c.ad;
    const core = job.core;
    const base = c !== undefined && c.base.jobspec === core.jobspec && c.base.t_submit === core.t_submit ? c.base : jobAdBase(job, this.host);
    const ad = buildJobAd(job, this.host, base);
    job.adCache = { revision: job.revision, base, ad, times: job.matchTimes };
    if (waitingOutsideQueue(job)) this.waitingAds.add(job);
    return ad;
  }

  /** Policy-only ads of active jobs for what a policy reads (ads/policy-ad.ts). */
  policyAds(reads: PolicyReads): PolicyAds {
    const scheduler = this.opts.scheduler;
    return new PolicyAds(reads, this.host, scheduler === undefined ? undefined : (job) => keepRejected(job as ActiveJob, scheduler));
  }

  /** An inactive job was purged: forget its ad. */
  forget(id: JobId): void {
    this.inactiveAds.delete(id);
  }

  /** A jobspec's ad layout and parsed user attributes: made once per job and jobspec
   *  version (kept in the job's ad base); the layout and the parsed texts are shared. */
  private shape(js: Jobspec): JobAdShape {
    return jobAdShape(js, this.layouts, this.parse);
  }
}

/** A job that waits (NEW to SCHED) and is not in the scheduler's queue (held, or not yet scheduled). */
function waitingOutsideQueue(job: ActiveJob): boolean {
  const s = job.core.state;
  return job.schedEntry === undefined && (s === "NEW" || s === "DEPEND" || s === "PRIORITY" || s === "SCHED");
}

/** What keepRejected reads: the scheduler's side of LastRejMatchTime. */
export interface RejectedAt {
  rejectedAt(entry: QueueEntry): number;
}

/**
 * Takes into the job the time a matching pass last passed it over, from its queue entry:
 * when its ad is read, and before it drops the entry. Passes stamp the scheduler's entries
 * (or sweep the rest of the queue at once), not the jobs: a 100,000-job pass touches no job.
 */
export function keepRejected(job: ActiveJob, s: RejectedAt): void {
  const e = job.schedEntry;
  if (e === undefined) return;
  const at = s.rejectedAt(e);
  // A new object when it moved (MatchTimes are replaced, never changed): the cached ad is stale.
  if (at > (job.matchTimes?.rejected ?? -1)) job.matchTimes = { rejected: at };
}

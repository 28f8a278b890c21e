/**
 * The fetch loop (spec htcondor.md §2): per slot with a hook keyword, FETCH_WORK runs with
 * the slot ad on stdin, at most one at a time, gated by FetchWorkDelay (MY = slot ad,
 * TARGET = the claim's job ad; default 300 s) and the slot's locally evaluated Start. A
 * returned job ad is tested with Start and Rank, answered with REPLY_FETCH, and becomes a
 * jobtap job pinned to the slot: the slot's *fetch claim*. Accepted work of a strictly
 * higher rank evicts the claim's running job; EVICT_CLAIM tells the work source whenever a
 * claim that held a job ad is vacated.
 *
 * Claims are kept in the plugin's persistent state, so after a daemon restart the fetched
 * jobs still running are still the slots' claims; a job is submitted once per claim (its
 * id is stored before anything else can happen), so no fetched job is run twice.
 */
import type { OwnerVerdict } from "./owner.js";
import { ClassAd, HookRunner, describeHookResult, formatJobId, isTrue, parseJobId, printOldAd, readHookAd, writeHookAds } from "jobtap/plugin";
import type { HookResult, JobId, PluginContext } from "jobtap/plugin";
import type { FetchConfig, KeywordHooks } from "./config.js";
import { checkDisk, checkUserLogFormat, fetchedJobspec, resolveAdPaths } from "./fetched-ad.js";

/** A fetch claim: the job ad a slot accepted, and the jobtap job running it. */
export interface Claim {
  id: string;
  /** The accepted job ad (old-style text, with HookKeyword). */
  ad: string;
  rank: number;
  /** The jobtap job (f58) once submitted; undefined while idle or not yet submitted. */
  job?: string;
  /** Set (and saved) before the job is submitted: after a crash, a claim with this set and
   *  no job is matched to an active job carrying its FetchClaimId, else submitted again. */
  submitting?: boolean;
  /** The uid its job runs as (its ad's Owner, multi-user instance); absent: the instance owner. */
  owner?: number;
}

interface SlotState {
  id: number;
  name: string;
  keyword: string;
  inFlight: boolean;
  timer?: ReturnType<PluginContext["clock"]["setTimeout"]>;
  lastSpawned: number;
  lastCompleted: number;
  nextDelay: number;
  claim?: Claim;
  /** Accepted work waiting for the preempted claim's job to go (the slot is Preempting). */
  next?: Claim;
  fetches: number;
  discarded: number;
}

const DEFAULT_DELAY = 300;
/** jobtap's limits on hooks HTCondor lets run for ever (docs/condor-fetch.md). */
const FETCH_TIME_LIMIT_MS = 60_000;
const NOTIFY_TIME_LIMIT_MS = 60_000;
const STATE_KEY = "claims";

const seconds = (ms: number) => Math.floor(ms / 1000);

/** The fetch side of the plugin: one state per fetching slot. */
export class Fetcher {
  private readonly slots = new Map<number, SlotState>();
  private seq = 0;
  private closed = false;
  private started = false;
  private readonly bootTime: number;

  constructor(
    private readonly p: PluginContext,
    private readonly runner: HookRunner,
    private cfg: FetchConfig,
    /** Who the work of a job ad runs as, or why it is rejected (owner.ts). */
    private readonly ownerOf: (job: ClassAd) => OwnerVerdict,
  ) {
    this.bootTime = seconds(p.clock.now());
  }

  /** Starts fetching on every slot with a keyword, restoring claims saved before a restart. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const saved = ((await this.p.state.get<Record<string, { claim?: Claim; next?: Claim; seq?: number }>>(STATE_KEY)) ?? {});
    for (const [id, kw] of this.cfg.slotKeywords) {
      const ad = this.p.slotAd(id);
      const s: SlotState = { id, name: String(ad?.evaluate("Name") ?? `slot${id}`), keyword: kw, inFlight: false, lastSpawned: 0, lastCompleted: 0, nextDelay: 0, fetches: 0, discarded: 0 };
      const old = saved[String(id)];
      if (old?.claim) s.claim = old.claim;
      if (old?.next) s.next = old.next;
      this.seq = Math.max(this.seq, old?.seq ?? 0);
      this.slots.set(id, s);
    }
    for (const s of this.slots.values()) {
      this.restore(s);
      this.publish(s);
      this.tryFetch(s);
    }
  }

  /**
   * After a restart: a claim whose submit was under way is matched to the active job that
   * carries its FetchClaimId (seen in job.new), else submitted now (it never ran); a claim
   * whose job ended while the daemon was down is idle (or hands over to waiting work).
   */
  private restore(s: SlotState): void {
    const c = s.claim;
    if (c?.submitting && c.job === undefined) {
      const found = this.claimJobs.get(c.id);
      if (found === undefined) return this.submit(s, c);
      c.job = found;
      c.submitting = undefined;
    }
    if (c?.job !== undefined && !this.active(c.job)) {
      c.job = undefined;
      if (s.next) this.promoteNext(s);
    }
  }
  /** FetchClaimId → f58 of the active jobs seen in job.new (restart and load replay). */
  private readonly claimJobs = new Map<string, string>();

  /** job.new: remembers which claim an active job runs (its FetchClaimId). */
  seenJob(id: JobId, claimId: string): void {
    this.claimJobs.set(claimId, formatJobId(id));
  }

  private active(f58: string): boolean {
    try {
      const j = this.p.lookup(parseJobId(f58));
      return j !== undefined && !(j instanceof Promise) && j.state !== "INACTIVE";
    } catch {
      return false;
    }
  }

  reconfigure(cfg: FetchConfig): void {
    this.cfg = cfg;
    for (const s of this.slots.values()) this.publish(s);
  }

  stop(): void {
    this.closed = true;
    for (const s of this.slots.values()) if (s.timer) this.p.clock.clearTimeout(s.timer);
  }

  private hooks(s: SlotState): KeywordHooks | undefined {
    return this.cfg.hooksFor(s.keyword);
  }

  private label(s: SlotState, hook: string): string {
    return `slot ${s.id} (${s.name}) keyword ${s.keyword} ${hook}`;
  }

  private save(): void {
    if (this.closed) return;
    const out: Record<string, unknown> = {};
    for (const s of this.slots.values()) if (s.claim || s.next) out[String(s.id)] = { claim: s.claim, next: s.next, seq: this.seq };
    this.p.state.set(STATE_KEY, out);
  }

  /** The slot ad as hooks and policy see it: the host's, with this claim's State/Activity. */
  slotAd(s: SlotState): ClassAd {
    return this.p.slotAd(s.id) ?? new ClassAd();
  }

  private claimAd(c: Claim | undefined): ClassAd | null {
    if (c === undefined) return null;
    const r = readHookAd(c.ad);
    return r.ad;
  }

  /** Publishes Start, Rank, FetchWorkDelay, the LastFetchWork* times and the claim's state. */
  private publish(s: SlotState): void {
    if (this.closed) return;
    const ad = new ClassAd();
    if (this.cfg.start !== undefined) ad.setExpr("Start", this.cfg.start, true);
    if (this.cfg.rank !== undefined) ad.setExpr("Rank", this.cfg.rank, true);
    if (this.cfg.fetchWorkDelay !== undefined) ad.setExpr("FetchWorkDelay", this.cfg.fetchWorkDelay, true);
    ad.set("LastFetchWorkSpawned", BigInt(s.lastSpawned));
    ad.set("LastFetchWorkCompleted", BigInt(s.lastCompleted));
    ad.set("NextFetchWorkDelay", BigInt(s.nextDelay));
    if (s.claim) {
      ad.set("State", s.next ? "Preempting" : "Claimed");
      ad.set("Activity", s.next ? "Vacating" : s.claim.job !== undefined ? "Busy" : "Idle");
      if (s.claim.job !== undefined) ad.set("FetchedJobId", s.claim.job);
    }
    try {
      this.p.publishAd(`slot${s.id}`, ad, { slotIds: [s.id] });
    } catch (e) {
      this.p.log.error(`${this.label(s, "publish")}: ${(e as Error).message}`);
    }
  }

  /** FetchWorkDelay in seconds: MY = slot ad, TARGET = the claim's job ad; 300 when not an integer. */
  private delay(s: SlotState): number {
    const slot = this.slotAd(s);
    if (!slot.has("FetchWorkDelay")) return DEFAULT_DELAY;
    const v = slot.evaluate("FetchWorkDelay", this.claimAd(s.claim));
    if (typeof v === "bigint") return Number(v);
    if (typeof v === "number" && Number.isInteger(v)) return v;
    return DEFAULT_DELAY;
  }

  private arm(s: SlotState, ms: number): void {
    if (this.closed) return;
    if (s.timer) this.p.clock.clearTimeout(s.timer);
    s.timer = this.p.clock.setTimeout(() => {
      s.timer = undefined;
      this.tryFetch(s);
    }, Math.max(ms, 0));
  }

  /** HTCondor's tryFetchWork: one in flight, the delay, a locally false Start, then spawn. */
  tryFetch(s: SlotState): void {
    if (this.closed || s.inFlight) return;
    const hooks = this.hooks(s);
    const path = hooks?.paths.FETCH_WORK;
    if (path === undefined) return;
    const now = this.p.clock.now();
    const delay = this.delay(s);
    s.nextDelay = delay;
    if (delay > 0 && now - s.lastCompleted * 1000 < delay * 1000) {
      this.arm(s, s.lastCompleted * 1000 + delay * 1000 - now);
      return;
    }
    const slot = this.slotAd(s);
    if (slot.has("Start") && slot.evaluate("Start") === false) {
      this.arm(s, Math.max(delay, 1) * 1000);
      return;
    }
    s.inFlight = true;
    s.lastSpawned = seconds(now);
    s.fetches++;
    this.publish(s);
    const stdin = printOldAd(this.slotAd(s));
    void this.runner
      .run({ path, name: this.label(s, "FETCH_WORK"), hookType: "FETCH_WORK", stdin, timeLimitMs: FETCH_TIME_LIMIT_MS })
      .then((r) => this.fetched(s, r))
      .catch((e: unknown) => this.p.log.error(`${this.label(s, "FETCH_WORK")}: ${(e as Error).message}`))
      .finally(() => {
        s.inFlight = false;
        if (this.closed) return;
        s.lastCompleted = seconds(this.p.clock.now());
        const d = this.delay(s);
        s.nextDelay = d;
        this.publish(s);
        this.arm(s, d <= 0 ? 1000 : d * 1000);
      });
  }

  /** FETCH_WORK exited: a bad reply is discarded whole; an empty one is "no work". */
  private fetched(s: SlotState, r: HookResult): void {
    if (this.closed) return;
    const what = this.label(s, "FETCH_WORK");
    if (r.kind !== "exited" && r.kind !== "signaled") {
      if (r.kind !== "cancelled") this.p.log.warn(`${what}: ${describeHookResult(r)}`);
      return;
    }
    if (r.timedOut || r.truncated) {
      s.discarded++;
      this.p.log.warn(`${what}: reply discarded: ${r.timedOut ? "killed at its time limit" : `output over ${r.stdout.length} bytes`}`);
      return;
    }
    const { ad, failed } = readHookAd(r.stdout);
    if (failed.length > 0) {
      s.discarded++;
      const f = failed[0]!;
      this.p.log.warn(`${what}: reply discarded: line ${f.line}: ${f.message}: ${JSON.stringify(f.text.slice(0, 80))}`);
      return;
    }
    if (ad.names().length === 0) {
      if (s.claim && s.claim.job === undefined && !s.next) this.evict(s, s.claim, "no work");
      return;
    }
    this.decide(s, ad);
  }

  /** HTCondor's handleHookFetchWork for a non-empty job ad. */
  private decide(s: SlotState, job: ClassAd): void {
    const slot = this.slotAd(s);
    const idleFetch = s.claim !== undefined && s.claim.job === undefined && !s.next;
    let why: string | undefined;
    let rank = 0;
    if (s.next) why = "the slot is preempting its claim";
    else if (slot.has("Start") && !isTrue(slot.evaluate("Start", job))) why = "Start is not true for this job";
    else {
      const v = slot.has("Rank") ? slot.evaluate("Rank", job) : 0n;
      rank = typeof v === "bigint" ? Number(v) : typeof v === "number" ? v : typeof v === "boolean" ? Number(v) : 0;
      if (s.claim && !idleFetch && !(rank > s.claim.rank)) why = `rank ${rank} does not beat the claim's rank ${s.claim.rank}`;
    }
    if (why === undefined) {
      const kw = job.has("HookKeyword") ? job.evaluate("HookKeyword") : undefined;
      if (typeof kw !== "string") job.set("HookKeyword", s.keyword);
      try {
        resolveAdPaths(job);
        checkDisk(job, slot);
        checkUserLogFormat(job);
        fetchedJobspec(job, s.id);
      } catch (e) {
        why = (e as Error).message;
      }
    }
    const owner = why === undefined ? this.ownerOf(job) : { uid: undefined };
    if ("why" in owner) why = owner.why;
    const accept = why === undefined;
    const uid = "uid" in owner ? owner.uid : undefined;
    const claim: Claim | undefined = accept ? { id: idleFetch ? s.claim!.id : this.newClaimId(s), ad: printOldAd(job), rank, ...(uid === undefined ? {} : { owner: uid }) } : undefined;
    this.notify(s, "REPLY_FETCH", [accept ? "accept" : "reject"], job, claim?.id);
    if (!accept) {
      this.p.log.info(`${this.label(s, "FETCH_WORK")}: job rejected: ${why}`);
      if (idleFetch) this.evict(s, s.claim!, "rejected work");
      return;
    }
    if (s.claim && !idleFetch) {
      s.next = claim;
      this.save();
      this.publish(s);
      this.preempt(s, s.claim, rank);
      return;
    }
    s.claim = claim;
    this.submit(s, claim!);
  }

  private newClaimId(s: SlotState): string {
    this.seq++;
    return `<${s.name}>#${this.bootTime}#${this.seq}#condor-fetch`;
  }

  /** Ends the claim's job so that the better-ranked work can run (EVICT_CLAIM follows when it is gone). */
  private preempt(s: SlotState, c: Claim, rank: number): void {
    if (c.job === undefined) return this.promoteNext(s);
    try {
      this.p.raiseException(parseJobId(c.job), "evict", 0, `condor-fetch: slot ${s.id}: preempted by fetched work of rank ${rank} (claim's rank ${c.rank})`);
    } catch (e) {
      this.p.log.warn(`${this.label(s, "preempt")}: job ${c.job}: ${(e as Error).message}`);
      this.promoteNext(s);
    }
  }

  /** The preempted claim is vacated: EVICT_CLAIM, then the waiting work becomes the claim. */
  private promoteNext(s: SlotState): void {
    const next = s.next!;
    s.next = undefined;
    if (s.claim) this.notify(s, "EVICT_CLAIM", [], readHookAd(s.claim.ad).ad, s.claim.id);
    s.claim = next;
    this.submit(s, next);
  }

  /** Submits the claim's job pinned to the slot; a refusal vacates the claim. */
  private submit(s: SlotState, c: Claim): void {
    const ad = readHookAd(c.ad).ad;
    ad.set("FetchClaimId", c.id);
    let jobspec;
    try {
      jobspec = fetchedJobspec(ad, s.id);
    } catch (e) {
      this.p.log.warn(`${this.label(s, "FETCH_WORK")}: accepted job ad cannot become a job: ${(e as Error).message}`);
      this.evict(s, c, "bad job ad");
      return;
    }
    c.submitting = true;
    this.save();
    this.publish(s);
    this.p
      .submit(jobspec, c.owner === undefined ? undefined : { userid: c.owner })
      .then((id) => {
        c.submitting = undefined;
        if (s.claim !== c || this.closed) return;
        c.job = formatJobId(id);
        this.save();
        this.publish(s);
        this.p.log.info(`${this.label(s, "FETCH_WORK")}: claim ${c.id}: job ${c.job}`);
      })
      .catch((e: unknown) => {
        c.submitting = undefined;
        if (this.closed) return;
        this.p.log.warn(`${this.label(s, "FETCH_WORK")}: claim ${c.id}: job refused: ${(e as Error).message}`);
        if (s.claim === c) this.evict(s, c, "job refused");
      });
  }

  /** Vacates a claim: EVICT_CLAIM with its job ad, the slot goes back to fetching. */
  private evict(s: SlotState, c: Claim, why: string): void {
    this.p.log.info(`${this.label(s, "EVICT_CLAIM")}: claim ${c.id} vacated: ${why}`);
    this.notify(s, "EVICT_CLAIM", [], readHookAd(c.ad).ad, c.id);
    if (s.claim === c) s.claim = undefined;
    this.save();
    this.publish(s);
  }

  /** REPLY_FETCH / EVICT_CLAIM: fire and forget; stdin = job ad, `-----`, slot ad [, ClaimId]. */
  private notify(s: SlotState, type: "REPLY_FETCH" | "EVICT_CLAIM", args: string[], job: ClassAd, claimId: string | undefined): void {
    const path = this.hooks(s)?.paths[type];
    if (path === undefined) return;
    let slotText = printOldAd(this.slotAd(s));
    if (claimId !== undefined) slotText += `ClaimId = "${claimId}"\n`;
    const name = this.label(s, type);
    void this.runner
      .run({ path, args, name, hookType: type, stdin: writeHookAds([job, slotText]), timeLimitMs: NOTIFY_TIME_LIMIT_MS, stdoutCap: 0, stderrCap: 4096 })
      .then((r) => {
        if (r.kind === "exited" && r.exitCode === 0) return;
        this.p.log.info(`${name}: ${describeHookResult(r)}`);
      });
  }

  /** A job ended: the claim holding it goes idle and the slot fetches at once (subject to the delay). */
  jobGone(id: JobId): void {
    const f58 = formatJobId(id);
    for (const s of this.slots.values()) {
      if (s.claim?.job !== f58) continue;
      s.claim.job = undefined;
      if (s.next) this.promoteNext(s);
      else {
        this.save();
        this.publish(s);
        if (s.timer) this.p.clock.clearTimeout(s.timer);
        this.tryFetch(s);
      }
    }
  }

  /** The claim's job was replaced by a held or requeued copy (starter hooks): the claim follows. */
  jobReplaced(oldId: JobId, newId: JobId): void {
    const f58 = formatJobId(oldId);
    for (const s of this.slots.values()) {
      if (s.claim?.job !== f58) continue;
      s.claim.job = formatJobId(newId);
      this.save();
      this.publish(s);
    }
  }

  query(): Record<string, unknown>[] {
    return [...this.slots.values()].map((s) => ({
      slot: s.id,
      keyword: s.keyword,
      fetching: s.inFlight,
      fetches: s.fetches,
      discarded: s.discarded,
      last_spawned: s.lastSpawned,
      last_completed: s.lastCompleted,
      next_delay: s.nextDelay,
      claim: s.claim ? { id: s.claim.id, rank: s.claim.rank, job: s.claim.job ?? null } : null,
      preempting_for: s.next ? { id: s.next.id, rank: s.next.rank } : null,
    }));
  }
}

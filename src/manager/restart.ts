/**
 * Restart (spec §2.7): replay every stored eventlog through `transition()` with no
 * callbacks, then — once the plugin host is attached — run the restart callbacks and
 * actions exactly as Flux does after `restart_from_kvs`. Reading and folding one stored job
 * is stored-job.ts's.
 */
import type { Actions } from "./actions.js";
import type { Engine } from "./engine/engine.js";
import type { Executors } from "./exec/registry.js";
import { formatJobId, type JobId } from "./base/ids.js";
import { isPlainObject } from "./core/jobspec.js";
import type { InactiveCache } from "./engine/inactive.js";
import { dropEventlog, eventlogDropped, newActiveJob, type ActiveJob, type EventlogReader } from "./engine/job.js";
import type { StackResult } from "./port/port.js";
import type { EventEntry, JobArgs } from "./port/records.js";
import type { Scheduler } from "./scheduler/scheduler.js";
import { inactiveRecordOf, parseSummary, recordOf, summaryArgs, summaryOf, type InactiveSummary } from "./engine/summary.js";
import { StoredInactive } from "./engine/inactive-stored.js";
import type { InactiveRecord } from "./engine/inactive.js";
import type { OutOf } from "./port/topics.js";
import type { JobStore, StoredJobText } from "./store/types.js";
import { eventPosted, isDebugJob, type JobCore } from "./core/transition.js";
import { JobspecShare, replayJob } from "./stored-job.js";

/**
 * Once the restart's own events (flux-restart, priority) are durable, a waiting job whose
 * eventlog is still dropped holds none of its entries in memory: what they appended counts
 * as stored too. A job with entries in a batch not yet written keeps them.
 */
export async function settleRestored(engine: Engine, read: EventlogReader): Promise<void> {
  // A batch held back while others were in flight goes when one lands: wait for it too. A
  // manager whose jobs keep text in flight (SETTLE_TRIES landings in a row) keeps their entries.
  for (let tries = 0; tries < SETTLE_TRIES; tries++) {
    engine.batch.commit();
    await engine.batch.settled();
    if (settleDurable(engine, engine.active.values(), read) === 0) return;
  }
}

/** Drops again the entries of those `jobs` whose text is all durable; returns how many are not yet. */
function settleDurable(engine: Engine, jobs: Iterable<ActiveJob>, read: EventlogReader): number {
  let left = 0;
  for (const job of jobs) {
    if (!eventlogDropped(job)) continue;
    if (engine.batch.durableFor(job)) job.drop(read);
    else left++;
  }
  return left;
}

/** How many landings settleRestored waits for until every dropped job's text is durable. */
const SETTLE_TRIES = 20;

export interface ReplayDeps {
  engine: Engine;
  store: JobStore;
  inactive: InactiveCache;
  scheduler: Scheduler;
  /** Given: an active job's replayed entries are dropped and read back with it on first use. */
  readEventlog?: EventlogReader;
}

/** What replay hands the restart callbacks. */
export interface Replay {
  /** The highest id seen (for the FLUID generator). */
  maxId: JobId | undefined;
  /**
   * The summaries (summary.ts) of the inactive jobs in the cache's columns, for
   * job.inactive-add without their eventlogs: every inactive job's, or with `lazy` only those
   * replayed in full (the others are read page by page in phase 2).
   */
  summaries: Map<JobId, InactiveSummary>;
  /** The store reads summaries one page at a time: phase 2 fills the stored tier. */
  lazy: boolean;
}

/**
 * Summaries per page of the restart pass (the connection is free between pages). Small:
 * a page of 4096 rows outlived young-generation GCs and was copied and promoted with
 * them (1M stored jobs: 2 s more CPU and 200 MB more peak RSS at open than 256).
 */
const SUMMARY_PAGE = 256;

/**
 * Phase 1: replay without callbacks. Inactive jobs with a stored summary are taken from it
 * (their eventlogs are read only when asked for); every other job is replayed in full, and
 * an inactive one gets its summary written, so the next start reads that instead.
 */
export function replayStore(d: ReplayDeps): Replay {
  const store = d.store;
  const lazy = store.summaryPage !== undefined && store.summaryText !== undefined && store.lastJobId !== undefined && store.loadUnsummarized !== undefined;
  const out: Replay = { maxId: undefined, summaries: new Map(), lazy };
  const seen = (id: JobId) => {
    if (out.maxId === undefined || id > out.maxId) out.maxId = id;
  };
  if (lazy) {
    const last = store.lastJobId!();
    if (last !== undefined) seen(last);
    d.inactive.attachStored(new StoredInactive((id) => storedRecord(d, id), store.inactiveHint?.()));
    const fresh = replayTexts(d, out, store.loadUnsummarized!(), seen);
    if (fresh.length > 0) storeSummaries(d, out, fresh);
    return out;
  }
  const unreadable: JobId[] = [];
  if (store.loadSummaries !== undefined && store.loadUnsummarized !== undefined) {
    for (const row of store.loadSummaries()) {
      seen(row.id);
      const s = parseSummary(row.summary);
      if (s === undefined) {
        unreadable.push(row.id);
        continue;
      }
      out.summaries.set(row.id, s);
      d.inactive.restore(recordOf(row.id, s));
      d.engine.countStored(s.userid, s.jobspecBytes);
    }
  }
  // A summary that does not parse is not trusted: that job is replayed in full.
  const replayed = unreadable.map((id) => store.load(id)).filter((t) => t !== undefined);
  const texts = store.loadUnsummarized?.() ?? store.loadAll();
  const fresh = replayTexts(d, out, replayed.length === 0 ? texts : [...replayed, ...texts], seen);
  if (fresh.length > 0 && store.loadSummaries !== undefined) storeSummaries(d, out, fresh);
  return out;
}

/**
 * The record of a job in the stored tier: from its summary, or (a summary that does not
 * parse) from a replay of its eventlog; undefined if neither can be read.
 */
function storedRecord(d: ReplayDeps, id: JobId): InactiveRecord | undefined {
  const text = d.store.summaryText!(id);
  const s = text === undefined ? undefined : parseSummary(text);
  if (s !== undefined) return recordOf(id, s);
  const stored = d.store.load(id);
  const r = stored && replayJob(stored);
  if (r === undefined || "error" in r) return undefined;
  const job = newActiveJob(r.core);
  job.eventlog = r.eventlog;
  job.jobspecBytes = Buffer.byteLength(stored!.jobspec);
  return inactiveRecordOf(job);
}

/** Replays stored jobs in full; returns the inactive ones' fresh summaries. */
function replayTexts(d: ReplayDeps, out: Replay, texts: Iterable<StoredJobText>, seen: (id: JobId) => void): Array<{ id: JobId; summary: string }> {
  const corrupt: Array<{ id: JobId; reason: string }> = [];
  const fresh: Array<{ id: JobId; summary: string }> = [];
  const shared = new JobspecShare();
  for (const text of texts) {
    seen(text.id);
    const r = replayJob(text, shared);
    if ("error" in r) {
      corrupt.push({ id: text.id, reason: r.error });
      continue;
    }
    try {
      const s = admitReplayed(d, r, Buffer.byteLength(text.jobspec), out.lazy);
      if (s === undefined) continue;
      out.summaries.set(text.id, s);
      fresh.push({ id: text.id, summary: JSON.stringify(s) });
    } catch (err) {
      // Data the fold accepted but the manager cannot use (an R it cannot read, ...).
      corrupt.push({ id: text.id, reason: `cannot be restored: ${err instanceof Error ? err.message : String(err)}` });
    }
  }
  for (const c of corrupt) {
    d.engine.log("error", `job ${formatJobId(c.id)}: stored data is corrupt, moved to lost+found: ${c.reason}`);
    d.store.setAside(c.id, c.reason);
  }
  return fresh;
}

/**
 * Writes the summaries of jobs replayed in full, and puts the inactive cache back in id
 * order (summarized jobs were read first). A summary is a cache of the eventlog: if it
 * cannot be written, the next start replays the job again.
 */
function storeSummaries(d: ReplayDeps, out: Replay, fresh: Array<{ id: JobId; summary: string }>): void {
  try {
    d.store.commit({ newJobs: [], appends: new Map(), inactive: fresh, purged: [] });
  } catch (err) {
    d.engine.log("error", `cannot store the summaries of ${fresh.length} inactive jobs (they are replayed in full at the next start): ${(err as Error).message}`);
  }
  d.inactive.sortById();
}

/**
 * One replayed job into the inactive cache (returns its summary), or active with its
 * resources reserved; either way its `jobspecBytes` count for its user.
 */
function admitReplayed(
  d: ReplayDeps,
  r: { core: JobCore; eventlog: EventEntry[]; execlog: EventEntry[] | undefined },
  jobspecBytes: number,
  lazy = false,
): InactiveSummary | undefined {
  const job = newActiveJob(r.core);
  job.eventlog = r.eventlog;
  job.execlog = r.execlog;
  job.jobspecBytes = jobspecBytes;
  if (r.core.state === "INACTIVE") {
    const s = summaryOf(job);
    // A lazy store's pass (phase 2) puts it in the stored tier, in id order with the others.
    if (lazy) return s;
    d.inactive.restore(recordOf(r.core.id, s));
    d.engine.countStored(r.core.userid, jobspecBytes);
    return s;
  }
  restoreRuntimeFlags(job);
  if (r.core.hasResources && !r.core.flags.includes("alloc-bypass")) d.scheduler.reserve(r.core.id, r.core.R);
  d.engine.admit(job);
  d.engine.countStored(r.core.userid, jobspecBytes);
  // Just read from the store, nothing appended: its entries can stay there until used.
  if (d.readEventlog !== undefined) dropEventlog(job, d.readEventlog);
  return undefined;
}

/** Flux's runtime flags that follow from the replayed eventlog. */
function restoreRuntimeFlags(job: ActiveJob): void {
  const c = job.core;
  job.dependQueued = eventPosted(c, "depend");
  job.freeRequested = eventPosted(c, "free");
}

export interface RestartDeps extends ReplayDeps {
  actions: Actions;
  executors: Executors;
}

/** Phase 2 (plugins attached): inactive-add/destroy, per-job restart steps, actions. */
export async function restartCallbacks(d: RestartDeps, replay: Replay, loadInactive: (id: JobId) => ActiveJob | undefined): Promise<void> {
  const e = d.engine;
  const callbacks = e.port.matches("job.inactive-add") || e.port.matches("job.destroy");
  if (callbacks && !replay.lazy) {
    const ids = [...replay.summaries.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const id of ids) {
      const pending = d.inactive.has(id) ? inactiveCallbacks(e, id, replay.summaries.get(id)!, loadInactive) : undefined;
      if (pending) await pending;
    }
  }
  if (replay.lazy) await storedPass(d, replay, callbacks, loadInactive);
  const jobs = [...e.active.values()].sort((a, b) => (a.core.id < b.core.id ? -1 : 1));
  // Jobs [settled, cut) are in the batch `landing` waits for; those after, in the current one.
  let landing: Promise<void> | undefined;
  let settled = 0;
  let cut = 0;
  for (let i = 0; i < jobs.length; i++) {
    const job = jobs[i]!;
    try {
      await restartJob(d, job);
    } catch (err) {
      setAside(d, job, err);
    }
    // Between jobs (each one's cascade has run): their flux-restart and priority events go
    // to the store in batches of RESTART_BATCH_JOBS jobs, not one batch for every waiting
    // job (50,000 held jobs made one 8 MB batch, and the writer thread's heap grew by ~45 MB
    // to write it, never to shrink).
    if (i % RESTART_BATCH_JOBS !== RESTART_BATCH_JOBS - 1) continue;
    e.batch.commit();
    if (d.readEventlog === undefined) continue;
    // One batch behind (the writer writes this one meanwhile): the jobs of the batch before
    // are durable, and their new entries need not stay in memory (50,000 held jobs' two
    // entries each held ~35 MB of heap until the open's end).
    if (landing !== undefined) {
      await landing;
      settleDurable(e, jobs.slice(settled, cut), d.readEventlog);
    }
    landing = e.batch.settled();
    settled = cut;
    cut = i + 1;
  }
  await e.port.replayDone?.();
  for (const job of jobs) {
    if (!e.active.has(job.core.id)) continue;
    try {
      d.actions.run(job);
    } catch (err) {
      setAside(d, job, err);
    }
  }
  d.inactive.enforce();
}

/** Jobs whose restart events go to the store in one batch (restartCallbacks). */
const RESTART_BATCH_JOBS = 1024;

/**
 * Restart's job.inactive-add and job.destroy of one stored inactive job, from its summary;
 * a Promise only if a handler was asynchronous (a microtask per job adds up).
 */
function inactiveCallbacks(e: Engine, id: JobId, s: InactiveSummary, loadInactive: (id: JobId) => ActiveJob | undefined): void | Promise<void> {
  // The jobspec and R are read from the store only if a plugin reads them.
  let full: JobArgs | undefined;
  let job: ActiveJob | undefined;
  const load = () => (job ??= loadInactive(id));
  const view = () => {
    const j = load();
    return (full ??= j && e.args(j));
  };
  const destroy = () => callStored(e, id, "job.destroy", () => summaryArgs(id, s, view), load);
  const added = callStored(e, id, "job.inactive-add", () => summaryArgs(id, s, view), load);
  return added ? added.then(destroy) : destroy();
}

/**
 * Phase 2's pass over the stored summaries (lazy stores): each job joins the stored tier
 * (id, user, clean time), its jobspec bytes count for its user, and the plugins get its
 * job.inactive-add and job.destroy; nothing else of it stays in memory. Pages, not one
 * open statement: a plugin may read the store meanwhile. A summary that does not parse is
 * not trusted: the job is replayed in full and summarized again.
 */
async function storedPass(d: RestartDeps, replay: Replay, callbacks: boolean, loadInactive: (id: JobId) => ActiveJob | undefined): Promise<void> {
  // Jobs phase 1 replayed in full and found inactive: merged in id order with the pages
  // (their fresh summaries are in the pages too, unless they could not be written).
  const fresh = [...replay.summaries.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  let f = 0;
  const one = (id: JobId, s: InactiveSummary): void | Promise<void> => {
    d.inactive.appendStored(id, s.userid, s.t_clean);
    d.engine.countStored(s.userid, s.jobspecBytes);
    return callbacks ? inactiveCallbacks(d.engine, id, s, loadInactive) : undefined;
  };
  let after: JobId | undefined;
  for (;;) {
    const page = d.store.summaryPage!(after, SUMMARY_PAGE);
    if (page.length === 0) break;
    after = page[page.length - 1]!.id;
    for (const row of page) {
      for (; f < fresh.length && fresh[f]! < row.id; f++) {
        const pending = one(fresh[f]!, replay.summaries.get(fresh[f]!)!);
        if (pending) await pending;
      }
      if (f < fresh.length && fresh[f] === row.id) f++;
      const s = (fresh.length > 0 ? replay.summaries.get(row.id) : undefined) ?? parseSummary(row.summary) ?? resummarize(d, row.id);
      if (s === undefined) continue;
      const pending = one(row.id, s);
      if (pending) await pending;
    }
  }
  for (; f < fresh.length; f++) {
    const pending = one(fresh[f]!, replay.summaries.get(fresh[f]!)!);
    if (pending) await pending;
  }
  d.inactive.sealStored();
}

/**
 * A stored job whose summary does not parse, replayed in full: its fresh summary (written
 * with the next batch), or undefined if it is corrupt (moved to lost+found) or not inactive
 * (admitted as active).
 */
function resummarize(d: RestartDeps, id: JobId): InactiveSummary | undefined {
  const text = d.store.load(id);
  const r = text && replayJob(text);
  if (r === undefined) return undefined;
  if ("error" in r) {
    d.engine.log("error", `job ${formatJobId(id)}: stored data is corrupt, moved to lost+found: ${r.error}`);
    d.store.setAside(id, r.error);
    return undefined;
  }
  const job = newActiveJob(r.core);
  job.eventlog = r.eventlog;
  job.execlog = r.execlog;
  job.jobspecBytes = Buffer.byteLength(text!.jobspec);
  if (r.core.state !== "INACTIVE") {
    admitReplayed(d, r, job.jobspecBytes);
    return undefined;
  }
  d.engine.batch.storeSummaryOf(job, inactiveRecordOf(job));
  return summaryOf(job);
}

/**
 * A stored job whose restart step threw (a bug, or data no check foresaw) must not stop
 * the manager from starting: it ends with a `restart` exception; if even that fails, it
 * is moved to lost+found and its resources are given back.
 */
function setAside(d: RestartDeps, job: ActiveJob, err: unknown): void {
  const e = d.engine;
  const id = job.core.id;
  const why = `restart failed: ${err instanceof Error ? err.message : String(err)}`;
  e.log("error", `job ${formatJobId(id)}: ${why}`);
  try {
    e.raise(job, "restart", 0, why);
    return;
  } catch (again) {
    e.log("error", `job ${formatJobId(id)}: cannot raise its exception either (${String(again)}): moved to lost+found`);
  }
  e.dismiss(job);
  e.countStored(job.core.userid, -job.jobspecBytes);
  d.scheduler.free(id);
  d.store.setAside(id, why);
}

async function restartJob(d: RestartDeps, job: ActiveJob): Promise<void> {
  const e = d.engine;
  const c = job.core;
  const unmet = c.state === "NEW" || c.state === "DEPEND" ? await rerunDependencies(e, job) : undefined;
  await e.callJob(job, "job.create");
  await e.callJob(job, "job.new");
  if (job.core.state === "NEW") {
    // Acknowledged (its batch was durable) but `validate` was not yet written. A dependency
    // that can no longer be met ends it once valid: a fatal exception is refused in NEW, and
    // an acknowledged job cannot be rejected. (Its `dependency-add` may be missing: events
    // posted during admission are written in the batch after the acknowledged one.)
    e.post(job, "validate");
    if (unmet !== undefined && e.active.get(job.core.id) === job) e.raise(job, "dependency", 0, `dependency ${unmet}`);
  } else if (job.core.state === "SCHED") {
    e.post(job, "flux-restart");
  } else if ((job.core.state === "RUN" || job.core.state === "CLEANUP") && needsReattach(job)) {
    job.startRequested = true;
    if (isDebugJob(job.core)) e.post(job, "debug.exec-reattach-start");
    d.executors.reattach(job);
  }
}

/**
 * A stack call for a stored inactive job with args built from its summary; OUT (rare for
 * inactive jobs) is applied to the job replayed from the store, as it would have been to
 * the replayed job itself. A Promise only if a handler was asynchronous.
 */
function callStored(e: Engine, id: JobId, topic: "job.inactive-add" | "job.destroy", args: () => JobArgs, load: () => ActiveJob | undefined): void | Promise<void> {
  if (!e.port.matches(topic)) return;
  const fail = (err: unknown) => e.log("error", `job ${formatJobId(id)}: ${topic}: ${err instanceof Error ? err.message : String(err)}`);
  const apply = (res: StackResult<OutOf<typeof topic>>) => {
    if (res.error === undefined && res.out.priority === undefined && !res.out.annotations) return;
    const job = load();
    if (job !== undefined) e.applyOut(job, topic, res);
  };
  try {
    const res = e.port.callJob(topic, args());
    if (res instanceof Promise) return res.then(apply, fail);
    apply(res);
  } catch (err) {
    fail(err);
  }
}

/** Started (or start requested) and not yet released. */
function needsReattach(job: ActiveJob): boolean {
  const c = job.core;
  if (eventPosted(c, "release") || !eventPosted(c, "alloc")) return false;
  return eventPosted(c, "start") || (c.state === "RUN" && c.perilog === 0);
}

/**
 * Re-runs a NEW or DEPEND job's `job.dependency.<scheme>` calls. A refused dependency ends a
 * job in DEPEND at once; for a job still in NEW the first refusal is returned, for the caller
 * to raise after `validate`.
 */
async function rerunDependencies(e: Engine, job: ActiveJob): Promise<string | undefined> {
  const deps = job.core.jobspec.attributes.system?.dependencies;
  if (!Array.isArray(deps)) return undefined;
  let unmet: string | undefined;
  for (const d of deps as unknown[]) {
    if (!isPlainObject(d) || typeof d.scheme !== "string") continue;
    const topic = `job.dependency.${d.scheme}` as const;
    if (!e.port.matches(topic)) {
      e.raise(job, "dependency", 4, `dependency scheme "${d.scheme}" not supported (job may be stuck in DEPEND state)`);
      continue;
    }
    const res = await e.port.callJob(topic, e.args(job, { dependency: d as { scheme: string } }));
    if (res.handled === 0) {
      e.raise(job, "dependency", 4, `dependency scheme "${d.scheme}" not supported (job may be stuck in DEPEND state)`);
    } else if (res.error) {
      // The dependency can no longer be met (an afterok antecedent failed while the manager
      // was down, or before the crash): the job ends, as when it fails while running, instead
      // of waiting in DEPEND for ever (found by the crash campaign, bench/crash.ts).
      const why = typeof res.out.errmsg === "string" ? res.out.errmsg : res.error.message;
      e.log("error", `job ${formatJobId(job.core.id)}: ${topic}: ${why}`);
      if (e.active.get(job.core.id) === job && job.core.state === "DEPEND") e.raise(job, "dependency", 0, `dependency ${why}`);
      else if (job.core.state === "NEW") unmet ??= why;
    }
  }
  return unmet;
}

/**
 * Restart (spec §2.7): replay every stored eventlog through `transition()` with no
 * callbacks, then — once the plugin host is attached — run the restart callbacks and
 * actions exactly as Flux does after `restart_from_kvs`.
 */
import type { Actions } from "./actions.js";
import type { Engine } from "./engine/engine.js";
import type { Executors } from "./exec/registry.js";
import { formatJobId, type JobId } from "./base/ids.js";
import type { InactiveCache } from "./engine/inactive.js";
import { newActiveJob, type ActiveJob } from "./engine/job.js";
import { isPlainObject } from "./core/jobspec.js";
import type { StackResult } from "./port/port.js";
import type { EventEntry, JobArgs, Jobspec } from "./port/records.js";
import type { Scheduler } from "./scheduler/scheduler.js";
import { parseSummary, recordOf, summaryArgs, summaryOf, type InactiveSummary } from "./engine/summary.js";
import type { OutOf } from "./port/topics.js";
import type { JobStore, StoredJobText } from "./store/types.js";
import { eventPosted, isDebugJob, newJobCore, transition, type JobCore } from "./core/transition.js";

export type Replayed = { core: JobCore; eventlog: EventEntry[]; execlog: EventEntry[] | undefined } | { error: string };

/** Folds one stored job; a string error means the stored data is corrupt. */
export function replayJob(text: StoredJobText): Replayed {
  let core: JobCore | undefined;
  const parsed = parseStoredJob(text, (jobspec, e, line) => {
    core ??= newJobCore(text.id, jobspec);
    const r = transition(core, e);
    if (!r.ok) return `eventlog line ${line} (${e.name}): ${r.error}`;
    core = r.job;
    return undefined;
  });
  if ("error" in parsed) return parsed;
  const execlog = text.exec === undefined ? undefined : parseExecLog(text.exec);
  if (execlog !== undefined && "error" in execlog) return execlog;
  return { core: core!, eventlog: parsed.eventlog, execlog };
}

/** Parses a stored exec eventlog (RFC 18 lines); a string error names the bad line. */
export function parseExecLog(text: string): EventEntry[] | { error: string } {
  const out: EventEntry[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] === "") continue;
    let e: EventEntry;
    try {
      e = JSON.parse(lines[i]!) as EventEntry;
    } catch (err) {
      return { error: `exec eventlog line ${i + 1} is not valid JSON: ${(err as Error).message}` };
    }
    if (typeof e?.name !== "string" || typeof e.timestamp !== "number") return { error: `exec eventlog line ${i + 1}: not an RFC 18 entry` };
    out.push(e);
  }
  return out;
}

/**
 * Parses one stored job's jobspec and eventlog; `each` (replayJob's fold) sees every entry
 * as it is read and may refuse it with a message. Without `each` the job is not folded: a
 * listing's view needs the entries, not the state machine's record.
 */
export function parseStoredJob(
  text: StoredJobText,
  each?: (jobspec: Jobspec, e: EventEntry, line: number) => string | undefined,
): { jobspec: Jobspec; eventlog: EventEntry[] } | { error: string } {
  let jobspec: Jobspec;
  try {
    jobspec = JSON.parse(text.jobspec) as Jobspec;
    if (!isPlainObject(jobspec)) return { error: "jobspec is not an object" };
  } catch (e) {
    return { error: `jobspec is not valid JSON: ${(e as Error).message}` };
  }
  const eventlog: EventEntry[] = [];
  const lines = text.eventlog.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") continue;
    let e: EventEntry;
    try {
      e = JSON.parse(line) as EventEntry;
    } catch (err) {
      return { error: `eventlog line ${i + 1} is not valid JSON: ${(err as Error).message}` };
    }
    if (typeof e?.name !== "string" || typeof e.timestamp !== "number") return { error: `eventlog line ${i + 1}: not an RFC 18 entry` };
    const refused = each?.(jobspec, e, i + 1);
    if (refused !== undefined) return { error: refused };
    eventlog.push(e);
  }
  if (eventlog.length === 0 || eventlog[0]!.name !== "submit") return { error: "eventlog does not start with submit" };
  return { jobspec, eventlog };
}

export interface ReplayDeps {
  engine: Engine;
  store: JobStore;
  inactive: InactiveCache;
  scheduler: Scheduler;
}

/** What replay hands the restart callbacks. */
export interface Replay {
  /** The highest id seen (for the FLUID generator). */
  maxId: JobId | undefined;
  /** Every inactive job's summary (summary.ts), for job.inactive-add without its eventlog. */
  summaries: Map<JobId, InactiveSummary>;
}

/**
 * Phase 1: replay without callbacks. Inactive jobs with a stored summary are taken from it
 * (their eventlogs are read only when asked for); every other job is replayed in full, and
 * an inactive one gets its summary written, so the next start reads that instead.
 */
export function replayStore(d: ReplayDeps): Replay {
  const store = d.store;
  const out: Replay = { maxId: undefined, summaries: new Map() };
  const seen = (id: JobId) => {
    if (out.maxId === undefined || id > out.maxId) out.maxId = id;
  };
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

/** Replays stored jobs in full; returns the inactive ones' fresh summaries. */
function replayTexts(d: ReplayDeps, out: Replay, texts: Iterable<StoredJobText>, seen: (id: JobId) => void): Array<{ id: JobId; summary: string }> {
  const corrupt: Array<{ id: JobId; reason: string }> = [];
  const fresh: Array<{ id: JobId; summary: string }> = [];
  for (const text of texts) {
    seen(text.id);
    const r = replayJob(text);
    if ("error" in r) {
      corrupt.push({ id: text.id, reason: r.error });
      continue;
    }
    try {
      const s = admitReplayed(d, r, Buffer.byteLength(text.jobspec));
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
): InactiveSummary | undefined {
  const job = newActiveJob(r.core);
  job.eventlog = r.eventlog;
  job.execlog = r.execlog;
  job.jobspecBytes = jobspecBytes;
  if (r.core.state === "INACTIVE") {
    const s = summaryOf(job);
    d.inactive.restore(recordOf(r.core.id, s));
    d.engine.countStored(r.core.userid, jobspecBytes);
    return s;
  }
  restoreRuntimeFlags(job);
  if (r.core.hasResources && !r.core.flags.includes("alloc-bypass")) d.scheduler.reserve(r.core.id, r.core.R);
  d.engine.admit(job);
  d.engine.countStored(r.core.userid, jobspecBytes);
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
  if (e.port.matches("job.inactive-add") || e.port.matches("job.destroy")) {
    for (const id of d.inactive.ids()) {
      const s = replay.summaries.get(id);
      if (s === undefined) continue;
      // The jobspec and R are read from the store only if a plugin reads them.
      let full: JobArgs | undefined;
      let job: ActiveJob | undefined;
      const load = () => (job ??= loadInactive(id));
      const view = () => {
        const j = load();
        return (full ??= j && e.args(j));
      };
      // Awaited only when a handler was asynchronous (a microtask per job adds up).
      const added = callStored(e, id, "job.inactive-add", () => summaryArgs(id, s, view), load);
      if (added) await added;
      const destroyed = callStored(e, id, "job.destroy", () => summaryArgs(id, s, view), load);
      if (destroyed) await destroyed;
    }
  }
  const jobs = [...e.active.values()].sort((a, b) => (a.core.id < b.core.id ? -1 : 1));
  for (const job of jobs) {
    try {
      await restartJob(d, job);
    } catch (err) {
      setAside(d, job, err);
    }
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
  if (c.state === "NEW" || c.state === "DEPEND") await rerunDependencies(e, job);
  await e.callJob(job, "job.create");
  await e.callJob(job, "job.new");
  if (job.core.state === "NEW") {
    // Acknowledged (its batch was durable) but `validate` was not yet written.
    e.post(job, "validate");
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

async function rerunDependencies(e: Engine, job: ActiveJob): Promise<void> {
  const deps = job.core.jobspec.attributes.system?.dependencies;
  if (!Array.isArray(deps)) return;
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
    }
  }
}

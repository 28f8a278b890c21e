/**
 * The daemon's handlers: each protocol method turned into job manager or plugin host calls.
 * Requests come from a socket, so every field is checked before use; a bad one is a
 * PROTOCOL error naming the method and field.
 */
import { ErrorCode, JobtapError, isJobtapError } from "../errors.js";
import { formatJobId, parseJobId, type JobId } from "../manager/base/ids.js";
import type { JobManager } from "../manager/manager.js";
import type { EventEntry, Jobspec } from "../manager/port/records.js";
import { STATES, type State } from "../manager/base/states.js";
import type { JobtapHost } from "../plugins/index.js";
import type { HandlerRecord } from "../plugins/stack.js";
import { startTrace, type TraceFilter } from "../plugins/trace.js";
import type { JournalEntry } from "../manager/engine/engine.js";
import type { JobView } from "./protocol.js";
import type { JobInfo } from "../manager/engine/views.js";
import { readable, redactEnvironment } from "./visibility.js";
import type { ReloadOutcome } from "./reload.js";
import type { Caller } from "./auth.js";
import type { CallContext, Handlers } from "./server.js";
import { fullView, printedAd, sortForListing, type ListingRow } from "./views.js";
import { isTrue, parseExpr, type ClassAd } from "../classad/index.js";
import { tokenHandlers } from "./http/token-handlers.js";
import { webHandlers, type WebDeps } from "./http/web-handlers.js";
import type { TokenStore } from "./http/tokens.js";

export interface ServiceDeps {
  manager: JobManager;
  /** The plugin host, once the manager has attached it. */
  host: () => JobtapHost | undefined;
  version: string;
  startedAt: number;
  /** False once shutdown began: new submissions are refused. */
  accepting: () => boolean;
  /** Re-reads the daemon's config file (see reload.ts). */
  reload: () => Promise<ReloadOutcome>;
  /** The daemon's log (runtime plugin loads and removals are recorded there). */
  log: (level: "info" | "warn", message: string) => void;
  /** The HTTP listener's bearer tokens (`token.*` methods). */
  tokens: TokenStore;
  /** The dashboard's login codes and URL (`web.*` methods). */
  web: Omit<WebDeps, "tokens">;
}

/** The most of a job's output file one `output` call with `tail` returns (64 KiB). */
const MAX_TAIL = 65536;

/** Builds the method table the socket server serves. */
export function createHandlers(d: ServiceDeps): Handlers {
  const m = d.manager;
  const commits = loneCommits(d);
  return {
    ping: () => ({ version: d.version, pid: process.pid, uptime: (Date.now() - d.startedAt) / 1000 }),
    submit: (req, ctx) => commits.around(() => submit(d, req, who(ctx))),
    list: (req, ctx) => {
      if (req.cursor !== undefined) return listPage(m, req, who(ctx));
      const listing = list(m, req, who(ctx));
      if (req.stream === true) return streamList(listing, ctx);
      return { jobs: listing.rows.map(listing.full) };
    },
    info: (req, ctx) => {
      const id = jobId("info", req.id);
      const info = readable(m, id, who(ctx), "job info", "its jobspec");
      const R = m.jobR(id);
      // The environment may hold secrets: only the job's own user sees it.
      const jobspec = info.userid === who(ctx).userid ? m.jobspec(id) : redactEnvironment(m.jobspec(id));
      return { job: fullView(m, info), jobspec, ...(R ? { R } : {}) };
    },
    eventlog: (req, ctx) => {
      const id = jobId("eventlog", req.id);
      readable(m, id, who(ctx), "eventlog", "its eventlog");
      const path = req.path ?? "eventlog";
      if (path !== "eventlog" && path !== "exec") {
        throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `eventlog: path ${JSON.stringify(path)} is not "eventlog" or "exec"`);
      }
      if (path === "exec") {
        if (req.follow === true) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, "eventlog: follow is for the main eventlog only, not path exec");
        return { eventlog: m.execEventlog(id) };
      }
      if (req.follow === true) return follow(m, id, ctx);
      return { eventlog: m.eventlog(id) };
    },
    why: (req, ctx) => {
      const id = jobId("why", req.id);
      // The same rule as `job info`: a job's reasons quote its eventlog and plugins' views.
      readable(m, id, who(ctx), "job why", "why it waits");
      return m.why(id);
    },
    jobad: (req, ctx) => {
      const id = jobId("jobad", req.id);
      readable(m, id, who(ctx), "job info --classad", "its job ad");
      return printedAd(m.jobAd(id));
    },
    ads: (req) => ({ ads: hostAds(m, req).map(printedAd) }),
    wait: async (req, ctx) => {
      const id = jobId("wait", req.id);
      await untilAborted(m.wait(id), ctx.signal, "wait");
      return { job: fullView(m, m.job(id)) };
    },
    cancel: (req, ctx) => cancel(m, req, who(ctx).userid),
    urgency: (req, ctx) => {
      const urgency = int("urgency", "urgency", req.urgency);
      const old = m.setUrgency(jobId("urgency", req.id), urgency, { userid: who(ctx).userid });
      return { old_urgency: old };
    },
    output: (req, ctx) => {
      const stream = req.stream;
      if (stream !== "stdout" && stream !== "stderr") bad("output", 'stream must be "stdout" or "stderr"');
      const offset = int("output", "offset", req.offset);
      if (offset < 0) bad("output", "offset must be >= 0");
      if (req.tail === undefined) return m.output(jobId("output", req.id), stream, offset, { userid: who(ctx).userid });
      const tail = int("output", "tail", req.tail);
      if (tail < 1 || tail > MAX_TAIL) bad("output", `tail must be 1..${MAX_TAIL} bytes`);
      return m.output(jobId("output", req.id), stream, 0, { userid: who(ctx).userid, max: tail, tail: true });
    },
    kill: (req, ctx) => {
      m.kill(jobId("kill", req.id), int("kill", "signum", req.signum), { userid: who(ctx).userid });
      return {};
    },
    purge: (req, ctx) => {
      const num = (field: string, v: unknown) => {
        if (v === undefined) return undefined;
        if (typeof v !== "number" || !(v >= 0)) bad("purge", `${field} must be a number >= 0`);
        return v as number;
      };
      const ids = req.ids === undefined ? undefined : strList("purge", "ids", req.ids).map((s) => parseJobId(s));
      const matched = m.purgeJobs({
        ...(ids ? { ids } : {}),
        ...(req.age_limit !== undefined ? { ageLimit: num("age_limit", req.age_limit) } : {}),
        ...(req.num_limit !== undefined ? { numLimit: num("num_limit", req.num_limit) } : {}),
        userid: who(ctx).userid,
        force: req.force === true,
      });
      if (req.force === true && matched.length > 0) d.log("info", `purged ${matched.length} inactive jobs`);
      return { ids: matched.map((id) => formatJobId(id)), purged: req.force === true };
    },
    update: async (req, ctx) => {
      const updates = req.updates;
      if (typeof updates !== "object" || updates === null || Array.isArray(updates)) bad("update", "updates must be an object");
      await m.update(jobId("update", req.id), updates, { userid: who(ctx).userid });
      return {};
    },
    raise: (req, ctx) => {
      const note = req.note === undefined ? "" : str("raise", "note", req.note);
      m.raise(jobId("raise", req.id), {
        type: str("raise", "type", req.type),
        severity: int("raise", "severity", req.severity),
        note,
        userid: who(ctx).userid,
      });
      return {};
    },
    "exec-override": (req, ctx) => {
      const status = req.status === undefined ? 0 : int("exec-override", "status", req.status);
      m.execOverride(jobId("exec-override", req.id), str("exec-override", "event", req.event), {
        status,
        userid: who(ctx).userid,
      });
      return {};
    },
    "plugin.list": (req, ctx) => {
      // Which plugins run (and from which paths) is the instance's business: owner-only,
      // as `flux jobtap list` is.
      ownerOnly(ctx, "plugin list", "list plugins");
      return { plugins: host(d).list({ all: req.all === true }).map(({ builtin: _, ...view }) => view) };
    },
    "plugin.load": async (req, ctx) => {
      ownerOnly(ctx, "plugin load", "load plugins");
      const conf = req.conf ?? {};
      if (typeof conf !== "object" || conf === null || Array.isArray(conf)) bad("plugin.load", "conf must be an object");
      const path = str("plugin.load", "path", req.path);
      // `--remove` first, as `flux jobtap load --remove` does; a failed load does not bring
      // the removed plugins back.
      if (req.remove !== undefined) {
        const removed = host(d).remove(str("plugin.load", "remove", req.remove));
        if (removed.length > 0) d.log("info", `plugins removed at runtime: ${removed.join(", ")}`);
      }
      try {
        if (req.isolate !== undefined && typeof req.isolate !== "boolean") bad("plugin.load", "isolate must be a boolean");
        const info = await host(d).load(path, conf, req.isolate === true ? { isolate: true } : {});
        d.log("info", `plugin ${info.name} loaded from ${info.path} at runtime`);
        return { name: info.name };
      } catch (e) {
        d.log("warn", `plugin load ${path} refused: ${(e as Error).message}`);
        throw e;
      }
    },
    "plugin.remove": (req, ctx) => {
      ownerOnly(ctx, "plugin remove", "remove plugins");
      const removed = host(d).remove(str("plugin.remove", "name", req.name));
      if (removed.length > 0) d.log("info", `plugins removed at runtime: ${removed.join(", ")}`);
      return { removed };
    },
    "plugin.query": (req, ctx) => {
      // A plugin's query answer may carry its configuration: owner-only, as in Flux.
      ownerOnly(ctx, "plugin query", "query plugins");
      return host(d).query(str("plugin.query", "name", req.name));
    },
    "plugin.trace": (req, ctx) => {
      // Handler OUT and job ids of every user's jobs: owner-only, as plugin query is.
      ownerOnly(ctx, "plugin trace", "trace plugins");
      const filter = {
        ...(req.plugin === undefined ? {} : { plugin: str("plugin.trace", "plugin", req.plugin) }),
        ...(req.topic === undefined ? {} : { topic: str("plugin.trace", "topic", req.topic) }),
        ...(req.job === undefined ? {} : { job: jobId("plugin.trace", req.job) }),
      };
      return trace(m, host(d), filter, ctx);
    },
    "plugin.call": (req, ctx) => {
      const plugin = str("plugin.call", "plugin", req.plugin);
      const method = str("plugin.call", "method", req.method);
      const userid = who(ctx).userid;
      // The host gives the instance owner's uid the owner role; anyone else is a guest.
      return host(d).callService(plugin, method, req.payload ?? {}, { userid, owner: false });
    },
    "config.reload": async (_req, ctx) => {
      ownerOnly(ctx, "config reload", "reload the configuration");
      const r = await d.reload();
      return { source: r.source, plugins_reapplied: r.pluginsReapplied };
    },
    ...tokenHandlers(d.tokens),
    ...webHandlers({ ...d.web, tokens: d.tokens }),
  };
}

async function submit(
  d: ServiceDeps,
  req: { jobspecs: unknown; count?: unknown; urgency?: unknown },
  caller: Caller,
): Promise<{ ids: string[]; errors?: Array<{ index: number; message: string }> }> {
  if (!d.accepting()) throw new JobtapError(ErrorCode.MANAGER_CLOSED, "the daemon is shutting down; not accepting jobs");
  if (!Array.isArray(req.jobspecs) || req.jobspecs.length === 0) bad("submit", "jobspecs must be a non-empty array");
  const opts = {
    userid: caller.userid,
    ...(req.urgency === undefined ? {} : { urgency: int("submit", "urgency", req.urgency) }),
  };
  // One submitMany: the manager admits its jobs in order (a --cc singleton chain included).
  const outcomes = await d.manager.submitMany(expand(req.jobspecs, req.count).map((jobspec) => ({ jobspec, opts })));
  const ids: string[] = [];
  const errors: Array<{ index: number; message: string }> = [];
  outcomes.forEach((o, index) => {
    if ("id" in o) ids.push(formatJobId(o.id));
    else errors.push({ index, message: o.error.message });
  });
  if (ids.length === 0 && outcomes.length === 1) {
    throw (outcomes[0] as { error: JobtapError }).error;
  }
  return errors.length > 0 ? { ids, errors } : { ids };
}

/**
 * A submission that no other submission is waiting with is committed at the end of this
 * turn of the event loop instead of at the end of the batch window: a user at a shell waits
 * for the acknowledgement, and nothing would join the batch meanwhile. While several are in
 * flight (many clients submitting at once) the window batches them as before.
 */
function loneCommits(d: ServiceDeps): { around<T>(submitting: () => Promise<T>): Promise<T> } {
  let inFlight = 0;
  return {
    async around(submitting) {
      inFlight++;
      // After this turn: admission (plugin callbacks included) has put the job in the batch.
      if (inFlight === 1) setImmediate(() => inFlight === 1 && d.accepting() && d.manager.flush());
      try {
        return await submitting();
      } finally {
        inFlight--;
      }
    },
  };
}

/** The jobspecs of a submit request; `count` repeats a single one (the manager never
 *  mutates a submitted jobspec, so the copies may share it). */
function expand(jobspecs: unknown[], count: unknown): unknown[] {
  if (count === undefined) return jobspecs;
  const n = int("submit", "count", count);
  if (jobspecs.length !== 1) bad("submit", "count needs exactly one jobspec");
  if (n < 1 || n > MAX_COUNT) bad("submit", `count must be 1..${MAX_COUNT}`);
  return new Array<unknown>(n).fill(jobspecs[0]);
}

/** The largest `count` one request may ask for (as `--cc` accepts). */
const MAX_COUNT = 1_000_000;

/** The jobs a `list` request selects, in listing order, and how to build each one's full view. */
interface Listing {
  /** Sorted and limited: the listed jobs' records (a running job's with its full view). */
  rows: ListingRow[];
  /** The full view of a listed job (for an inactive job, a store read). */
  full: (row: ListingRow) => JobView;
}

type ListRequest = { states?: unknown; results?: unknown; userid?: unknown; limit?: unknown; constraint?: unknown; reasons?: unknown; cursor?: unknown };

function list(m: JobManager, req: ListRequest, caller: Caller): Listing {
  const limit = req.limit === undefined ? Infinity : int("list", "limit", req.limit);
  // Sort the listing records themselves and build full views (eventlog copy, jobspec, or a
  // store read for inactive jobs) only for the rows returned, as they are sent. Running
  // jobs sort by their alloc time, which only the eventlog holds, so theirs is read for the
  // sort (bounded by resources).
  const rows = sortForListing(selectJobs(m, req, caller, limit).map((info): ListingRow => (isRunning(info) ? { info, view: fullView(m, info) } : { info })));
  const shown = rows.slice(0, limit);
  if (req.reasons !== true) return { rows: shown, full: (r) => r.view ?? fullView(m, r.info) };
  // `jobs -o '{reason}'` and INFO: a pending job's first reason, from the manager's state
  // only (queue positions read once for the whole listing).
  const reasonOf = m.briefReasons();
  return {
    rows: shown,
    full: (r) => {
      const view = r.view ?? fullView(m, r.info);
      const reason = PENDING.has(r.info.state) ? reasonOf(r.info.id) : undefined;
      return reason === undefined ? view : { ...view, reason };
    },
  };
}

/**
 * One page of a listing by id, newest first, below `cursor` (a job id; "" for the first
 * page): a keyset page, so jobs submitted or purged between pages neither repeat nor shift it.
 */
function listPage(m: JobManager, req: ListRequest, caller: Caller): { jobs: JobView[]; next_cursor?: string } {
  const cursor = str("list", "cursor", req.cursor);
  const below = cursor === "" ? undefined : jobId("list", cursor);
  const limit = req.limit === undefined ? 100 : int("list", "limit", req.limit);
  if (limit < 1) bad("list", "limit must be >= 1");
  const infos = selectJobs(m, req, caller).filter((j) => below === undefined || j.id < below);
  infos.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const page = infos.slice(0, limit);
  const jobs = page.map((info) => fullView(m, info));
  const last = page[page.length - 1];
  return infos.length > limit && last !== undefined ? { jobs, next_cursor: formatJobId(last.id) } : { jobs };
}

/**
 * The jobs a listing request selects (states, results, user, constraint), unsorted. With a
 * `limit`, at most that many inactive jobs: the most recently cleaned that match, which are
 * the ones a listing sorted by sortForListing shows (inactive jobs sort last, by clean time),
 * so a million stored inactive jobs cost `limit` store reads, not a million.
 */
function selectJobs(m: JobManager, req: ListRequest, caller: Caller, limit = Infinity): JobInfo[] {
  const states = (req.states === undefined ? [...STATES] : strList("list", "states", req.states)) as State[];
  for (const s of states) if (!(STATES as readonly string[]).includes(s)) bad("list", `unknown state "${s}"`);
  const results = req.results === undefined ? [] : strList("list", "results", req.results);
  const userid = req.userid === undefined ? undefined : int("list", "userid", req.userid);
  // A job is listed if its state was asked for, or it is inactive with a result asked for.
  const query = results.length > 0 && !states.includes("INACTIVE") ? [...states, "INACTIVE" as State] : states;
  const constraint = req.constraint === undefined ? undefined : jobConstraint(str("list", "constraint", req.constraint));
  // A guest's constraint is evaluated over its own jobs only: over another user's job ad it
  // would probe attributes (Cmd, Iwd, Environment...) the guest may not read. Others' jobs
  // never match it.
  const adReadable = (j: JobInfo) => caller.owner || j.userid === caller.userid;
  const wanted = (j: JobInfo) =>
    (states.includes(j.state) || results.includes(j.result ?? "")) && (constraint === undefined || (adReadable(j) && constraint(m.jobAd(j.id))));
  const byUser = userid === undefined ? {} : { userid };
  if (!Number.isFinite(limit) || !query.includes("INACTIVE")) return m.jobs({ states: query, ...byUser }).filter(wanted);
  const out = m.jobs({ states: query.filter((s) => s !== "INACTIVE"), ...byUser }).filter(wanted);
  let taken = 0;
  for (const j of m.inactiveNewest(userid)) {
    if (taken >= limit) break;
    if (!wanted(j)) continue;
    out.push(j);
    taken++;
  }
  return out;
}

const PENDING = new Set<State>(["NEW", "DEPEND", "PRIORITY", "SCHED"]);

function isRunning(info: { state: State }): boolean {
  return info.state === "RUN" || info.state === "CLEANUP";
}

/** Jobs per chunk of a streamed listing: the daemon serves others between chunks. */
const LIST_CHUNK = 256;

/**
 * A listing as JSON lines, one job each, built as it is sent (an inactive job's view is a
 * store read), so neither side holds the whole listing's views; each chunk goes out in one
 * write. A job purged meanwhile is left out, as it would be had the listing started a
 * moment later.
 */
async function streamList(listing: Listing, ctx: CallContext): Promise<void> {
  const { rows, full } = listing;
  for (let start = 0; start < rows.length; start += LIST_CHUNK) {
    if (ctx.signal.aborted) return;
    let text = "";
    for (const row of rows.slice(start, start + LIST_CHUNK)) {
      try {
        text += JSON.stringify(full(row)) + "\n";
      } catch (e) {
        if (!isJobtapError(e, ErrorCode.UNKNOWN_JOB)) throw e;
      }
    }
    if (text !== "") ctx.writeText(text);
    await ctx.writable();
  }
}

/** A `condor_q -constraint` test: true iff the expression is boolean-equivalent true over the
 *  job's ad (MY = the job ad, no TARGET). A syntax error names the text and column. */
function jobConstraint(text: string): (ad: ClassAd) => boolean {
  let expr;
  try {
    expr = parseExpr(text, true);
  } catch (e) {
    if (isJobtapError(e)) throw new JobtapError(e.code, `constraint '${text}': ${e.message}`, e.details);
    throw e;
  }
  return (ad) => isTrue(ad.evaluateExpr(expr));
}

/** The host ads asked for; `constraint` (condor_status -constraint) keeps those where it is true. */
function hostAds(m: JobManager, req: { machine?: unknown; slot?: unknown; constraint?: unknown }): ClassAd[] {
  const all = hostAdsOf(m, req);
  if (req.constraint === undefined) return all;
  const keep = jobConstraint(str("ads", "constraint", req.constraint));
  return all.filter(keep);
}

function hostAdsOf(m: JobManager, req: { machine?: unknown; slot?: unknown }): ClassAd[] {
  if (req.machine === true) return [m.hostAds.machineAd()];
  if (req.slot === undefined) return m.hostAds.slotAds();
  const id = int("ads", "slot", req.slot);
  const ad = m.hostAds.slotAd(id);
  if (!ad) throw new JobtapError(ErrorCode.UNKNOWN_SLOT, `no slot ${id} on this host (it has ${m.hostAds.slotAds().length} slot(s))`);
  return [ad];
}

function cancel(m: JobManager, req: { ids: unknown; note?: unknown }, userid: number): { canceled: string[] } {
  const ids = strList("cancel", "ids", req.ids).map((s) => jobId("cancel", s));
  const note = req.note === undefined ? "" : str("cancel", "note", req.note);
  const canceled: string[] = [];
  const failed: JobtapError[] = [];
  for (const id of ids) {
    try {
      m.cancel(id, { note, userid });
      canceled.push(formatJobId(id));
    } catch (e) {
      failed.push(isJobtapError(e) ? JobtapError.from(e) : new JobtapError(ErrorCode.INTERNAL, String(e)));
    }
  }
  const first = failed[0];
  if (first) {
    const extra = failed.length > 1 ? ` (and ${failed.length - 1} more errors)` : "";
    throw new JobtapError(first.code, first.message + extra, { canceled });
  }
  return { canceled };
}

/** Streams trace records (plugins/trace.ts) until the client leaves or the daemon closes. */
async function trace(m: JobManager, plugins: JobtapHost, filter: TraceFilter, ctx: CallContext): Promise<void> {
  const sources = {
    inspect: (fn: (r: HandlerRecord) => void) => plugins.inspect(fn),
    onTransition(fn: (t: { id: JobId; prev: State; state: State; event: string }) => void) {
      const listener = (j: JournalEntry) => {
        if (j.prev_state !== j.state) fn({ id: j.id, prev: j.prev_state, state: j.state, event: j.entry.name });
      };
      m.on("event", listener);
      return () => m.off("event", listener);
    },
  };
  const stop = startTrace(sources, filter, (r) => ctx.writeLine(r));
  try {
    // The first line opens the stream, so the client knows the trace is live.
    ctx.writeLine({ kind: "start" });
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      ctx.signal.addEventListener("abort", () => resolve(), { once: true });
    });
  } finally {
    stop();
  }
}

/** Streams the eventlog so far, then each new entry, until `clean` or the client leaves. */
async function follow(m: JobManager, id: JobId, ctx: CallContext): Promise<void> {
  const pending: EventEntry[] = [];
  let wake: (() => void) | undefined;
  const listener = (j: { id: JobId; entry: EventEntry }) => {
    if (j.id !== id) return;
    pending.push(j.entry);
    wake?.();
  };
  m.on("event", listener);
  const aborted = () => wake?.();
  ctx.signal.addEventListener("abort", aborted);
  try {
    // Registered and read in one synchronous step: every later entry arrives via `pending`.
    const past = m.eventlog(id);
    for (const e of past) ctx.writeLine(e);
    if (past.some(isLast)) return;
    for (;;) {
      while (pending.length > 0) {
        const e = pending.shift() as EventEntry;
        ctx.writeLine(e);
        if (isLast(e)) return;
      }
      if (ctx.signal.aborted) {
        throw new JobtapError(ErrorCode.MANAGER_CLOSED, "eventlog: follow interrupted (daemon shutting down)");
      }
      await new Promise<void>((r) => (wake = r));
      wake = undefined;
    }
  } finally {
    m.off("event", listener);
    ctx.signal.removeEventListener("abort", aborted);
  }
}

function isLast(e: EventEntry): boolean {
  return e.name === "clean" || e.name === "invalidate";
}

function untilAborted<T>(p: Promise<T>, signal: AbortSignal, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new JobtapError(ErrorCode.MANAGER_CLOSED, `${what}: interrupted (daemon shutting down or client gone)`));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function host(d: ServiceDeps): JobtapHost {
  const h = d.host();
  if (!h) throw new JobtapError(ErrorCode.NOT_SUPPORTED, "no plugin host is attached");
  return h;
}

/** The proven caller (the socket server guarantees one for every method but ping). */
function who(ctx: CallContext): Caller {
  if (ctx.caller === undefined) throw new JobtapError(ErrorCode.NOT_AUTHENTICATED, "not authenticated");
  return ctx.caller;
}

/** Plugin and configuration control is the instance owner's alone, as in Flux. */
function ownerOnly(ctx: CallContext, operation: string, what: string): void {
  const c = who(ctx);
  if (!c.owner) {
    throw new JobtapError(ErrorCode.PERMISSION_DENIED, `${operation}: only the instance owner may ${what} (you are uid ${c.userid})`, {
      operation,
      userid: c.userid,
    });
  }
}

function bad(method: string, why: string): never {
  throw new JobtapError(ErrorCode.PROTOCOL, `${method}: ${why}`);
}

function jobId(method: string, v: unknown): JobId {
  return parseJobId(str(method, "id", v));
}

function str(method: string, field: string, v: unknown): string {
  if (typeof v !== "string") bad(method, `${field} must be a string`);
  return v;
}

function int(method: string, field: string, v: unknown): number {
  if (!Number.isInteger(v)) bad(method, `${field} must be an integer`);
  return v as number;
}

function strList(method: string, field: string, v: unknown): string[] {
  if (!Array.isArray(v) || !v.every((s) => typeof s === "string")) bad(method, `${field} must be an array of strings`);
  return v as string[];
}

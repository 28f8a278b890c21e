/**
 * The daemon's job views: the manager's listing record, completed with what `flux jobs`
 * shows and the manager keeps only in the eventlog (run and cleanup times, the fatal
 * exception, queue, task count), and the listing order `flux jobs` uses.
 */
import { waitStatus } from "../manager/port/executor.js";
import { formatJobId } from "../manager/base/ids.js";
import type { JobManager } from "../manager/manager.js";
import type { EventEntry, Jobspec } from "../manager/port/records.js";
import type { JobInfo } from "../manager/engine/views.js";
import type { JobView, PrintedAd } from "./protocol.js";
import { adToJSON, unparse, type ClassAd } from "../classad/index.js";

/** Builds the wire view of one job; `eventlog`/`jobspec` are read only when needed. */
export function jobView(info: JobInfo, eventlog: EventEntry[] | undefined, jobspec: Jobspec | undefined): JobView {
  const view: JobView = {
    id: formatJobId(info.id),
    userid: info.userid,
    name: info.name,
    state: info.state,
    urgency: info.urgency,
    priority: info.priority,
    t_submit: info.t_submit,
    ntasks: jobspec ? ntasksOf(jobspec) : 1,
    annotations: info.annotations ?? null,
    dependencies: info.dependencies ?? [],
  };
  const queue = jobspec?.attributes.system?.queue;
  if (typeof queue === "string") view.queue = queue;
  if (info.result !== undefined) view.result = info.result;
  if (info.waitstatus !== undefined) {
    view.waitstatus = info.waitstatus;
    view.returncode = waitStatus.returnCode(info.waitstatus);
  }
  if (info.t_clean !== undefined) view.t_inactive = info.t_clean;
  if (eventlog) addTimes(view, eventlog);
  return view;
}

function addTimes(view: JobView, eventlog: EventEntry[]): void {
  for (const e of eventlog) {
    if (e.name === "depend" && view.t_depend === undefined) view.t_depend = e.timestamp;
    else if (e.name === "alloc" && view.t_run === undefined) view.t_run = e.timestamp;
    else if (e.name === "start" && view.t_start === undefined) view.t_start = e.timestamp;
    else if (e.name === "jobspec-update" && typeof e.context?.[ROUTED_TO] === "string") routedTo(view, e.context[ROUTED_TO]);
    else if (e.name === "clean") view.t_inactive = e.timestamp;
    else if (e.name === "finish" && view.t_cleanup === undefined) view.t_cleanup = e.timestamp;
    else if (e.name === "exception" && e.context?.severity === 0 && view.exception === undefined) {
      // The first fatal exception ends the job (Flux's end_event rule).
      view.t_cleanup ??= e.timestamp;
      const c = e.context;
      view.exception = { type: String(c.type ?? ""), severity: 0, note: String(c.note ?? "") };
    }
  }
}

/** The jobspec key the job router sets on an original it routed (docs/condor-router.md). */
const ROUTED_TO = "attributes.user.classad.RoutedToJobId";

/** `RoutedToJobId` holds a ClassAd string literal (`"ƒ..."`): the copy's id. */
function routedTo(view: JobView, expr: string): void {
  try {
    const id: unknown = JSON.parse(expr);
    if (typeof id === "string" && id !== "") view.routed = id;
  } catch {
    // Not a string literal: not something the router wrote; nothing to show.
  }
}

function ntasksOf(jobspec: Jobspec): number {
  const task = jobspec.tasks[0] as { count?: { per_slot?: number; total?: number } } | undefined;
  if (typeof task?.count?.total === "number") return task.count.total;
  let slots = 1;
  const walk = (rs: unknown[], mult: number): void => {
    for (const r of rs as { type?: string; count?: number; with?: unknown[] }[]) {
      const n = mult * (typeof r.count === "number" ? r.count : 1);
      if (r.type === "slot") slots = n;
      else if (Array.isArray(r.with)) walk(r.with, n);
    }
  };
  walk(jobspec.resources, 1);
  return slots * (task?.count?.per_slot ?? 1);
}

/** The complete view of one job, reading its eventlog and jobspec from the manager. */
export function fullView(m: JobManager, info: JobInfo): JobView {
  const { eventlog, jobspec } = m.eventlogAndJobspec(info.id);
  return jobView(info, eventlog, jobspec);
}

/** A job being listed: its record, and for a running job its full view (for `t_run`). */
export interface ListingRow {
  info: JobInfo;
  view?: JobView;
}

const PENDING_STATES = new Set(["NEW", "DEPEND", "PRIORITY", "SCHED"]);

/**
 * `flux jobs` order: pending jobs by priority (descending) then id (submit order), then
 * running jobs most recently started first, then inactive jobs most recently finished
 * first. Sorts `rows` in place and returns it.
 */
export function sortForListing(rows: ListingRow[]): ListingRow[] {
  const group = (i: JobInfo) => (PENDING_STATES.has(i.state) ? 0 : i.state === "INACTIVE" ? 2 : 1);
  return rows.sort((ra, rb) => {
    const a = ra.info;
    const b = rb.info;
    const ga = group(a);
    const gb = group(b);
    if (ga !== gb) return ga - gb;
    if (ga === 0) return b.priority - a.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    if (ga === 1) return (rb.view?.t_run ?? 0) - (ra.view?.t_run ?? 0);
    return (b.t_clean ?? 0) - (a.t_clean ?? 0);
  });
}

/**
 * A ClassAd as the daemon sends it: old-style `Name = expr` lines sorted by name ignoring
 * case, as `condor_q -l` and `condor_status -l` print, and the JSON form (adToJSON).
 */
export function printedAd(ad: ClassAd): PrintedAd {
  const lines = [...ad.attributes()]
    .sort(([a], [b]) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0))
    .map(([name, expr]) => `${name} = ${unparse(expr, true)}\n`);
  return { text: lines.join(""), json: adToJSON(ad) };
}

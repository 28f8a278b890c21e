/**
 * condor-router's `job.explain` (issue 36): for a job the router manages, its route and the
 * copy's id and state; for an idle job, whether it is a candidate (the umbrella constraint's
 * fixed part, then the source constraint) and why each route declined it (REQUIREMENTS
 * false or undefined with the first such clause, MaxIdleJobs n/n, MaxJobs n/n, throttled
 * until the window's end). Evaluated now, as the next poll would.
 */
import { formatJobId, parseJobId, isError, isTrue, isUndefined, localTime, splitAnd, unparse, unparseValue, type ClassAd, type ClassAdValue, type ClassAdExpr, type JobArgs, type JobId } from "jobtap/plugin";
import type { RouterCore } from "./core.js";
import type { Managed } from "./lifecycle.js";
import { THROTTLE_WINDOW_S, type RouteState } from "./throttle.js";

/** What the explainer reads of the router (router.ts hands it over). */
export interface RouterView {
  readonly c: RouterCore;
  readonly sourceConstraint: ClassAdExpr | undefined;
  readonly requirements: ReadonlyMap<string, ClassAdExpr>;
}

type Figures = Record<string, string | number | boolean | null>;
const reason = (code: string, text: string, figures: Figures = {}) => ({ code, text, figures });
const STATUS = ["Unexpanded", "Idle", "Running", "Removed", "Completed", "Held", "Transferring output", "Suspended"];

/** The router's reasons for one job, or undefined when it has nothing to say. */
export function explainRouting(v: RouterView, job: JobArgs) {
  const { c } = v;
  const m = c.byOrig.get(job.id);
  if (m !== undefined) return { reasons: [routed(v, m)] };
  const asCopy = c.byCopy.get(job.id);
  if (asCopy !== undefined) {
    return { reasons: [reason("routed-copy", `routed copy of job ${asCopy.key} on route ${asCopy.route}`, { original: asCopy.key, route: asCopy.route })] };
  }
  if (job.state === "INACTIVE") return fate(v, job);
  if (job.state !== "SCHED") return undefined;
  let ad: ClassAd;
  try {
    ad = c.p.jobAd(job.id);
  } catch {
    return undefined;
  }
  const not = notCandidate(v, ad);
  if (not !== undefined) return { reasons: [not] };
  return { reasons: routeReasons(v, ad) };
}

function routed(v: RouterView, m: Managed) {
  const figures: Figures = { route: m.route, phase: m.phase, copy: null, copy_status: null };
  if (m.copy === undefined) return reason("routed", `claimed by route ${m.route}: its copy is not submitted yet (${m.phase})`, figures);
  const copy = formatJobId(m.copy);
  const status = copyStatus(v, m);
  Object.assign(figures, { copy, copy_status: status ?? null });
  return reason("routed", `routed by route ${m.route} as job ${copy}${status === undefined ? "" : `, which is ${status}`} (${m.phase})`, figures);
}

/**
 * An ended original that was routed: what its copy did (the original mirrors it), read from
 * the two job ads (RoutedToJobId, the copy's JobStatus, ExitCode or RemoveReason/HoldReason).
 */
function fate(v: RouterView, job: JobArgs) {
  const ad = v.c.adOrUndefined(job.id);
  const to = ad?.has("RoutedToJobId") ? ad.evaluate("RoutedToJobId") : undefined;
  if (typeof to !== "string") return undefined;
  const copyId = parseJobIdOrUndefined(to);
  const cad = copyId === undefined ? undefined : v.c.adOrUndefined(copyId);
  const get = (name: string) => (cad?.has(name) ? cad.evaluate(name) : undefined);
  const js = get("JobStatus");
  const status = typeof js === "bigint" ? STATUS[Number(js)] ?? String(js) : "unknown";
  const route = get("RouteName");
  const exit = get("ExitCode");
  const note = [get("RemoveReason"), get("HoldReason")].find((x) => typeof x === "string") as string | undefined;
  const detail = typeof exit === "bigint" && js === 4n ? `, exit code ${exit}` : note !== undefined ? `: ${note}` : "";
  const figures: Figures = { copy: to, copy_status: status, route: typeof route === "string" ? route : null, exit_code: typeof exit === "bigint" ? Number(exit) : null, note: note ?? null };
  return { reasons: [{ layer: "end" as const, ...reason("routed-fate", `it mirrored its routed copy ${to}${typeof route === "string" ? ` (route ${route})` : ""}, which ended ${status}${detail}`, figures) }] };
}

function parseJobIdOrUndefined(text: string): JobId | undefined {
  try {
    return parseJobId(text);
  } catch {
    return undefined;
  }
}

function copyStatus(v: RouterView, m: Managed): string | undefined {
  const ad = v.c.adOrUndefined(m.copy!);
  const js = ad?.has("JobStatus") ? ad.evaluate("JobStatus") : undefined;
  return typeof js === "bigint" ? STATUS[Number(js)] : undefined;
}

/** Why the router does not consider the job, or undefined when it is a candidate. */
function notCandidate(v: RouterView, ad: ClassAd) {
  const js = ad.evaluate("JobStatus");
  if (js !== 1n) return reason("not-candidate", `not a router candidate: JobStatus is ${String(js)}, not 1 (Idle)`, { check: "JobStatus" });
  const managed = ad.has("Managed") ? ad.evaluate("Managed") : undefined;
  if (managed === "External" || managed === "ScheddDone") {
    return reason("not-candidate", `not a router candidate: Managed is "${managed}"`, { check: "Managed" });
  }
  if (ad.has("RoutedBy") && ad.evaluate("RoutedBy") === v.c.name) {
    return reason("not-candidate", `not a router candidate: it is a copy routed by ${v.c.name}`, { check: "RoutedBy" });
  }
  if (v.sourceConstraint === undefined) return undefined;
  const value = v.c.evaluator.evaluate(v.sourceConstraint, { my: ad });
  if (isTrue(value)) return undefined;
  const text = unparse(v.sourceConstraint, true);
  const clause = firstFailing(v, v.sourceConstraint, ad);
  return reason("not-candidate", `not a router candidate: the source constraint ${text} is ${word(value)}${clause === text ? "" : ` (at ${clause})`}`, {
    check: "source-constraint", constraint: text, value: word(value), clause,
  });
}

/** One line per route, in the order the router tries them. */
function routeReasons(v: RouterView, ad: ClassAd) {
  const { c } = v;
  const max = c.cfg.router.settings.maxJobs;
  const out = [];
  if (max >= 0 && c.byOrig.size >= max) out.push(reason("router-full", `the router manages ${c.byOrig.size}/${max} jobs (JOB_ROUTER_MAX_JOBS)`, { managed: c.byOrig.size, max_jobs: max }));
  if (c.order.length === 0) out.push(reason("no-routes", "the router has no routes"));
  for (const st of c.order) out.push(routeReason(v, st, ad));
  return out;
}

function routeReason(v: RouterView, st: RouteState, ad: ClassAd) {
  const name = st.route.name;
  const s = st.route.settings;
  const base: Figures = { route: name, current: st.current, idle: st.idle, max_jobs: s.maxJobs, max_idle_jobs: s.maxIdleJobs };
  if (st.throttle > 0 && st.throttle <= st.recentRouted) {
    const until = st.windowStart + THROTTLE_WINDOW_S;
    return reason("route-throttled", `route ${name}: throttled (${st.recentRouted} routed this window at ${st.describeThrottle()}) until ${localTime(until)}`, { ...base, until, recent_routed: st.recentRouted });
  }
  if (s.maxIdleJobs >= 0 && s.maxIdleJobs <= st.idle) return reason("route-idle-full", `route ${name}: MaxIdleJobs ${st.idle}/${s.maxIdleJobs}`, base);
  if (st.current >= s.maxJobs) return reason("route-full", `route ${name}: MaxJobs ${st.current}/${s.maxJobs}`, base);
  const req = v.requirements.get(name);
  if (req !== undefined) {
    const value = v.c.evaluator.evaluate(req, { my: ad });
    if (!isTrue(value)) {
      const clause = firstFailing(v, req, ad);
      return reason("route-requirements", `route ${name}: REQUIREMENTS is ${word(value)} at ${clause}`, { ...base, value: word(value), clause });
    }
  }
  return reason("route-accepts", `route ${name} accepts it: routed at the next poll`, base);
}

/** The first top-level `&&` clause that is not true (the whole expression if none is). */
function firstFailing(v: RouterView, e: ClassAdExpr, ad: ClassAd): string {
  for (const clause of splitAnd(e)) if (!isTrue(v.c.evaluator.evaluate(clause, { my: ad }))) return unparse(clause, true);
  return unparse(e, true);
}

function word(value: ClassAdValue): string {
  if (value === false) return "false";
  if (isUndefined(value)) return "undefined";
  return isError(value) ? "error" : `${unparseValue(value, true)}, not true`;
}

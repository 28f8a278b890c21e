/**
 * Routing one job (spec htcondor.md §4.6 TakeOver and Submit, §4.7): claim the original,
 * run TRANSLATE_JOB, build the copy, submit it as the original's owner and start watching
 * it; or, with EditJobInPlace, edit the original itself.
 */
import { ErrorCode, formatJobId, JobtapError, waitStatus, type ClassAd, type JobId } from "jobtap/plugin";
import { finishCleanup } from "./cleanup.js";
import { batchValues, buildCopyAd, copyJobspec, destinationOf } from "./copy.js";
import { CLASSAD, STATE_PREFIX, type RouterCore, type RoutingRecord } from "./core.js";
import { buildEditAd, differences } from "./edits.js";
import { RouterHooks } from "./hooks.js";
import type { Managed } from "./lifecycle.js";
import type { Route } from "./routes.js";
import type { RouteState } from "./throttle.js";

/** Routes `orig` on the route whose state is `st` (already counted against it). */
export async function routeJob(c: RouterCore, orig: JobId, st: RouteState): Promise<void> {
  const route = st.route;
  const original = c.p.jobAd(orig);
  if (c.routeBool(route.settings.editJobInPlace, original)) return editInPlace(c, orig, st, original);
  const m = c.track(orig, route.name);
  if (!claim(c, m)) {
    c.forget(m);
    st.current--;
    st.recentFailed++;
    return;
  }
  c.p.state.set(STATE_PREFIX + m.key, { route: route.name } satisfies RoutingRecord);
  c.move(m, "routing");
  try {
    await submitCopy(c, m, st, c.p.jobAd(orig));
  } catch (e) {
    c.p.log.error(`job ${m.key}: route ${route.name}: ${(e as Error).message}`);
    await finishCleanup(c, m, "failure");
  }
}

/** TakeOver: the original, still idle and not managed by another, becomes External. */
function claim(c: RouterCore, m: Managed): boolean {
  const args = c.lookup(m.orig);
  if (args?.state !== "SCHED") return false;
  try {
    c.p.jobspecUpdate(m.orig, { [`${CLASSAD}Managed`]: '"External"', [`${CLASSAD}ManagedManager`]: JSON.stringify(c.name) });
  } catch (e) {
    c.p.log.info(`job ${m.key}: not claimed: ${(e as Error).message}`);
    return false;
  }
  // An alloc that was already queued wins: then the job runs here and is not ours.
  return c.lookup(m.orig)?.state === "SCHED";
}

async function submitCopy(c: RouterCore, m: Managed, st: RouteState, original: ClassAd): Promise<void> {
  const route = st.route;
  let working = original;
  const translated = await c.hooks.run(m.key, original, "TRANSLATE_JOB", () => RouterHooks.translateInput(route, original));
  if (translated.kind === "failed") throw new JobtapError(ErrorCode.HOOK, translated.why);
  if (translated.kind === "ok") {
    if (translated.empty) {
      // HTCondor logs it and tries again at the next poll: the job is let go, unharmed.
      c.p.log.warn(`job ${m.key}: TRANSLATE_JOB printed nothing; trying again next poll`);
      return finishCleanup(c, m, "interrupted");
    }
    working = translated.ad;
  }
  const built = buildCopyAd(working, route, c.cfg.router, c.evaluator, m.key);
  if (!built.ok) throw new JobtapError(ErrorCode.CONDOR_TRANSFORM, built.error);
  const system = await destinationSystem(c, built.ad, route);
  const args = c.lookup(m.orig);
  if (args === undefined || m.interrupted) return finishCleanup(c, m, "interrupted");
  const jobspec = copyJobspec(built.ad, args.jobspec, original, system);
  const copy = await c.p.submit(jobspec, { userid: args.userid, environmentFrom: m.orig });
  c.p.state.set(STATE_PREFIX + m.key, { route: route.name, copy: formatJobId(copy) } satisfies RoutingRecord);
  attachCopy(c, m, copy);
  try {
    c.p.jobspecUpdate(m.orig, { [`${CLASSAD}RoutedToJobId`]: JSON.stringify(formatJobId(copy)) });
  } catch {
    // The original moved on meanwhile (cancelled): the next check cleans up.
  }
  c.p.log.info(`job ${m.key}: routed to ${route.name} as job ${formatJobId(copy)}`);
}

/** The copy's `attributes.system` choices from its destination. */
async function destinationSystem(c: RouterCore, ad: ClassAd, route: Route): Promise<Record<string, unknown>> {
  const dest = destinationOf(ad, route);
  if (dest.kind === "error") throw new JobtapError(ErrorCode.CONDOR_CONFIG, dest.error);
  if (dest.kind === "local") return dest.queue === undefined ? {} : { queue: dest.queue };
  const r = await c.p.call("exec-slurm.route", { grid_resource: dest.gridResource, ad: batchValues(ad) });
  const out = r.out as { routing?: { exec: unknown; duration?: number }; error?: string };
  if (r.error) throw new JobtapError(ErrorCode.PLUGIN_CALL, `exec-slurm.route: ${r.error.message}`);
  if (out.error !== undefined) throw new JobtapError(ErrorCode.PLUGIN_CALL, out.error);
  if (out.routing === undefined) throw new JobtapError(ErrorCode.PLUGIN_NOT_FOUND, `GridResource "${dest.gridResource}": the Slurm executor (.exec-slurm) is not loaded`);
  return { exec: out.routing.exec, ...(out.routing.duration !== undefined ? { duration: out.routing.duration } : {}) };
}

/** `copy` is the copy of `m` (submitted, found after a restart, or adopted): watch it. */
export function attachCopy(c: RouterCore, m: Managed, copy: JobId): void {
  m.copy = copy;
  c.byCopy.set(copy, m);
  const args = c.lookup(copy);
  if (args === undefined || args.state === "INACTIVE") {
    c.move(m, "ended");
    readCopyOutcome(c, m, copy);
    return;
  }
  c.move(m, "submitted");
  if (args.state === "RUN" || args.state === "CLEANUP") m.copyStarted = c.p.eventPosted(copy, "start");
  c.p.subscribe(copy);
  try {
    c.p.subscribe(m.orig);
  } catch {
    // The original is gone: the next check removes the copy.
  }
  if (m.copyStarted) c.mirrorStart(m);
}

/** For a copy found inactive (restart): its start and finish from its ad. */
function readCopyOutcome(c: RouterCore, m: Managed, copy: JobId): void {
  const ad = c.adOrUndefined(copy);
  if (ad === undefined) return;
  m.copyStarted = Number(ad.evaluate("NumJobStarts") ?? 0) > 0;
  m.copyRemoved = ad.evaluate("JobStatus") === 3n;
  if (ad.evaluate("JobStatus") === 4n) {
    const sig = ad.evaluate("ExitSignal");
    const code = ad.evaluate("ExitCode");
    m.copyFinish = { status: typeof sig === "bigint" ? waitStatus.signaled(Number(sig)) : waitStatus.exited(Number(code ?? 0)) };
  }
}

/** The names the original's jobspec holds in `attributes.user.classad` (the ones an edit can delete). */
function userAttributeNames(c: RouterCore, orig: JobId): Set<string> {
  const table = c.lookup(orig)?.jobspec.attributes.user?.classad;
  if (typeof table !== "object" || table === null) return new Set();
  return new Set(Object.entries(table).filter(([, v]) => v !== null).map(([k]) => k));
}

/** EditJobInPlace: transforms edit the original, which stays idle (a route must guard itself). */
async function editInPlace(c: RouterCore, orig: JobId, st: RouteState, original: ClassAd): Promise<void> {
  st.current--;
  const key = formatJobId(orig);
  let working = original;
  const translated = await c.hooks.run(key, original, "TRANSLATE_JOB", () => RouterHooks.translateInput(st.route, original));
  if (translated.kind === "failed") {
    c.p.log.error(`job ${key}: ${translated.why}`);
    st.recentFailed++;
    return;
  }
  if (translated.kind === "ok" && !translated.empty) working = translated.ad;
  const run = buildEditAd(working, st.route, c.cfg.router, c.evaluator);
  if (!run.ok) {
    c.p.log.error(`job ${key}: route ${st.route.name}: ${run.error}`);
    st.recentFailed++;
    return;
  }
  const updates = differences(original, run.ad, userAttributeNames(c, orig));
  try {
    if (Object.keys(updates).length > 0) c.p.jobspecUpdate(orig, updates);
    st.recentSucceeded++;
  } catch (e) {
    c.p.log.error(`job ${key}: route ${st.route.name}: edit in place: ${(e as Error).message}`);
    st.recentFailed++;
  }
}

/**
 * What happened to the copy decides the original's fate (spec htcondor.md §4.6 CheckStatus
 * → Finalize / Cleanup): UPDATE_JOB_INFO while the copy is pending, JOB_FINALIZE when it
 * finished, JOB_CLEANUP always; then the original finishes, goes back to pending or ends
 * with a reason, and its route counts the outcome.
 */
import { ClassAd, formatJobId, printOldAd, ROUTER_HOOK_SEPARATOR, unparse, waitStatus, writeHookAds } from "jobtap/plugin";
import { CLASSAD, type RouterCore } from "./core.js";
import { differences, mergedAd } from "./edits.js";
import { copyDone, copyLive, type Managed, type Outcome } from "./lifecycle.js";
import { releaseMirroredHold } from "./mirror.js";

/** Decides what `m` needs next; a no-op while a hook of the job runs. */
export async function check(c: RouterCore, m: Managed): Promise<void> {
  if (m.phase === "done" || c.hooks.running(m.key)) return;
  if (m.pending !== undefined) return finishCleanup(c, m, m.pending);
  // Claimed, copy not submitted yet: routeJob is at work (or, after a restart, the
  // orphan scan decides).
  if (m.phase === "claimed" || m.phase === "routing") return;
  const orig = c.lookup(m.orig);
  if (orig === undefined || orig.state === "INACTIVE") {
    m.interrupted = true;
    c.removeCopy(m, "JobRouter aborted job: original gone");
  }
  if (copyLive(m)) {
    if (!m.interrupted) await updateJobInfo(c, m);
    return;
  }
  if (m.interrupted) return finishCleanup(c, m, "interrupted");
  if (m.copyFinish === undefined || m.copyRemoved) {
    // The copy was removed (cancelled, refused, failed to run): a route failure.
    if (m.copyStarted) m.endNote = `routed copy ${formatJobId(m.copy!)} was removed after it started`;
    return finishCleanup(c, m, "failure");
  }
  await finalize(c, m);
}

/** UPDATE_JOB_INFO: the hook's attributes update a copy that is still pending. */
async function updateJobInfo(c: RouterCore, m: Managed): Promise<void> {
  const copy = m.copy!;
  let copyAd: ClassAd;
  try {
    copyAd = c.p.jobAd(copy);
  } catch {
    return;
  }
  const out = await c.hooks.run(m.key, c.p.jobAd(m.orig), "UPDATE_JOB_INFO", () => printOldAd(copyAd));
  if (out.kind === "failed") return void c.p.log.warn(`job ${m.key}: ${out.why}`);
  if (out.kind !== "ok" || out.empty) return;
  const updates = differences(copyAd, mergedAd(copyAd, out.ad));
  if (Object.keys(updates).length === 0) return;
  try {
    // A pending copy's jobspec takes the update; a running one's is fixed: its ad takes it.
    if (c.lookup(copy)?.state === "RUN") c.p.postEvent(copy, "classad-update", { attributes: plainNames(updates) });
    else c.p.jobspecUpdate(copy, updates);
  } catch (e) {
    c.p.log.warn(`job ${m.key}: UPDATE_JOB_INFO: copy ${formatJobId(copy)}: ${(e as Error).message}`);
  }
}

/** `attributes.user.classad.X` update keys as plain attribute names. */
function plainNames(updates: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(updates).map(([k, v]) => [k.slice(CLASSAD.length), v]));
}

/** Finalize: JOB_FINALIZE, then the original ends with the copy's status. */
async function finalize(c: RouterCore, m: Managed): Promise<void> {
  const original = c.p.jobAd(m.orig);
  const copyAd = c.adOrUndefined(m.copy!);
  const out = await c.hooks.run(m.key, original, "JOB_FINALIZE", () => writeHookAds(copyAd === undefined ? [original] : [original, copyAd], ROUTER_HOOK_SEPARATOR));
  if (out.kind === "failed") {
    m.endNote = out.why;
    return finishCleanup(c, m, "failure");
  }
  if (out.kind === "ok" && !out.empty) {
    // The hook's attributes update the original's ad (a running job's jobspec is fixed: a
    // classad-update event, which the job ad reads).
    const attrs: Record<string, string> = {};
    for (const [name, expr] of out.ad.attributes()) attrs[name] = unparse(expr, true);
    try {
      c.p.postEvent(m.orig, "classad-update", { attributes: attrs });
    } catch {
      // The original is gone.
    }
  }
  return finishCleanup(c, m, "success");
}

/**
 * Cleanup: JOB_CLEANUP (if a copy exists; non-zero ⇒ retried next poll), remove an
 * unfinished copy, settle the original, count the outcome, forget the job.
 */
export async function finishCleanup(c: RouterCore, m: Managed, outcome: Outcome): Promise<void> {
  const copyWasDone = copyDone(m);
  if (m.phase !== "cleanup") c.move(m, "cleanup");
  m.pending = outcome;
  if (m.copy !== undefined) {
    const copyAd = c.adOrUndefined(m.copy);
    if (copyAd !== undefined) {
      const original = c.adOrUndefined(m.orig) ?? copyAd;
      const out = await c.hooks.run(m.key, original, "JOB_CLEANUP", () => printOldAd(copyAd));
      if (out.kind === "failed") {
        c.p.log.warn(`job ${m.key}: ${out.why}; cleanup retried next poll`);
        return;
      }
    }
    if (!copyWasDone && outcome !== "success") removeLiveCopy(c, m, "JobRouter aborted job");
  }
  // A second cleanup of the job (two checks while JOB_CLEANUP ran) finds it settled.
  if (m.phase === "done") return;
  // Done before settling: settling can start the mirror, whose callbacks must find it so.
  c.move(m, "done");
  settleOriginal(c, m, outcome);
  countOutcome(c, m, outcome);
  c.forget(m);
  c.recount();
}

/** removeCopy for a copy known active before cleanup began (cleanup's phase hides it). */
function removeLiveCopy(c: RouterCore, m: Managed, note: string): void {
  try {
    c.p.raiseException(m.copy!, "cancel", 0, note);
  } catch {
    // Already ending.
  }
}

/** The route counts a success (unless JobFailureTest says otherwise) or a failure. */
function countOutcome(c: RouterCore, m: Managed, outcome: Outcome): void {
  const st = c.routes.get(m.route);
  if (st === undefined) return;
  if (outcome === "success") {
    const copyAd = m.copy === undefined ? undefined : c.adOrUndefined(m.copy);
    const failed = c.routeBool(st.route.settings.jobFailureTest, c.adOrUndefined(m.orig) ?? new ClassAd(), copyAd);
    if (failed) st.recentFailed++;
    else st.recentSucceeded++;
  } else if (outcome === "failure") st.recentFailed++;
}

/** The original's end of the story: finished, back to pending, or ended with a reason. */
function settleOriginal(c: RouterCore, m: Managed, outcome: Outcome): void {
  const args = c.lookup(m.orig);
  if (args === undefined || args.state === "INACTIVE") return;
  if (args.state === "SCHED" || args.state === "PRIORITY") {
    if (outcome === "success" && m.copyFinish !== undefined) return mirrorFinishPending(c, m);
    // Yield: back to the local queue (and to routing), Managed = "Schedd". A hold mirrored
    // from the copy is undone only with JOB_ROUTER_RELEASE_ON_HOLD (HTCondor's yield_job).
    try {
      c.p.jobspecUpdate(m.orig, { [`${CLASSAD}Managed`]: '"Schedd"', [`${CLASSAD}ManagedManager`]: '""' });
      if (c.cfg.router.settings.releaseOnHold) releaseMirroredHold(c, m);
    } catch (e) {
      c.p.log.warn(`job ${m.key}: cannot yield: ${(e as Error).message}`);
    }
    return;
  }
  const report = m.report;
  if (report === undefined) return;
  if (m.endNote !== undefined) {
    report.exception(m.orig, "router", m.endNote);
    report.finish(m.orig, m.copyFinish?.status ?? waitStatus.signaled(9));
  } else if (m.copyFinish !== undefined) report.finish(m.orig, m.copyFinish.status, m.copyFinish.usage);
  else report.finish(m.orig, waitStatus.signaled(15));
  report.release(m.orig);
}

/** A copy that finished before the original was seen running (restart): allocate, then finish. */
function mirrorFinishPending(c: RouterCore, m: Managed): void {
  m.copyStarted = true;
  c.mirrorStart(m);
  if (m.report !== undefined) settleOriginal(c, m, "success");
}

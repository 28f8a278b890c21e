/**
 * Mirroring (spec htcondor.md §4.6 CheckStatus): the copy's events move its record; the
 * original, once the copy starts, runs on the mirror executor and follows it; the original
 * removed or held removes the copy.
 */
import { formatJobId, type EventEntry, type ExecReport, type ExecUsage, type JobArgs, type JobId } from "jobtap/plugin";
import { check } from "./cleanup.js";
import { CLASSAD, type RouterCore } from "./core.js";
import { copyDone, copyLive, type Managed } from "./lifecycle.js";

/** A copy's finish event usage, if it has one. */
function usageOf(entry: EventEntry): ExecUsage | undefined {
  const u = entry.context?.usage;
  return typeof u === "object" && u !== null ? (u as ExecUsage) : undefined;
}

/** `job.event.*` for a subscribed job: a copy's or an original's. */
export function onEvent(c: RouterCore, args: JobArgs): void {
  const entry = args.entry;
  if (entry === undefined) return;
  const asCopy = c.byCopy.get(args.id);
  if (asCopy) return onCopyEvent(c, asCopy, entry);
  const asOrig = c.byOrig.get(args.id);
  if (asOrig) onOriginalEvent(c, asOrig, entry, args);
}

function onCopyEvent(c: RouterCore, m: Managed, entry: EventEntry): void {
  switch (entry.name) {
    case "start":
      m.copyStarted = true;
      c.routes.get(m.route) && c.recount();
      c.mirrorStart(m);
      break;
    case "urgency":
      mirrorHold(c, m, entry.context?.urgency === 0);
      break;
    case "exception":
      if (entry.context?.severity === 0 && m.copyFinish === undefined) m.copyRemoved = true;
      break;
    case "finish":
      if (m.copyRemoved) break;
      m.copyFinish = { status: Number(entry.context?.status ?? 0), ...(usageOf(entry) ? { usage: usageOf(entry)! } : {}) };
      break;
    case "clean":
      if (copyLive(m)) c.move(m, "ended");
      void check(c, m);
      break;
  }
}

function onOriginalEvent(c: RouterCore, m: Managed, entry: EventEntry, args: JobArgs): void {
  const fatal = entry.name === "exception" && entry.context?.severity === 0;
  const held = entry.name === "urgency" && entry.context?.urgency === 0;
  if (!fatal && !held) return;
  if (m.phase === "done") return;
  // The hold the router mirrored from the copy is not the user's.
  if (held && !fatal && m.holdMirrored !== undefined) return;
  // HTCondor: the original removed, or held by its user ⇒ the copy is removed ("interrupted").
  m.interrupted = true;
  c.removeCopy(m, fatal ? "JobRouter aborted job: original removed" : "JobRouter aborted job: original held");
  if (args.state !== "RUN") void check(c, m);
}

/**
 * A pending copy held or released: the original follows (HTCondor's update_job_status), held
 * with the copy's HoldReason, code and subcode and `HoldCopiedFromTargetJob = true`, so the
 * router keeps managing it; released again to its own urgency when the copy is.
 */
function mirrorHold(c: RouterCore, m: Managed, held: boolean): void {
  if (m.phase !== "submitted" || m.copyStarted || held === (m.holdMirrored !== undefined)) return;
  const orig = c.lookup(m.orig);
  if (orig === undefined || orig.state === "INACTIVE") return;
  try {
    if (held) {
      const ad = c.p.jobAd(m.copy!);
      const num = (name: string) => (ad.has(name) && typeof ad.evaluate(name) === "bigint" ? Number(ad.evaluate(name)) : 0);
      const why = ad.has("HoldReason") ? ad.evaluate("HoldReason") : undefined;
      if (orig.urgency === 0) return; // held by its user already: not the router's to undo
      m.holdMirrored = { urgency: orig.urgency };
      c.p.jobspecUpdate(m.orig, { [`${CLASSAD}HoldCopiedFromTargetJob`]: "true" });
      c.p.postEvent(m.orig, "urgency", {
        urgency: 0, userid: c.p.owner, hold_reason: typeof why === "string" ? why : "Unknown reason",
        hold_reason_code: num("HoldReasonCode"), hold_reason_subcode: num("HoldReasonSubCode"),
      });
    } else releaseMirroredHold(c, m);
  } catch (e) {
    c.p.log.warn(`job ${m.key}: cannot mirror the ${held ? "hold" : "release"} of job ${formatJobId(m.copy!)}: ${(e as Error).message}`);
  }
}

/** Undoes a hold mirrored from the copy: the original is idle again at its own urgency. */
export function releaseMirroredHold(c: RouterCore, m: Managed): void {
  const mirrored = m.holdMirrored;
  if (mirrored === undefined) return;
  m.holdMirrored = undefined;
  c.p.jobspecUpdate(m.orig, { [`${CLASSAD}HoldCopiedFromTargetJob`]: "false" });
  c.p.postEvent(m.orig, "urgency", { urgency: mirrored.urgency, userid: c.p.owner });
}

/** The mirror executor was handed the original (start, or reattach after a restart). */
export function mirrorAttached(c: RouterCore, id: JobId, report: ExecReport, started: boolean): void {
  const m = c.byOrig.get(id);
  if (m === undefined) {
    c.pendingReports.set(id, report);
    return;
  }
  c.pendingReports.delete(id);
  m.report = report;
  if (m.copyStarted && !started) report.start(id);
  if (copyDone(m)) void check(c, m);
}

/** The running original got a fatal exception (cancel): remove the copy; finish follows it. */
export function mirrorKilled(c: RouterCore, id: JobId): void {
  const m = c.byOrig.get(id);
  if (m === undefined) return;
  m.interrupted = true;
  c.removeCopy(m, "JobRouter aborted job: original removed");
  if (!copyLive(m)) void check(c, m);
}

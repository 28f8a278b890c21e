/**
 * The job's eventlog folded into the values its ad shows (docs/ads.md "JobStatus"): status
 * and its times, starts and wall clock, exit, hold reason, and the attributes
 * `classad-update` events set. jobad.ts builds the ad from it.
 */
import type { Expr } from "../../classad/expr.js";
import { literal } from "../../classad/expr.js";
import { parseExpr } from "../../classad/parser.js";
import { ERROR } from "../../classad/values.js";
import { isPlainObject } from "../core/jobspec.js";
import type { EventEntry } from "../port/records.js";

/** HTCondor's JobStatus values used by jobtap (6 and 7 never occur). */
export const JOB_STATUS = { idle: 1, running: 2, removed: 3, completed: 4, held: 5 } as const;

/** HTCondor's HoldReasonCode values jobtap sets itself. */
export const HOLD_REASON_CODE = { userRequest: 1, submittedOnHold: 15, hookPrepareJobFailure: 19 } as const;

/** What `classad-update` events set, by lower-cased name (null: deleted), last one winning. */
export type AdUpdates = Map<string, { name: string; expr: Expr | null }>;

/** The eventlog folded into the values the ad needs. */
export interface Fold {
  status: number;
  entered: number;
  startDate: number;
  lastStart: number;
  starts: number;
  wallClock: number;
  completion: number;
  finish: number | undefined;
  holdCode: number;
  holdSubCode: number;
  holdReason: string;
  /** `classad-update` events' attributes by lower-cased name, last one winning. */
  adUpdates?: AdUpdates;
  lastAlloc: number;
}

/**
 * Folds the eventlog into JobStatus and its times (docs/ads.md "JobStatus"): pending jobs
 * are idle (1) or held (5, urgency 0); an allocated job is running (2) until `clean`, then
 * completed (4) when it ended with `finish`, removed (3) when it ended with an exception;
 * a job ended by an exception before it started is removed from that exception on.
 */
export function foldEventlog(eventlog: readonly EventEntry[], userName: (uid: number) => string): Fold {
  const f: Fold = {
    status: JOB_STATUS.idle, entered: 0, startDate: 0, lastStart: 0, starts: 0,
    wallClock: 0, completion: 0, finish: undefined, holdCode: 0, holdSubCode: 0, holdReason: "", lastAlloc: 0,
  };
  let endedBy: string | undefined;
  const enter = (status: number, ts: number) => {
    if (status !== f.status) f.entered = Math.floor(ts);
    f.status = status;
  };
  for (const e of eventlog) {
    const ctx = e.context;
    switch (e.name) {
      case "submit":
        f.entered = Math.floor(e.timestamp);
        if (ctx?.urgency === 0) hold(f, HOLD_REASON_CODE.submittedOnHold, "submitted on hold (urgency 0)");
        break;
      case "urgency":
        if (f.status !== JOB_STATUS.idle && f.status !== JOB_STATUS.held) break;
        if (ctx?.urgency === 0) {
          const code = typeof ctx.hold_reason_code === "number" ? ctx.hold_reason_code : HOLD_REASON_CODE.userRequest;
          const why = typeof ctx.hold_reason === "string" ? ctx.hold_reason : `via jobtap urgency (by user ${userName(Number(ctx.userid))})`;
          if (f.status !== JOB_STATUS.held) f.entered = Math.floor(e.timestamp);
          hold(f, code, why, typeof ctx.hold_reason_subcode === "number" ? ctx.hold_reason_subcode : 0);
        } else enter(JOB_STATUS.idle, e.timestamp);
        break;
      case "alloc":
        // RUN begins at alloc (prologs, HTCondor's PREPARE_JOB hooks, run before `start`).
        enter(JOB_STATUS.running, e.timestamp);
        f.lastAlloc = Math.floor(e.timestamp);
        break;
      case "start":
        f.starts++;
        if (f.starts === 1) f.startDate = Math.floor(e.timestamp);
        f.lastStart = e.timestamp;
        enter(JOB_STATUS.running, e.timestamp);
        break;
      case "finish":
        if (typeof ctx?.status === "number") f.finish = ctx.status;
        if (f.starts > 0) f.wallClock += Math.max(0, e.timestamp - f.lastStart);
        endedBy ??= "finish";
        break;
      case "exception":
        if (ctx?.severity !== 0) break;
        endedBy ??= "exception";
        if (f.status !== JOB_STATUS.running) enter(JOB_STATUS.removed, e.timestamp);
        // (an allocated job stays running: its CLEANUP, epilogs included, is still its run)
        break;
      case "classad-update":
        foldAdUpdate(f, ctx?.attributes);
        break;
      case "clean":
        enter(endedBy === "finish" ? JOB_STATUS.completed : JOB_STATUS.removed, e.timestamp);
        if (f.status === JOB_STATUS.completed) f.completion = Math.floor(e.timestamp);
        break;
    }
  }
  return f;
}

function foldAdUpdate(f: Fold, attributes: unknown): void {
  if (!isPlainObject(attributes)) return;
  f.adUpdates ??= new Map();
  for (const [name, text] of Object.entries(attributes)) {
    let expr: Expr | null = null;
    if (typeof text === "string") {
      try {
        expr = parseExpr(text, true);
      } catch {
        expr = literal(ERROR);
      }
    } else if (text !== null) continue;
    f.adUpdates.set(name.toLowerCase(), { name, expr });
  }
}

function hold(f: Fold, code: number, reason: string, subCode = 0): void {
  f.status = JOB_STATUS.held;
  f.holdCode = code;
  f.holdSubCode = subCode;
  f.holdReason = reason;
}

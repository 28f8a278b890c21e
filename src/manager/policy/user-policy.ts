/**
 * Which periodic or exit policy acts on a job, in HTCondor's order (its UserPolicy
 * analysis, spec htcondor.md §4.9 and docs/ads.md "Periodic job policy"):
 *
 * 1. a job not held: `PeriodicHold`, then the site's `SYSTEM_PERIODIC_HOLD`;
 * 2. a held job (not held by its user, HoldReasonCode 1): `PeriodicRelease`, then
 *    `SYSTEM_PERIODIC_RELEASE`;
 * 3. `PeriodicRemove`, then `SYSTEM_PERIODIC_REMOVE`;
 * 4. at exit only: `OnExitHold`, then `OnExitRemove` (absent or not false: the job leaves;
 *    false: it stays in the queue, which jobtap maps to a pending copy).
 *
 * An expression acts when it evaluates to a non-zero number or true (a real is truncated,
 * as HTCondor reads it); undefined, strings and error do nothing. The job's own expressions
 * give HoldReasonCode 3 (JobPolicy), the system ones 26 (SystemPolicy).
 */
import type { ClassAd } from "../../classad/classad.js";
import type { Evaluator } from "../../classad/evaluator.js";
import type { Expr } from "../../classad/expr.js";
import { unparse } from "../../classad/unparse.js";
import { isError, numberOf, type Value } from "../../classad/values.js";
import { HOLD_REASON_CODE, JOB_STATUS } from "../ads/jobad.js";

/** HTCondor's HoldReasonCode for a hold by the job's own policy (PeriodicHold, OnExitHold). */
export const PERIODIC_HOLD_CODE = 3;
/** HTCondor's HoldReasonCode for a hold by the site's SYSTEM_PERIODIC_HOLD. */
export const SYSTEM_HOLD_CODE = 26;

/** One site expression (`SYSTEM_PERIODIC_HOLD` and its `_REASON` / `_SUBCODE`). */
export interface SystemExpr {
  expr: Expr;
  reason?: Expr;
  subCode?: Expr;
}

/** The site's periodic policy (absent entries: none). */
export interface SystemPolicy {
  hold?: SystemExpr;
  release?: SystemExpr;
  remove?: SystemExpr;
}

/** What to do with a job: hold, release, remove, or (at exit) requeue it. */
export interface Decision {
  action: "hold" | "release" | "remove" | "requeue";
  /** The expression that fired (`PeriodicHold`, `SYSTEM_PERIODIC_HOLD`, ...). */
  name: string;
  reason: string;
  code: number;
  subCode: number;
}

/** Reports an expression that evaluated to error (the caller logs it once per text). */
export type ErrorSink = (name: string, text: string) => void;

const SYSTEM_NAMES = { hold: "SYSTEM_PERIODIC_HOLD", release: "SYSTEM_PERIODIC_RELEASE", remove: "SYSTEM_PERIODIC_REMOVE" } as const;
const JOB_NAMES = { hold: "PeriodicHold", release: "PeriodicRelease", remove: "PeriodicRemove" } as const;

/** Evaluates the job's and the site's expressions (MY = the job ad); undefined: nothing acts. */
export function analyze(
  ad: ClassAd,
  ev: Evaluator,
  sys: SystemPolicy,
  atExit: boolean,
  onError: ErrorSink,
): Decision | undefined {
  const status = numberOf(ad.evaluate("JobStatus"));
  const held = status === JOB_STATUS.held;
  const steps: Array<"hold" | "release" | "remove"> = [];
  if (!held && status !== JOB_STATUS.completed) steps.push("hold");
  if (held && numberOf(ad.evaluate("HoldReasonCode")) !== HOLD_REASON_CODE.userRequest) steps.push("release");
  steps.push("remove");
  for (const step of steps) {
    const d = jobExpr(ad, ev, JOB_NAMES[step], step, onError) ?? systemExpr(ad, ev, sys[step], step, onError);
    if (d) return d;
  }
  return atExit ? onExit(ad, ev, onError) : undefined;
}

/** OnExitHold, then OnExitRemove (false: the job stays in the queue). */
function onExit(ad: ClassAd, ev: Evaluator, onError: ErrorSink): Decision | undefined {
  const hold = jobExpr(ad, ev, "OnExitHold", "hold", onError);
  if (hold) return hold;
  const expr = ad.lookup("OnExitRemove");
  if (expr === undefined) return undefined;
  const v = ev.evaluateAttr(ad, "OnExitRemove");
  if (isError(v)) onError("OnExitRemove", unparse(expr, true));
  const n = numberOf(v);
  if (n === undefined || Math.trunc(n) !== 0) return undefined;
  return { action: "requeue", name: "OnExitRemove", reason: wording("job attribute", "OnExitRemove", unparse(expr, true), "FALSE"), code: 0, subCode: 0 };
}

function jobExpr(ad: ClassAd, ev: Evaluator, name: string, action: Decision["action"], onError: ErrorSink): Decision | undefined {
  const expr = ad.lookup(name);
  if (expr === undefined) return undefined;
  if (!fires(ev.evaluateAttr(ad, name), () => onError(name, unparse(expr, true)))) return undefined;
  const reason = ad.evaluate(`${name}Reason`);
  const sub = numberOf(ad.evaluate(`${name}SubCode`));
  return {
    action,
    name,
    reason: typeof reason === "string" && reason !== "" ? reason : wording("job attribute", name, unparse(expr, true), "TRUE"),
    code: PERIODIC_HOLD_CODE,
    subCode: sub === undefined ? 0 : Math.trunc(sub),
  };
}

function systemExpr(ad: ClassAd, ev: Evaluator, s: SystemExpr | undefined, action: "hold" | "release" | "remove", onError: ErrorSink): Decision | undefined {
  if (s === undefined) return undefined;
  const name = SYSTEM_NAMES[action];
  if (!fires(ev.evaluate(s.expr, { my: ad }), () => onError(name, unparse(s.expr, true)))) return undefined;
  const reason = s.reason === undefined ? undefined : ev.evaluate(s.reason, { my: ad });
  const sub = s.subCode === undefined ? undefined : numberOf(ev.evaluate(s.subCode, { my: ad }));
  return {
    action,
    name,
    reason: typeof reason === "string" && reason !== "" ? reason : wording("system macro", name, unparse(s.expr, true), "TRUE"),
    code: SYSTEM_HOLD_CODE,
    subCode: sub === undefined ? 0 : Math.trunc(sub),
  };
}

/** HTCondor's reading: a non-zero number (reals truncated) or true; error is reported. */
function fires(v: Value, onError: () => void): boolean {
  if (isError(v)) {
    onError();
    return false;
  }
  const n = numberOf(v);
  return n !== undefined && Math.trunc(n) !== 0;
}

/** HTCondor's wording of why an expression acted. */
function wording(source: string, name: string, text: string, value: string): string {
  return `The ${source} ${name} expression '${text}' evaluated to ${value}`;
}

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
import { evalEntry, Frame } from "../../classad/compile.js";
import type { Evaluator } from "../../classad/evaluator.js";
import type { Expr } from "../../classad/expr.js";
import { callsFunction, readsOnlyNamed, referencedNames } from "../../classad/refs.js";
import { unparse } from "../../classad/unparse.js";
import { ERROR, isError, numberOf, UNDEFINED, type Value } from "../../classad/values.js";
import { HOLD_REASON_CODE, JOB_STATUS } from "../ads/jobad.js";
import type { PolicyReads } from "../ads/policy-ad.js";

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

/**
 * The names `analyze` reads from a job's ad under `sys` (ads/policy-ad.ts's start): the
 * job's expression attributes and their reason and subcode, JobStatus, HoldReasonCode, and
 * what the site's expressions read. Not bounded when a site expression reads names chosen
 * at run time.
 */
export function policyReads(sys: SystemPolicy): PolicyReads {
  const names = new Set(["jobstatus", "holdreasoncode", "onexitremove"]);
  for (const n of ["periodichold", "periodicrelease", "periodicremove", "onexithold"]) names.add(n).add(`${n}reason`).add(`${n}subcode`);
  let bounded = true;
  let deterministic = true;
  for (const s of [sys.hold, sys.release, sys.remove]) {
    for (const e of s === undefined ? [] : [s.expr, s.reason, s.subCode]) {
      if (e === undefined) continue;
      referencedNames(e, names);
      bounded &&= readsOnlyNamed(e);
      deterministic &&= !callsFunction(e, "random");
    }
  }
  return { names, bounded, deterministic };
}

const SYSTEM_NAMES = { hold: "SYSTEM_PERIODIC_HOLD", release: "SYSTEM_PERIODIC_RELEASE", remove: "SYSTEM_PERIODIC_REMOVE" } as const;

/**
 * Evaluates the job's and the site's expressions (MY = the job ad); undefined: nothing acts.
 * One evaluation frame serves the whole job (a pass makes one per job, not per expression).
 */
export function analyze(
  ad: ClassAd,
  ev: Evaluator,
  sys: SystemPolicy,
  atExit: boolean,
  onError: ErrorSink,
): Decision | undefined {
  const p: Pass = { ad, ev, f: new Frame(ad, ad, null, ev.newRun()), onError };
  const status = numberOf(attr(p, "jobstatus"));
  const held = status === JOB_STATUS.held;
  if (!held && status !== JOB_STATUS.completed) {
    const d = jobExpr(p, "PeriodicHold", "hold") ?? systemExpr(p, sys.hold, "hold");
    if (d) return d;
  }
  if (held && numberOf(attr(p, "holdreasoncode")) !== HOLD_REASON_CODE.userRequest) {
    const d = jobExpr(p, "PeriodicRelease", "release") ?? systemExpr(p, sys.release, "release");
    if (d) return d;
  }
  const d = jobExpr(p, "PeriodicRemove", "remove") ?? systemExpr(p, sys.remove, "remove");
  if (d) return d;
  return atExit ? onExit(p) : undefined;
}

/** One job's evaluation: its ad, the evaluator, the shared frame and the error sink. */
interface Pass {
  ad: ClassAd;
  ev: Evaluator;
  f: Frame;
  onError: ErrorSink;
}

/** An attribute of the job ad (`key` lower-cased) in the pass's frame. */
function attr(p: Pass, key: string): Value {
  const e = p.ad.entry(key);
  if (e === undefined) return UNDEFINED;
  try {
    return evalEntry(e, p.f);
  } catch {
    return ERROR;
  }
}

function inFrame(p: Pass, expr: Expr): Value {
  try {
    return p.ev.evaluateIn(expr, p.f);
  } catch {
    return ERROR;
  }
}

/** OnExitHold, then OnExitRemove (false: the job stays in the queue). */
function onExit(p: Pass): Decision | undefined {
  const hold = jobExpr(p, "OnExitHold", "hold");
  if (hold) return hold;
  const expr = p.ad.lookup("OnExitRemove");
  if (expr === undefined) return undefined;
  const v = attr(p, "onexitremove");
  if (isError(v)) p.onError("OnExitRemove", unparse(expr, true));
  const n = numberOf(v);
  if (n === undefined || Math.trunc(n) !== 0) return undefined;
  return { action: "requeue", name: "OnExitRemove", reason: wording("job attribute", "OnExitRemove", unparse(expr, true), "FALSE"), code: 0, subCode: 0 };
}

function jobExpr(p: Pass, name: string, action: Decision["action"]): Decision | undefined {
  const key = name.toLowerCase();
  const entry = p.ad.entry(key);
  if (entry === undefined) return undefined;
  if (!fires(attr(p, key), () => p.onError(name, unparse(entry.expr, true)))) return undefined;
  const reason = attr(p, `${key}reason`);
  const sub = numberOf(attr(p, `${key}subcode`));
  return {
    action,
    name,
    reason: typeof reason === "string" && reason !== "" ? reason : wording("job attribute", name, unparse(entry.expr, true), "TRUE"),
    code: PERIODIC_HOLD_CODE,
    subCode: sub === undefined ? 0 : Math.trunc(sub),
  };
}

function systemExpr(p: Pass, s: SystemExpr | undefined, action: "hold" | "release" | "remove"): Decision | undefined {
  if (s === undefined) return undefined;
  const name = SYSTEM_NAMES[action];
  if (!fires(inFrame(p, s.expr), () => p.onError(name, unparse(s.expr, true)))) return undefined;
  const reason = s.reason === undefined ? undefined : inFrame(p, s.reason);
  const sub = s.subCode === undefined ? undefined : numberOf(inFrame(p, s.subCode));
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

/**
 * Why a job matches no slot, in the manner of HTCondor's `condor_q -better-analyze`: the
 * job's Requirements split at its top-level `&&`, each clause with the number of slots it
 * holds against, each slot's own Requirements (START) against the job, and the first clause
 * no slot satisfies — with a changed constant that some slot would satisfy, when the clause
 * is a comparison of one attribute with one constant.
 */
import type { ClassAd } from "./classad.js";
import type { Evaluator } from "./evaluator.js";
import type { Expr } from "./expr.js";
import { builtinEvaluator } from "./shared.js";
import { unparse, unparseValue } from "./unparse.js";
import type { Value } from "./values.js";

/** One top-level `&&` clause of the job's Requirements. */
export interface ClauseAnalysis {
  /** The clause as text (old syntax). */
  readonly text: string;
  /** Slots against which it is true (MY = job, TARGET = slot). */
  readonly slotsMatching: number;
}

/** One slot, seen from the job. */
export interface SlotAnalysis {
  /** The slot's Name (or its position, 1-based, when it has none). */
  readonly slot: string;
  /** The slot's Requirements (START) against the job, as text: true, false, undefined, error... */
  readonly start: string;
  /** The job's whole Requirements against the slot, as text. */
  readonly job: string;
  /** Both hold: the slot would take the job (resources aside). */
  readonly matches: boolean;
}

/** The result of `analyzeRequirements`. */
export interface RequirementsAnalysis {
  /** The job's Requirements as text; undefined when it has none (true). */
  readonly requirements: string | undefined;
  readonly clauses: readonly ClauseAnalysis[];
  readonly slots: readonly SlotAnalysis[];
  /** Slots where both sides match. */
  readonly slotsMatching: number;
  /** The first clause that holds against no slot, and a fix when one constant would do. */
  readonly firstUnsatisfied?: { readonly index: number; readonly text: string; readonly suggestion?: string };
}

/**
 * Analyzes why `jobAd` matches or does not match `slotAds` (never throws; evaluation errors
 * show as `error`). Safe to call with any ads; the ads are only read.
 */
export function analyzeRequirements(jobAd: ClassAd, slotAds: readonly ClassAd[], ev: Evaluator = builtinEvaluator()): RequirementsAnalysis {
  const req = jobAd.lookup("Requirements");
  const clauses = req === undefined ? [] : splitAnd(req);
  const analysed = clauses.map((c) => ({
    text: unparse(c, true),
    slotsMatching: slotAds.filter((s) => ev.evaluate(c, { my: jobAd, target: s }) === true).length,
  }));
  const slots = slotAds.map((s, i): SlotAnalysis => {
    const start = s.lookup("Requirements") === undefined ? true : ev.evaluateAttr(s, "Requirements", jobAd);
    const job = req === undefined ? true : ev.evaluateAttr(jobAd, "Requirements", s);
    const name = s.evaluate("Name");
    return {
      slot: typeof name === "string" ? name : String(i + 1),
      start: unparseValue(start, true),
      job: unparseValue(job, true),
      matches: start === true && job === true,
    };
  });
  const index = analysed.findIndex((c) => c.slotsMatching === 0);
  const out: RequirementsAnalysis = {
    requirements: req === undefined ? undefined : unparse(req, true),
    clauses: analysed,
    slots,
    slotsMatching: slots.filter((s) => s.matches).length,
  };
  if (index < 0 || slotAds.length === 0) return out;
  const suggestion = suggest(clauses[index]!, jobAd, slotAds, ev);
  return { ...out, firstUnsatisfied: { index, text: analysed[index]!.text, ...(suggestion ? { suggestion } : {}) } };
}

/** A's Rank of B as a real number (HTCondor: non-numeric ⇒ 0.0, booleans promoted). */
export function rankOf(ev: Evaluator, a: ClassAd, b: ClassAd): number {
  if (a.lookup("Rank") === undefined) return 0;
  const v = ev.evaluateAttr(a, "Rank", b);
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "number") return Number.isNaN(v) ? 0 : v;
  if (typeof v === "boolean") return v ? 1 : 0;
  return 0;
}

/** The operands of the top-level `&&` chain (parentheses around the whole are looked through). */
export function splitAnd(e: Expr): Expr[] {
  if (e.type === "paren") return splitAnd(e.inner);
  if (e.type === "binary" && e.op === "&&") return [...splitAnd(e.left), ...splitAnd(e.right)];
  return [e];
}

const FLIP: Record<string, string> = { "<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==" };

/**
 * For `attr OP constant` (or `constant OP attr`) whose attribute the slots define: the same
 * comparison with the constant moved to the value the most slots would accept, as text.
 */
function suggest(clause: Expr, jobAd: ClassAd, slotAds: readonly ClassAd[], ev: Evaluator): string | undefined {
  const c = clause.type === "paren" ? clause.inner : clause;
  if (c.type !== "binary" || !(c.op in FLIP)) return undefined;
  const attrLeft = c.left.type === "attr" && c.right.type === "literal";
  const attrRight = c.right.type === "attr" && c.left.type === "literal";
  if (!attrLeft && !attrRight) return undefined;
  const attr = (attrLeft ? c.left : c.right) as Expr;
  const op = attrLeft ? c.op : FLIP[c.op]!;
  const values = slotAds.map((s) => ev.evaluate(attr, { my: jobAd, target: s })).filter(isNumber).map(Number);
  if (values.length === 0) return undefined;
  const pick = pickValue(op, values);
  if (pick === undefined) return undefined;
  const lit = unparseValue(Number.isInteger(pick) ? BigInt(pick) : pick, true);
  return attrLeft ? `${unparse(attr, true)} ${op} ${lit}` : `${lit} ${FLIP[op]} ${unparse(attr, true)}`;
}

function isNumber(v: Value): boolean {
  return typeof v === "bigint" || (typeof v === "number" && !Number.isNaN(v));
}

/** The constant `attr OP constant` needs to hold for the most slots (values: the slots'). */
function pickValue(op: string, values: number[]): number | undefined {
  const max = Math.max(...values);
  const min = Math.min(...values);
  switch (op) {
    case ">=":
      return min;
    case ">":
      return min - 1;
    case "<=":
      return max;
    case "<":
      return max + 1;
    case "==": {
      const counts = new Map<number, number>();
      for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
      return [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0];
    }
    default:
      return undefined;
  }
}

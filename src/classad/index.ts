/**
 * The ClassAd language (htcondor.md §8), as HTCondor runs it (compat "old semantics" mode).
 *
 * Parsing
 * - `parseExpr(text, oldSyntax?)` → `Expr`; throws JobtapError CLASSAD_SYNTAX ("at line:col:
 *   expected ...").
 * - `parseOldAd(text)` (strict) / `readOldAd(text)` (→ `{ ad, failed }`, HTCondor's per-line
 *   insert rule) for `Name = expr` lines; `parseNewAd(text)` for `[ a = 1; b = 2 ]`;
 *   `parseAd(text)` picks by the leading `[`.
 *
 * Ads
 * - `new ClassAd()`: case-insensitive names keeping the first spelling, insertion order;
 *   `set(name, exprOrValue)`, `setExpr(name, text)`, `lookup(name)`, `delete`, `has`,
 *   `names()`, `attributes()`, `clone()`, `update(other)`; `evaluate(name, target?, ev?)`
 *   and `evaluateExpr(exprOrText, target?, ev?)` (MY = the ad); `parent` is the enclosing
 *   (or chained) ad: unscoped names not found here are looked up there.
 *
 * Evaluation (never throws; undefined/error are values)
 * - `new Evaluator({ clock, random, log })` owns a function table:
 *   `addFunction(name, (args, frame) => Value)`, `addLazyFunction(...)`;
 *   `evaluate(exprOrText, { my, target })`, `evaluateAttr(ad, name, target?)`.
 * - `evalAttr(ad, name, target?)` / `evalExpr(expr, { my, target })` use a shared builtin-only
 *   evaluator whose table cannot be changed.
 * - Matchmaking: `matches(a, b, ev?)`, `rank(a, b, ev?)`; `analyzeRequirements(job, slots)`
 *   (better-analyze: per-clause slot counts, each slot's START, the first clause no slot
 *   satisfies with a suggested constant).
 *
 * Values: `Value` = boolean | bigint (64-bit integer) | number (real) | string | ListValue |
 * ClassAd | AbsTime | RelTime | UNDEFINED | ERROR. Helpers: `typeOf`, `isUndefined`,
 * `isError`, `isTrue` (HTCondor's boolean-equivalent truth), `intValue`, `listValue`, `toJS`,
 * `fromJS` (integral JS numbers become integers),
 * `sameAs` (structural identity; `=?=` on scalars).
 *
 * Printing: `unparse(expr, old?)`, `unparseValue(value, old?)`, `printOldAd(ad)` (sPrintAd:
 * `Name = expr\n` lines), `printNewAd(ad)`; JSON: `adToJSON(ad)`, `adFromJSON(objOrText)`.
 */
import type { ClassAd } from "./classad.js";
import { Evaluator, type EvalScope } from "./evaluator.js";
import type { Expr } from "./expr.js";
import { matches as matchWith, rank as rankWith, requirementsHold as holdsWith } from "./match.js";
import { builtinEvaluator } from "./shared.js";
import type { Value } from "./values.js";

export { ClassAd, type AttrEntry } from "./classad.js";
export { builtinEvaluator } from "./shared.js";
export { Evaluator, type ClassAdFunction, type LazyClassAdFunction, type EvaluatorOptions, type EvalScope } from "./evaluator.js";
export { Frame, type Compiled, MAX_EVAL_DEPTH } from "./compile.js";
export type { Expr, BinaryOp, UnaryOp } from "./expr.js";
export { literal, attrRef, callNode } from "./expr.js";
export { parseExpr, parseExprPrefix, MAX_DEPTH, MAX_NESTING } from "./parser.js";
export { readOldAd, parseOldAd, parseNewAd, parseAd, insertLine, type FailedLine, type OldAdOptions } from "./adtext.js";
export { unparse, unparseValue, printOldAd, printNewAd, formatReal } from "./unparse.js";
export { formatE, formatF, formatG } from "./cformat.js";
export { adToJSON, adFromJSON, fromJS } from "./json.js";
export { analyzeRequirements, rankOf, splitAnd, type RequirementsAnalysis, type ClauseAnalysis, type SlotAnalysis } from "./analyze.js";
export { referencedNames, namesReadThrough } from "./refs.js";
export {
  UNDEFINED,
  ERROR,
  UndefinedValue,
  ErrorValue,
  ListValue,
  AbsTime,
  RelTime,
  typeOf,
  isUndefined,
  isError,
  isTrue,
  isClassAdValue,
  isListValue,
  intValue,
  realValue,
  listValue,
  errorValue,
  numberOf,
  toJS,
  sameAs,
  type Value,
  type ValueType,
} from "./values.js";

/** Evaluates attribute `name` of `ad` (MY=ad, optional TARGET). */
export function evalAttr(ad: ClassAd, name: string, target: ClassAd | null = null, ev: Evaluator = builtinEvaluator()): Value {
  return ev.evaluateAttr(ad, name, target);
}

/** Evaluates an expression tree or new-syntax text in an optional MY/TARGET context. */
export function evalExpr(expr: Expr | string, scope: EvalScope = {}, ev: Evaluator = builtinEvaluator()): Value {
  return ev.evaluate(expr, scope);
}

/** Two-way match: both Requirements true against each other. */
export function matches(a: ClassAd, b: ClassAd, ev: Evaluator = builtinEvaluator()): boolean {
  return matchWith(ev, a, b);
}

/** One-way: `ad`'s Requirements is true against `target`. */
export function requirementsHold(ad: ClassAd, target: ClassAd, ev: Evaluator = builtinEvaluator()): boolean {
  return holdsWith(ev, ad, target);
}

/** A's Rank of B (non-numeric ⇒ 0). */
export function rank(a: ClassAd, b: ClassAd, ev: Evaluator = builtinEvaluator()): number {
  return rankWith(ev, a, b);
}

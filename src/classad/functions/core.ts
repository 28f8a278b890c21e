/**
 * Core builtins: type tests, ifThenElse, eval/unparse/unresolved, conversions
 * (int/real/string/bool), rounding, pow, quantize, random, debug.
 */
import type { ClassAd } from "../classad.js";
import { MAX_EVAL_DEPTH, type Compiled, type Frame } from "../compile.js";
import type { Expr } from "../expr.js";
import { parseExpr } from "../parser.js";
import { unparse } from "../unparse.js";
import { AbsTime, ERROR, ListValue, RelTime, UNDEFINED, booleanEquiv, intValue, numberOf, typeOf, wrapInt, type Value, type ValueType } from "../values.js";
import { arity, isErr, isUndef, stringOf, type Registry } from "./util.js";

const TYPE_TESTS: [string, ValueType][] = [
  ["isUndefined", "undefined"],
  ["isError", "error"],
  ["isString", "string"],
  ["isInteger", "integer"],
  ["isReal", "real"],
  ["isList", "list"],
  ["isClassAd", "classad"],
  ["isBoolean", "boolean"],
  ["isAbsTime", "abstime"],
  ["isRelTime", "reltime"],
];

/** Registers the core builtins into `r`. */
export function registerCore(r: Registry): void {
  for (const [name, type] of TYPE_TESTS) r.addFunction(name, arity(1, 1, ([v]) => typeOf(v!) === type));
  r.addLazyFunction("ifThenElse", ifThenElse);
  registerEval(r);
  r.addFunction("int", arity(1, 1, ([v]) => toInt(v!)));
  r.addFunction("real", arity(1, 1, ([v]) => toReal(v!)));
  r.addFunction("string", arity(1, 1, ([v]) => (isErr(v!) || isUndef(v!) ? v! : stringOf(v!))));
  r.addFunction("bool", arity(1, 1, ([v]) => toBool(v!)));
  r.addFunction("floor", arity(1, 1, ([v]) => rounding(v!, Math.floor)));
  r.addFunction("ceil", arity(1, 1, ([v]) => rounding(v!, Math.ceil)));
  r.addFunction("ceiling", arity(1, 1, ([v]) => rounding(v!, Math.ceil)));
  r.addFunction("round", arity(1, 1, ([v]) => rounding(v!, roundHalfEven)));
  r.addFunction("pow", arity(2, 2, ([b, e]) => pow(b!, e!)));
  r.addFunction("quantize", arity(2, 2, ([a, b]) => quantize(a!, b!)));
  r.addFunction("random", arity(0, 1, (args) => random(args[0], r.random)));
  r.addFunction(
    "debug",
    arity(1, 1, ([v]) => {
      r.log(`classad debug: ${stringOf(v!)}`);
      return v!;
    }),
  );
}

function ifThenElse(args: readonly Compiled[], f: Frame): Value {
  if (args.length !== 3) return ERROR;
  const c = args[0]!(f);
  switch (typeof c) {
    case "boolean":
      return c ? args[1]!(f) : args[2]!(f);
    case "bigint":
      return c !== 0n ? args[1]!(f) : args[2]!(f);
    case "number":
      return c !== 0 ? args[1]!(f) : args[2]!(f);
    case "object":
      return c.kind === "undefined" ? UNDEFINED : ERROR;
    default:
      return ERROR;
  }
}

function registerEval(r: Registry): void {
  // Parsed eval() texts, per evaluator instance (bounded so hostile input cannot grow it).
  const parsed = new Map<string, Expr | null>();
  r.addFunction(
    "eval",
    arity(1, 1, ([v], f) => {
      // HTCondor: an argument without a string form (undefined, error) is an error.
      if (isErr(v!) || isUndef(v!)) return ERROR;
      const text = stringOf(v!);
      let e = parsed.get(text);
      if (e === undefined) {
        try {
          e = parseExpr(text);
        } catch {
          e = null;
        }
        if (parsed.size > 1000) parsed.clear();
        parsed.set(text, e);
      }
      if (e === null) return ERROR;
      return evalInFrame(e, f);
    }),
  );
  r.addLazyFunction("unparse", (_args, f, nodes) => {
    const found = referencedExpr(nodes, f);
    return found === ERROR ? ERROR : found === null ? "" : unparse(found as Expr);
  });
  r.addLazyFunction("unresolved", (args, f, nodes) => unresolvedRefs(args, f, nodes));
}

/** Evaluates `e` in `f` with the depth guard of an attribute dereference. */
function evalInFrame(e: Expr, f: Frame): Value {
  const run = f.run;
  if (run.depth >= MAX_EVAL_DEPTH) return ERROR;
  run.depth++;
  try {
    // The frame's table compiles the tree (lazily, cached on the node).
    const table = run.table as unknown as { evaluateIn(e: Expr, f: Frame): Value };
    return table.evaluateIn(e, f);
  } finally {
    run.depth--;
  }
}

/** The expression bound to the attribute named by a single attribute-reference argument. */
function referencedExpr(nodes: readonly Expr[], f: Frame): Expr | null | typeof ERROR {
  const n = nodes[0];
  if (nodes.length !== 1 || n === undefined || n.type !== "attr") return ERROR;
  let ad: ClassAd | null = null;
  if (n.base === null) {
    for (let s = f.scope; s !== null && ad === null; s = s.parent) if (s.entry(n.key)) ad = s;
    if (ad === null && f.target?.entry(n.key)) ad = f.target;
  } else if (n.base.type === "attr" && n.base.base === null) {
    const k = n.base.key;
    ad = k === "my" ? f.my : k === "target" || k === "other" ? f.target : k === "parent" ? (f.scope?.parent ?? null) : null;
  }
  return ad?.entry(n.key)?.expr ?? null;
}

/** `unresolved(attr[, regex])`: references in attr's expression that nothing resolves. */
function unresolvedRefs(args: readonly Compiled[], f: Frame, nodes: readonly Expr[]): Value {
  if (nodes.length < 1 || nodes.length > 2) return ERROR;
  const e = referencedExpr(nodes.slice(0, 1), f);
  if (e === ERROR) return ERROR;
  if (e === null) return UNDEFINED;
  const missing = new Set<string>();
  collectRefs(e as Expr, (name, key) => {
    if (!isBound(key, f)) missing.add(name);
  });
  const list = [...missing];
  if (nodes.length === 1) return list.join(",");
  const pat = args[1]!(f);
  if (typeof pat !== "string") return isUndef(pat) ? UNDEFINED : ERROR;
  try {
    const re = new RegExp(pat);
    return list.some((n) => re.test(n));
  } catch {
    return ERROR;
  }
}

function isBound(key: string, f: Frame): boolean {
  for (let s = f.scope; s !== null; s = s.parent) if (s.entry(key)) return true;
  return key === "currenttime" || f.target?.entry(key) !== undefined;
}

function collectRefs(e: Expr, visit: (name: string, key: string) => void): void {
  switch (e.type) {
    case "attr":
      if (e.base === null) {
        if (!["my", "target", "other", "parent"].includes(e.key)) visit(e.name, e.key);
      } else if (e.base.type === "attr" && e.base.base === null && e.base.key === "my") visit(e.name, e.key);
      else collectRefs(e.base, visit);
      return;
    case "unary":
      return collectRefs(e.operand, visit);
    case "binary":
      collectRefs(e.left, visit);
      return collectRefs(e.right, visit);
    case "ternary":
      collectRefs(e.cond, visit);
      if (e.then) collectRefs(e.then, visit);
      return collectRefs(e.else, visit);
    case "paren":
      return collectRefs(e.inner, visit);
    case "subscript":
      collectRefs(e.base, visit);
      return collectRefs(e.index, visit);
    case "call":
      return e.args.forEach((a) => collectRefs(a, visit));
    case "list":
      return e.items.forEach((a) => collectRefs(a, visit));
    default:
      return;
  }
}

const LEADING_NUMBER = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/;

/** Parses the leading number of a string (HTCondor's strtod-style rule), or null. */
export function leadingNumber(s: string): number | null {
  const t = s.trim().toLowerCase();
  if (t === "inf" || t === "+inf" || t === "infinity") return Infinity;
  if (t === "-inf" || t === "-infinity") return -Infinity;
  if (t === "nan" || t === "+nan" || t === "-nan") return NaN;
  const m = LEADING_NUMBER.exec(s);
  return m ? Number(m[0]) : null;
}

/** `int(x)`: reals truncate toward zero, strings by their leading number, booleans 0/1. */
export function toInt(v: Value): Value {
  switch (typeof v) {
    case "bigint":
      return v;
    case "number":
      return Number.isFinite(v) ? intValue(v) : ERROR;
    case "boolean":
      return v ? 1n : 0n;
    case "string": {
      const m = /^\s*[+-]?\d+/.exec(v);
      if (m) return intValue(BigInt(m[0].trim()));
      const n = leadingNumber(v);
      return n === null || !Number.isFinite(n) ? ERROR : intValue(n);
    }
  }
  if (v instanceof AbsTime || v instanceof RelTime) return intValue(v.secs);
  return v.kind === "undefined" ? UNDEFINED : ERROR;
}

/** `real(x)`: numbers, booleans, strings (`"1e3"`, `"INF"`, `"NaN"`); undefined stays undefined. */
export function toReal(v: Value): Value {
  const n = numberOf(v);
  if (n !== undefined) return n;
  if (typeof v === "string") return leadingNumber(v) ?? ERROR;
  if (v instanceof AbsTime || v instanceof RelTime) return v.secs;
  return isUndef(v) ? UNDEFINED : ERROR;
}

/** `bool(x)`: numbers non-zero; `"true"`/`"false"` any case; other strings undefined. */
function toBool(v: Value): Value {
  const b = booleanEquiv(v);
  if (b !== null) return b;
  if (typeof v === "string") {
    // HTCondor compares the whole string, case-insensitively, without trimming.
    const t = v.toLowerCase();
    return t === "true" ? true : t === "false" ? false : UNDEFINED;
  }
  if (v instanceof RelTime) return v.secs !== 0;
  return typeof v === "object" && v.kind === "undefined" ? UNDEFINED : ERROR;
}

function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** floor/ceil/round: integer in ⇒ integer out, else via real(x); undefined ⇒ error. */
function rounding(v: Value, op: (x: number) => number): Value {
  if (typeof v === "bigint") return v;
  if (isUndef(v)) return ERROR;
  const r = toReal(v);
  if (typeof r !== "number" || !Number.isFinite(r)) return ERROR;
  return intValue(op(r));
}

/** pow: int^int≥0 stays integer; otherwise both sides through real() (undefined ⇒ error). */
/**
 * pow(b, e): two integers with e ≥ 0 give an integer computed as HTCondor does, through a
 * double plus 0.5 truncated (so `pow(-2, 3)` is -7 there and here), and a result out of the
 * 64-bit range is the x86-64 conversion's INT64_MIN; anything else is a real power.
 */
function pow(b: Value, e: Value): Value {
  if (typeof b === "bigint" && typeof e === "bigint" && e >= 0n) return cLongLong(Math.pow(Number(b), Number(e)) + 0.5);
  const x = realOrNull(b);
  const y = realOrNull(e);
  return x === null || y === null ? ERROR : x ** y;
}

/** C's `(long long)` of a double on x86-64: truncation; NaN or out of range is INT64_MIN. */
function cLongLong(x: number): bigint {
  if (!(x >= -9223372036854775808 && x < 9223372036854775808)) return -0x8000000000000000n;
  return BigInt(Math.trunc(x));
}

/** real(x) as a JS number, or null when not convertible (undefined included). */
function realOrNull(v: Value): number | null {
  const r = toReal(v);
  return typeof r === "number" ? r : null;
}

/**
 * quantize(a, b): the next multiple of b at or above a (integer when a and b are); a list b
 * picks its first element ≥ a, else multiples of its last element; a zero base returns a.
 */
function quantize(a: Value, b: Value): Value {
  const x = realOrNull(a);
  if (x === null) return ERROR;
  let base: Value = b;
  if (b instanceof ListValue) {
    base = 0;
    for (const item of b.items) {
      const r = realOrNull(item);
      if (r === null) return ERROR;
      if (r >= x) return item;
      base = item;
    }
  }
  if (typeof base === "bigint") {
    if (base === 0n) return a;
    // C integer arithmetic: ((a + b - 1) / b) * b, truncating division.
    if (typeof a === "bigint") return wrapInt(((a + base - 1n) / base) * base);
    return Math.ceil(x / Number(base)) * Number(base);
  }
  const rb = realOrNull(base);
  if (rb === null) return ERROR;
  return Math.abs(rb) <= 1e-8 ? a : Math.ceil(x / rb) * rb;
}

function random(x: Value | undefined, rnd: () => number): Value {
  if (x === undefined) return rnd();
  if (typeof x === "bigint") return x <= 0n ? ERROR : intValue(Math.floor(rnd() * Number(x)));
  if (typeof x === "number") return x <= 0 ? ERROR : rnd() * x;
  return isUndef(x) ? UNDEFINED : ERROR;
}

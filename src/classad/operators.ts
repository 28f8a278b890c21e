/**
 * Operator semantics (htcondor.md §8.4): strict arithmetic, comparison and bitwise
 * operators (error beats undefined), boolean promotion, case-insensitive string `==`,
 * exact identity for `is`/`isnt`, and the non-strict `&&`/`||` tables.
 */
import type { BinaryOp, UnaryOp } from "./expr.js";
import { AbsTime, ERROR, RelTime, UNDEFINED, booleanEquiv, identical, wrapInt, type Value } from "./values.js";

/** Strictness rule: error on either side wins over undefined on either side. */
export function strictGuard(a: Value, b: Value): Value | null {
  if (typeof a === "object" && a.kind === "error") return ERROR;
  if (typeof b === "object" && b.kind === "error") return ERROR;
  if (typeof a === "object" && a.kind === "undefined") return UNDEFINED;
  if (typeof b === "object" && b.kind === "undefined") return UNDEFINED;
  return null;
}

/** Applies a strict binary operator to two evaluated operands. */
export function binaryOp(op: BinaryOp, a: Value, b: Value): Value {
  switch (op) {
    case "is":
      return identical(a, b, false);
    case "isnt":
      return identical(a, b, true);
    case "==":
    case "!=":
    case "<":
    case "<=":
    case ">":
    case ">=":
      return compare(op, a, b);
    case "+":
    case "-":
    case "*":
    case "/":
    case "%":
      return arithmetic(op, a, b);
    default:
      return bitwise(op, a, b);
  }
}

function promote(v: Value): bigint | number | null {
  switch (typeof v) {
    case "bigint":
    case "number":
      return v;
    case "boolean":
      return v ? 1n : 0n;
    default:
      return null;
  }
}

/** `== != < <= > >=`: numbers numerically, strings case-insensitively, else error. */
export function compare(op: string, a: Value, b: Value): Value {
  if (typeof a === "bigint" && typeof b === "bigint") return cmpResult(op, a < b ? -1 : a > b ? 1 : 0);
  const g = strictGuard(a, b);
  if (g) return g;
  if (typeof a === "string" || typeof b === "string") {
    if (typeof a !== "string" || typeof b !== "string") return ERROR;
    return cmpResult(op, strcasecmp(a, b));
  }
  if (a instanceof AbsTime && b instanceof AbsTime) return cmpResult(op, Math.sign(a.secs - b.secs));
  if (a instanceof RelTime && b instanceof RelTime) return cmpResult(op, Math.sign(a.secs - b.secs));
  const x = promote(a);
  const y = promote(b);
  if (x === null || y === null) return ERROR;
  if (typeof x === "number" && Number.isNaN(x)) return op === "!=";
  if (typeof y === "number" && Number.isNaN(y)) return op === "!=";
  return cmpResult(op, x < y ? -1 : x > y ? 1 : 0);
}

/**
 * C's strcasecmp, as HTCondor compares strings: ASCII letters fold to lower case, nothing
 * else does (`"É" == "é"` is false there and here); no allocation.
 */
export function strcasecmp(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 65 && x <= 90) x += 32;
    if (y >= 65 && y <= 90) y += 32;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

function cmpResult(op: string, c: number): boolean {
  switch (op) {
    case "==":
      return c === 0;
    case "!=":
      return c !== 0;
    case "<":
      return c < 0;
    case "<=":
      return c <= 0;
    case ">":
      return c > 0;
    default:
      return c >= 0;
  }
}

/** `+ - * / %` with 64-bit wrapping integers, reals when mixed, time arithmetic. */
export function arithmetic(op: string, a: Value, b: Value): Value {
  if (typeof a === "bigint" && typeof b === "bigint") return intArith(op, a, b);
  const g = strictGuard(a, b);
  if (g) return g;
  if (typeof a === "object" || typeof b === "object") return timeArith(op, a, b);
  const x = promote(a);
  const y = promote(b);
  if (x === null || y === null) return ERROR;
  if (typeof x === "bigint" && typeof y === "bigint") return intArith(op, x, y);
  return realArith(op, Number(x), Number(y));
}

function intArith(op: string, a: bigint, b: bigint): Value {
  switch (op) {
    case "+":
      return wrapInt(a + b);
    case "-":
      return wrapInt(a - b);
    case "*":
      return wrapInt(a * b);
    case "/":
      return b === 0n ? ERROR : wrapInt(a / b);
    default:
      return b === 0n ? ERROR : a % b;
  }
}

function realArith(op: string, a: number, b: number): Value {
  switch (op) {
    case "+":
      return a + b;
    case "-":
      return a - b;
    case "*":
      return a * b;
    case "/":
      return b === 0 ? ERROR : a / b;
    default:
      // HTCondor: modulus with a real operand is an error.
      return ERROR;
  }
}

function timeArith(op: string, a: Value, b: Value): Value {
  const an = promote(a);
  const bn = promote(b);
  if (a instanceof AbsTime) {
    if (b instanceof RelTime && (op === "+" || op === "-")) return new AbsTime(op === "+" ? a.secs + b.secs : a.secs - b.secs, a.offset);
    if (b instanceof AbsTime && op === "-") return new RelTime(a.secs - b.secs);
    return ERROR;
  }
  if (a instanceof RelTime) {
    if (b instanceof RelTime && (op === "+" || op === "-")) return new RelTime(op === "+" ? a.secs + b.secs : a.secs - b.secs);
    if (b instanceof AbsTime && op === "+") return new AbsTime(a.secs + b.secs, b.offset);
    if (bn !== null && (op === "*" || op === "/")) return op === "*" ? new RelTime(a.secs * Number(bn)) : Number(bn) === 0 ? ERROR : new RelTime(a.secs / Number(bn));
    return ERROR;
  }
  if (b instanceof RelTime && an !== null && op === "*") return new RelTime(Number(an) * b.secs);
  return ERROR;
}

/** `& | ^ << >> >>>`: integers only (booleans too are an error, as in HTCondor). */
function bitwise(op: string, a: Value, b: Value): Value {
  const g = strictGuard(a, b);
  if (g) return g;
  if (typeof a !== "bigint" || typeof b !== "bigint") return ERROR;
  switch (op) {
    case "&":
      return a & b;
    case "|":
      return a | b;
    case "^":
      return a ^ b;
    case "<<":
      return wrapInt(a << (b & 63n));
    case ">>":
      return a >> (b & 63n);
    default:
      return BigInt.asIntN(64, BigInt.asUintN(64, a) >> (b & 63n));
  }
}

/**
 * Unary `- + ! ~`, as HTCondor: undefined and error pass through; `+` accepts numbers and
 * relative times; `-` numbers and relative times (a boolean is an error: HTCondor negates it
 * and then overwrites the result with error); `!` booleans and numbers (non-zero is true, NaN
 * too); `~` integers only.
 */
export function unaryOp(op: UnaryOp, v: Value): Value {
  switch (typeof v) {
    case "object":
      if (v.kind === "undefined" || v.kind === "error") return v.kind === "undefined" ? UNDEFINED : ERROR;
      if (v instanceof RelTime && (op === "+" || op === "-")) return op === "+" ? v : new RelTime(-v.secs);
      return ERROR;
    case "bigint":
      return op === "-" ? wrapInt(-v) : op === "+" ? v : op === "!" ? !booleanEquiv(v) : ~v;
    case "number":
      return op === "-" ? -v : op === "+" ? v : op === "!" ? !booleanEquiv(v) : ERROR;
    case "boolean":
      return op === "!" ? !v : ERROR;
    default:
      return ERROR;
  }
}

/** A logical operand as a tri-state: its boolean equivalent, else undefined or error. */
export function logicalOperand(v: Value): boolean | Value {
  const b = booleanEquiv(v);
  if (b !== null) return b;
  return typeof v === "object" && v.kind === "undefined" ? UNDEFINED : ERROR;
}

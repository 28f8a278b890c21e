/**
 * Operator semantics (htcondor.md §8.4): strict arithmetic, comparison and bitwise
 * operators (error beats undefined), boolean promotion, case-insensitive string `==`,
 * exact identity for `is`/`isnt`, and the non-strict `&&`/`||` tables.
 */
import type { BinaryOp, UnaryOp } from "./expr.js";
import { AbsTime, ERROR, RelTime, UNDEFINED, sameAs, wrapInt, type Value } from "./values.js";

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
      return sameAs(a, b);
    case "isnt":
      return !sameAs(a, b);
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
    const x = a.toLowerCase();
    const y = b.toLowerCase();
    return cmpResult(op, x < y ? -1 : x > y ? 1 : 0);
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

/** `& | ^ << >> >>>` on integers (and `& | ^` on two booleans). */
function bitwise(op: string, a: Value, b: Value): Value {
  const g = strictGuard(a, b);
  if (g) return g;
  if (typeof a === "boolean" && typeof b === "boolean") {
    if (op === "&") return a && b;
    if (op === "|") return a || b;
    if (op === "^") return a !== b;
    return ERROR;
  }
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

/** Unary `- + ! ~`. Unary minus of a boolean negates it (HTCondor quirk, kept). */
export function unaryOp(op: UnaryOp, v: Value): Value {
  if (typeof v === "object") return v.kind === "undefined" ? UNDEFINED : v.kind === "error" ? ERROR : unaryObject(op, v);
  switch (op) {
    case "-":
      if (typeof v === "bigint") return wrapInt(-v);
      if (typeof v === "number") return -v;
      return typeof v === "boolean" ? !v : ERROR;
    case "+":
      return typeof v === "string" ? ERROR : v;
    case "!":
      if (typeof v === "boolean") return !v;
      if (typeof v === "bigint") return v === 0n;
      if (typeof v === "number") return v === 0;
      return ERROR;
    default:
      if (typeof v === "bigint") return ~v;
      return typeof v === "boolean" ? !v : ERROR;
  }
}

function unaryObject(op: UnaryOp, v: Value): Value {
  if (v instanceof RelTime && op === "-") return new RelTime(-v.secs);
  if ((v instanceof RelTime || v instanceof AbsTime) && op === "+") return v;
  return ERROR;
}

/** A logical operand as a tri-state: true/false, or the undefined/error value itself. */
export function logicalOperand(v: Value): boolean | Value {
  switch (typeof v) {
    case "boolean":
      return v;
    case "bigint":
      return v !== 0n;
    case "number":
      return v !== 0;
    case "object":
      return v.kind === "undefined" ? UNDEFINED : ERROR;
    default:
      return ERROR;
  }
}

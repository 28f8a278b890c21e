/**
 * ClassAd values.
 *
 * A value is one of: `undefined`, `error`, boolean (JS boolean), 64-bit integer (JS bigint,
 * wrapped to signed 64 bits as HTCondor's `long long` arithmetic does), real (JS number),
 * string (JS string), list, nested ad, absolute time, relative time. Undefined and error are
 * ordinary values: evaluation returns them, it never throws.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import type { ClassAd } from "./classad.js";
import type { Expr } from "./expr.js";

/** The ClassAd `undefined` value. Compare with `isUndefined`, not `===` on other instances. */
export class UndefinedValue {
  readonly kind = "undefined" as const;
}

/** The ClassAd `error` value; `reason` is for diagnostics only and never printed. */
export class ErrorValue {
  readonly kind = "error" as const;
  constructor(readonly reason?: string) {}
}

/**
 * A list value. As in HTCondor, a list literal evaluates to the list of its element
 * *expressions*: an element is evaluated only when something reads it (`size({ error })` is
 * 1, `{ Missing }` prints as written), once per list value, in the scope where the literal
 * was evaluated. Lists built by functions hold values; their `exprs` is null.
 */
export class ListValue {
  readonly kind = "list" as const;
  private evaluated: readonly Value[] | null;
  private evaluate: (() => Value[]) | null;
  constructor(
    items: readonly Value[] | null,
    /** The element expressions of a list literal, printed as written; null for built lists. */
    readonly exprs: readonly Expr[] | null = null,
    evaluate: (() => Value[]) | null = null,
  ) {
    this.evaluated = items;
    this.evaluate = evaluate;
  }

  /** A list literal's value: `evaluate` yields the element values when first read. */
  static lazy(exprs: readonly Expr[], evaluate: () => Value[]): ListValue {
    return new ListValue(null, exprs, evaluate);
  }

  /** The element values (evaluating a literal's elements on first read). */
  get items(): readonly Value[] {
    if (this.evaluated === null) {
      this.evaluated = this.evaluate!();
      this.evaluate = null;
    }
    return this.evaluated;
  }

  /** Number of elements, without evaluating any. */
  get length(): number {
    return this.exprs !== null ? this.exprs.length : this.evaluated!.length;
  }
}

/** An absolute time: seconds since the epoch plus the zone offset (seconds east of UTC). */
export class AbsTime {
  readonly kind = "abstime" as const;
  constructor(
    readonly secs: number,
    readonly offset: number,
  ) {}
}

/** A relative time (a duration) in seconds; may be fractional or negative. */
export class RelTime {
  readonly kind = "reltime" as const;
  constructor(readonly secs: number) {}
}

export type Value =
  | UndefinedValue
  | ErrorValue
  | boolean
  | bigint
  | number
  | string
  | ListValue
  | ClassAd
  | AbsTime
  | RelTime;

export type ValueType =
  | "undefined"
  | "error"
  | "boolean"
  | "integer"
  | "real"
  | "string"
  | "list"
  | "classad"
  | "abstime"
  | "reltime";

/**
 * Longest string the string functions build (64 Mi characters); a longer result is `error`,
 * so ads that double a string at every attribute end quickly instead of allocating until
 * the host gives up.
 */
export const MAX_STRING_LENGTH = 64 * 1024 * 1024;

/** Deepest list nesting `toJS` converts. */
export const MAX_VALUE_NESTING = 1000;

/** The shared immutable `undefined` value (a constant, not state). */
export const UNDEFINED: UndefinedValue = Object.freeze(new UndefinedValue());
/** The shared immutable `error` value. */
export const ERROR: ErrorValue = Object.freeze(new ErrorValue());

/** The ClassAd type name of a value. */
export function typeOf(v: Value): ValueType {
  switch (typeof v) {
    case "boolean":
      return "boolean";
    case "bigint":
      return "integer";
    case "number":
      return "real";
    case "string":
      return "string";
    default:
      return v.kind;
  }
}

/** True for the ClassAd `undefined` value. */
export function isUndefined(v: Value): v is UndefinedValue {
  return typeof v === "object" && v.kind === "undefined";
}

/** True for the ClassAd `error` value. */
export function isError(v: Value): v is ErrorValue {
  return typeof v === "object" && v.kind === "error";
}

/** True for a nested-ad value. */
export function isClassAdValue(v: Value): v is ClassAd {
  return typeof v === "object" && v.kind === "classad";
}

/** True for a list value. */
export function isListValue(v: Value): v is ListValue {
  return typeof v === "object" && v.kind === "list";
}

/** Wraps to a signed 64-bit integer, as C++ `long long` arithmetic does. */
export function wrapInt(n: bigint): bigint {
  return n >= -0x8000000000000000n && n <= 0x7fffffffffffffffn ? n : BigInt.asIntN(64, n);
}

/** An integer value from a JS number (truncated toward zero) or bigint. */
export function intValue(n: number | bigint): bigint {
  if (typeof n === "bigint") return wrapInt(n);
  if (!Number.isFinite(n)) return n > 0 ? 0x7fffffffffffffffn : n < 0 ? -0x8000000000000000n : 0n;
  return wrapInt(BigInt(Math.trunc(n)));
}

/** A real value. */
export function realValue(n: number): number {
  return n;
}

/** A list value from its elements. */
export function listValue(items: readonly Value[]): ListValue {
  return new ListValue(items);
}

/** An error value carrying a diagnostic reason (never printed). */
export function errorValue(reason?: string): ErrorValue {
  return reason === undefined ? ERROR : new ErrorValue(reason);
}

/**
 * HTCondor's boolean equivalence (`Value::IsBooleanValueEquiv`), the one definition of
 * ClassAd truthiness: a boolean is itself, an integer or real is true when non-zero (NaN is
 * non-zero, so true, as a C `double` test is); every other value has no boolean meaning
 * (null). `&&`, `||`, `!`, `?:`, `isTrue`, `bool()` and `countMatches` all go through it.
 */
export function booleanEquiv(v: Value): boolean | null {
  switch (typeof v) {
    case "boolean":
      return v;
    case "bigint":
      return v !== 0n;
    case "number":
      return v !== 0;
    default:
      return null;
  }
}

/** HTCondor's "boolean-equivalent true": true booleans and non-zero numbers (NaN included). */
export function isTrue(v: Value): boolean {
  return booleanEquiv(v) === true;
}

/** A number from an integer, real or boolean value; undefined for anything else. */
export function numberOf(v: Value): number | undefined {
  switch (typeof v) {
    case "bigint":
      return Number(v);
    case "number":
      return v;
    case "boolean":
      return v ? 1 : 0;
    default:
      return undefined;
  }
}

/**
 * A plain JS view of a value for callers outside the language: integers become numbers when
 * they fit exactly (else stay bigint), lists arrays, ads plain objects of their evaluated
 * values are NOT produced here (ads stay ClassAd), undefined becomes `undefined`, error `null`.
 */
export function toJS(v: Value, depth = 0): unknown {
  switch (typeof v) {
    case "bigint":
      return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
    case "boolean":
    case "number":
    case "string":
      return v;
    default:
      if (v.kind === "undefined") return undefined;
      if (v.kind === "error") return null;
      if (v.kind === "list") {
        // A list's elements are evaluated as they are read, so a chain of attributes
        // (a2 = { a1 }, a1 = { a0 }, ...) can nest without bound: refuse, do not overflow.
        if (depth >= MAX_VALUE_NESTING) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `ClassAd list nested deeper than ${MAX_VALUE_NESTING} levels`);
        return v.items.map((x) => toJS(x, depth + 1));
      }
      return v;
  }
}

/**
 * `=?=` (or `=!=` when `negate`), as HTCondor's meta comparison: values of different types
 * are not identical; undefined/error are identical to themselves; strings compare
 * case-sensitively, reals by C `==` (so NaN is not identical to NaN), absolute times by
 * instant and zone; a list or nested ad on both sides is an error.
 */
export function identical(a: Value, b: Value, negate: boolean): Value {
  const ta = typeof a;
  if (ta !== typeof b) return negate;
  let same: boolean;
  if (ta !== "object") same = a === b;
  else {
    const oa = a as Exclude<Value, boolean | bigint | number | string>;
    const ob = b as Exclude<Value, boolean | bigint | number | string>;
    if (oa.kind !== ob.kind) return negate;
    switch (oa.kind) {
      case "undefined":
      case "error":
        same = true;
        break;
      case "abstime":
        same = oa.secs === (ob as AbsTime).secs && oa.offset === (ob as AbsTime).offset;
        break;
      case "reltime":
        same = oa.secs === (ob as RelTime).secs;
        break;
      default:
        return ERROR;
    }
  }
  return same !== negate;
}

/**
 * Structural identity: HTCondor's `=?=` (`identical`) on everything but lists and ads, where
 * `=?=` itself is an error; those compare element by element / attribute by attribute.
 * Nesting deeper than MAX_VALUE_NESTING throws INVALID_ARGUMENT.
 */
export function sameAs(a: Value, b: Value, depth = 0): boolean {
  if (a instanceof ListValue && b instanceof ListValue) {
    if (depth >= MAX_VALUE_NESTING) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `ClassAd list nested deeper than ${MAX_VALUE_NESTING} levels`);
    const ia = a.items;
    const ib = b.items;
    return ia.length === ib.length && ia.every((x, i) => sameAs(x, ib[i]!, depth + 1));
  }
  if (isClassAdValue(a) && isClassAdValue(b)) return a.sameAs(b, sameAs);
  return identical(a, b, false) === true;
}

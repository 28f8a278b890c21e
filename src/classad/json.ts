/**
 * JSON ads, in HTCondor's JSON form: literal values map to JSON values (undefined ⇒ null,
 * lists ⇒ arrays, nested ads ⇒ objects); any other expression is written as the string
 * `"\/Expr(<new-style text>)\/"` and read back by parsing that text. JSON numbers that are
 * integral become ClassAd integers, others reals (JSON cannot tell `1.0` from `1`).
 */
import { ErrorCode, JobtapError } from "../errors.js";
import { ClassAd } from "./classad.js";
import { literal, type Expr } from "./expr.js";
import { MAX_NESTING, parseExpr } from "./parser.js";
import { unparse } from "./unparse.js";
import { ERROR, ListValue, UNDEFINED, intValue, type Value } from "./values.js";

const EXPR_RE = /^\/Expr\(([\s\S]*)\)\/$/;

/** A JSON-ready object for `ad` (attribute order kept). */
export function adToJSON(ad: ClassAd): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, expr] of ad.attributes()) out[name] = exprToJSON(expr);
  return out;
}

function exprToJSON(e: Expr): unknown {
  if (e.type === "literal") {
    const v = e.value;
    switch (typeof v) {
      case "bigint":
        return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : `/Expr(${v})/`;
      case "number":
        return Number.isFinite(v) ? v : `/Expr(${unparse(e)})/`;
      case "boolean":
      case "string":
        return v;
    }
    if (v.kind === "undefined") return null;
    if (v instanceof ClassAd) return adToJSON(v);
  }
  if (e.type === "list" && e.items.every((x) => x.type === "literal" || x.type === "list" || x.type === "record")) {
    return e.items.map(exprToJSON);
  }
  if (e.type === "record") {
    const out: Record<string, unknown> = {};
    for (const [n, x] of e.attrs) out[n] = exprToJSON(x);
    return out;
  }
  return `/Expr(${unparse(e)})/`;
}

/**
 * A ClassAd value from a plain JS value, with JSON ad rules: integral numbers within the
 * 64-bit range (and bigints) are integers, other numbers reals, null/undefined is `undefined`, arrays are lists and
 * plain objects nested ads. Strings are plain strings (no `/Expr(...)/` decoding).
 */
export function fromJS(v: unknown, depth = 0): Value {
  if (v === null || v === undefined) return UNDEFINED;
  if (depth > MAX_NESTING) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `value nested deeper than ${MAX_NESTING} levels`);
  switch (typeof v) {
    case "boolean":
    case "string":
      return v;
    case "bigint":
      return intValue(v);
    case "number":
      return jsonNumber(v);
    case "object":
      if (Array.isArray(v)) return new ListValue(v.map((x) => fromJS(x, depth + 1)));
      if (v instanceof ClassAd) return v;
      return new ClassAd(Object.entries(v as object).map(([k, x]) => [k, fromJS(x, depth + 1)] as const));
    default:
      return ERROR;
  }
}

/**
 * JSON cannot tell 1.0 from 1: integral numbers are integers, unless outside the 64-bit range
 * (1e300), where they stay reals rather than wrapping.
 */
function jsonNumber(n: number): Value {
  return Number.isInteger(n) && Math.abs(n) < 2 ** 63 ? intValue(n) : n;
}

/** Builds an ad from a parsed JSON object or JSON text; throws CLASSAD_SYNTAX naming the path. */
export function adFromJSON(json: unknown): ClassAd {
  let obj = json;
  if (typeof json === "string") {
    try {
      obj = JSON.parse(json);
    } catch (e) {
      throw new JobtapError(ErrorCode.CLASSAD_SYNTAX, `JSON ClassAd: ${(e as Error).message}`);
    }
  }
  if (typeof obj !== "object" || obj === null || Array.isArray(obj)) {
    throw new JobtapError(ErrorCode.CLASSAD_SYNTAX, "JSON ClassAd: expected an object");
  }
  const ad = new ClassAd();
  for (const [name, v] of Object.entries(obj)) ad.set(name, jsonToExpr(v, name, 1));
  return ad;
}

function jsonToExpr(v: unknown, path: string, depth: number): Expr {
  if (v === null) return literal(UNDEFINED);
  if (depth > MAX_NESTING) throw new JobtapError(ErrorCode.CLASSAD_SYNTAX, `JSON ClassAd ${path}: nested deeper than ${MAX_NESTING} levels`);
  switch (typeof v) {
    case "boolean":
      return literal(v);
    case "number":
      return literal(jsonNumber(v));
    case "string": {
      const m = EXPR_RE.exec(v);
      if (!m) return literal(v);
      try {
        return parseExpr(m[1]!);
      } catch (e) {
        throw new JobtapError(ErrorCode.CLASSAD_SYNTAX, `JSON ClassAd ${path}: ${(e as Error).message}`);
      }
    }
    case "object":
      if (Array.isArray(v)) return { type: "list", items: v.map((x, i) => jsonToExpr(x, `${path}[${i}]`, depth + 1)) };
      return { type: "record", attrs: Object.entries(v as object).map(([k, x]) => [k, jsonToExpr(x, `${path}.${k}`, depth + 1)] as const) };
    default:
      return literal(ERROR);
  }
}

/**
 * Helpers shared by the builtin function modules: argument checks, conversions and the
 * registration surface a module writes into.
 */
import type { Compiled, Frame } from "../compile.js";
import type { Expr } from "../expr.js";
import { unparseValue } from "../unparse.js";
import { ERROR, UNDEFINED, type Value } from "../values.js";

/** What a builtin module registers into (an Evaluator). */
export interface Registry {
  addFunction(name: string, fn: (args: Value[], frame: Frame) => Value): unknown;
  addLazyFunction(name: string, fn: (args: readonly Compiled[], frame: Frame, nodes: readonly Expr[]) => Value): unknown;
  readonly random: () => number;
  readonly log: (message: string) => void;
}

/** True for the ClassAd error value. */
export function isErr(v: Value): boolean {
  return typeof v === "object" && v.kind === "error";
}

/** True for the ClassAd undefined value. */
export function isUndef(v: Value): boolean {
  return typeof v === "object" && v.kind === "undefined";
}

/** Error if any argument is error, else undefined if any is undefined, else null. */
export function strictArgs(args: readonly Value[]): Value | null {
  let undef = false;
  for (const a of args) {
    if (typeof a === "object") {
      if (a.kind === "error") return ERROR;
      if (a.kind === "undefined") undef = true;
    }
  }
  return undef ? UNDEFINED : null;
}

/** `string(x)` conversion for a defined, non-error value (reals in the new-style `%1.15E`). */
export function stringOf(v: Value): string {
  switch (typeof v) {
    case "string":
      return v;
    case "bigint":
      return v.toString();
    case "boolean":
      return v ? "true" : "false";
    default:
      return unparseValue(v, false);
  }
}

/** Wraps `fn` so it is only called with an argument count in [min, max]; else error. */
export function arity(min: number, max: number, fn: (args: Value[], f: Frame) => Value): (args: Value[], f: Frame) => Value {
  return (args, f) => (args.length < min || args.length > max ? ERROR : fn(args, f));
}

/** A JS integer from an integer value (or null). */
export function intArg(v: Value): number | null {
  return typeof v === "bigint" ? Number(v) : null;
}

/** Splits a string list on any character of `delims`, trimming items and dropping empty ones. */
export function splitStringList(s: string, delims: string): string[] {
  const out: string[] = [];
  let cur = "";
  for (const ch of s) {
    if (delims.includes(ch)) {
      const t = cur.trim();
      if (t !== "") out.push(t);
      cur = "";
    } else cur += ch;
  }
  const t = cur.trim();
  if (t !== "") out.push(t);
  return out;
}

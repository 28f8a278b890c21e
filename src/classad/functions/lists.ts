/**
 * List builtins (member, identicalMember, sum/avg/min/max, anyCompare/allCompare) and the
 * HTCondor compat string-list functions (stringList*, split, splitUserName/SlotName,
 * evalInEachContext, countMatches).
 */
import { ClassAd } from "../classad.js";
import { Frame, type Compiled } from "../compile.js";
import type { Expr } from "../expr.js";
import { compare } from "../operators.js";
import { ERROR, ListValue, UNDEFINED, identical, isTrue, type Value } from "../values.js";
import { arity, isErr, isUndef, splitStringList, strictArgs, type Registry } from "./util.js";

/** Registers list and string-list builtins into `r`. */
export function registerLists(r: Registry): void {
  r.addFunction("member", arity(2, 2, ([x, l]) => member(x!, l!, false)));
  r.addFunction("identicalMember", arity(2, 2, ([x, l]) => member(x!, l!, true)));
  r.addFunction("sum", arity(1, 1, ([l]) => aggregate(l!, "sum")));
  r.addFunction("avg", arity(1, 1, ([l]) => aggregate(l!, "avg")));
  r.addFunction("min", arity(1, 1, ([l]) => aggregate(l!, "min")));
  r.addFunction("max", arity(1, 1, ([l]) => aggregate(l!, "max")));
  r.addFunction("anyCompare", arity(3, 3, (a) => listCompare(a, true)));
  r.addFunction("allCompare", arity(3, 3, (a) => listCompare(a, false)));
  r.addFunction("stringListsIntersect", arity(2, 3, intersect));
  r.addFunction("stringListSize", arity(1, 2, (a) => withList(a, ", ", (items) => BigInt(items.length))));
  for (const op of ["Sum", "Avg", "Min", "Max"] as const) {
    r.addFunction(`stringList${op}`, arity(1, 2, (a) => withList(a, ", ", (items) => stringListMath(items, op))));
  }
  r.addFunction("stringListMember", arity(2, 3, (a) => stringListMember(a, false)));
  r.addFunction("stringListIMember", arity(2, 3, (a) => stringListMember(a, true)));
  r.addFunction("stringListSubsetMatch", arity(2, 3, (a) => subsetMatch(a, false)));
  r.addFunction("stringListISubsetMatch", arity(2, 3, (a) => subsetMatch(a, true)));
  r.addFunction("split", arity(1, 2, split));
  r.addFunction("splitUserName", arity(1, 1, ([s]) => splitAt(s!, true)));
  r.addFunction("splitSlotName", arity(1, 1, ([s]) => splitAt(s!, false)));
  r.addLazyFunction("evalInEachContext", (args, f, nodes) => eachContext(args, f, nodes, false));
  r.addLazyFunction("countMatches", (args, f, nodes) => eachContext(args, f, nodes, true));
}

/**
 * member / identicalMember, in HTCondor's order of checks: an undefined list (or, for
 * member, an undefined x) is undefined; a non-list, or a list or ad x, is error; member of
 * error is error; then true when some element `== x` (`=?= x` for identicalMember) is true.
 */
function member(x: Value, l: Value, identicalTest: boolean): Value {
  if (isUndef(l) || (!identicalTest && isUndef(x))) return UNDEFINED;
  if (!(l instanceof ListValue) || x instanceof ListValue || x instanceof ClassAd) return ERROR;
  if (!identicalTest && isErr(x)) return ERROR;
  return l.items.some((it) => (identicalTest ? identical(it, x, false) : compare("==", it, x)) === true);
}

/** sum/avg/min/max: undefined elements dropped, non-numbers error, real if any real. */
function aggregate(l: Value, op: "sum" | "avg" | "min" | "max"): Value {
  if (isErr(l) || isUndef(l)) return l;
  if (!(l instanceof ListValue)) return ERROR;
  let anyReal = false;
  const nums: number[] = [];
  let isum = 0n;
  for (const it of l.items) {
    if (isUndef(it)) continue;
    if (typeof it === "number") anyReal = true;
    else if (typeof it !== "bigint") return ERROR;
    nums.push(Number(it));
    if (typeof it === "bigint") isum += it;
  }
  if (nums.length === 0) return op === "sum" || op === "avg" ? 0n : UNDEFINED;
  const total = nums.reduce((a, b) => a + b, 0);
  switch (op) {
    case "sum":
      return anyReal ? total : BigInt.asIntN(64, isum);
    case "avg":
      return total / nums.length;
    case "min":
    case "max": {
      const pick = op === "min" ? Math.min(...nums) : Math.max(...nums);
      if (anyReal) return pick;
      const ints = l.items.filter((x): x is bigint => typeof x === "bigint");
      return ints.reduce((a, b) => (op === "min" ? (b < a ? b : a) : b > a ? b : a));
    }
  }
}

const COMPARE_OPS = new Set(["<", "<=", "==", "!=", ">", ">=", "is", "isnt"]);

/**
 * anyCompare / allCompare(op, list, x), as HTCondor: the operator is one of the exact
 * strings above; an element whose comparison is error makes the result error, one that is
 * undefined ends the walk with false (for both functions).
 */
function listCompare(args: Value[], any: boolean): Value {
  const [op, l, v] = args as [Value, Value, Value];
  if (isUndef(op)) return UNDEFINED;
  if (typeof op !== "string" || !COMPARE_OPS.has(op)) return ERROR;
  if (isUndef(l)) return UNDEFINED;
  if (!(l instanceof ListValue)) return ERROR;
  for (const it of l.items) {
    const r = op === "is" || op === "isnt" ? identical(it, v, op === "isnt") : compare(op, it, v);
    if (typeof r !== "boolean") return isUndef(r) ? false : ERROR;
    if (r === any) return any;
  }
  return !any;
}

/**
 * Runs `body` on the split items of a string-list first argument (delimiters in arg 2).
 * As HTCondor's compat functions, any non-string argument (undefined too) is an error.
 */
function withList(args: Value[], defaults: string, body: (items: string[]) => Value): Value {
  const [l, d] = args;
  if (typeof l !== "string" || (d !== undefined && typeof d !== "string")) return ERROR;
  return body(splitStringList(l, d ?? defaults));
}

function stringListMath(items: string[], op: "Sum" | "Avg" | "Min" | "Max"): Value {
  const nums: number[] = [];
  let allInt = true;
  for (const it of items) {
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(it)) return ERROR;
    if (!/^[+-]?\d+$/.test(it)) allInt = false;
    nums.push(Number(it));
  }
  if (nums.length === 0) return op === "Min" || op === "Max" ? UNDEFINED : 0;
  const sum = nums.reduce((a, b) => a + b, 0);
  const r = op === "Sum" ? sum : op === "Avg" ? sum / nums.length : op === "Min" ? Math.min(...nums) : Math.max(...nums);
  return allInt ? BigInt(Math.trunc(r)) : r;
}

/** Arguments of the stringList member/subset functions: strings, or undefined (as ""). */
function memberArgs(args: Value[]): { x: string; l: string; delims: string } | Value {
  const [x, l, d] = args as [Value, Value, Value | undefined];
  const okay = (v: Value | undefined) => v === undefined || typeof v === "string" || isUndef(v);
  if (!okay(x) || !okay(l) || !okay(d)) return ERROR;
  if (isUndef(x) && isUndef(l)) return UNDEFINED;
  return { x: typeof x === "string" ? x : "", l: typeof l === "string" ? l : "", delims: typeof d === "string" ? d : ", \t\r\n" };
}

function stringListMember(args: Value[], caseless: boolean): Value {
  const a = memberArgs(args);
  if (!("delims" in (a as object))) return a as Value;
  const { x: xs, l: ls, delims } = a as { x: string; l: string; delims: string };
  if (xs === "") return false;
  const items = splitStringList(ls, delims);
  return caseless ? items.some((it) => it.toLowerCase() === xs.toLowerCase()) : items.includes(xs);
}

function subsetMatch(args: Value[], caseless: boolean): Value {
  const a = memberArgs(args);
  if (!("delims" in (a as object))) return a as Value;
  const { x, l, delims } = a as { x: string; l: string; delims: string };
  const fold = (s: string) => (caseless ? s.toLowerCase() : s);
  const left = splitStringList(x, delims).map(fold);
  if (left.length === 0) return true;
  const right = new Set(splitStringList(l, delims).map(fold));
  return left.every((item) => right.has(item));
}

function intersect(args: Value[]): Value {
  const bad = strictArgs(args);
  if (bad) return bad;
  const [a, b, d] = args;
  if (typeof a !== "string" || typeof b !== "string" || (d !== undefined && typeof d !== "string")) return ERROR;
  const delims = d === undefined || d === "" ? " ," : d;
  const right = new Set(splitStringList(b, delims));
  return splitStringList(a, delims).some((x) => right.has(x));
}

/**
 * split(s[, seps]) as HTCondor: non-empty runs between separators are items; an empty run
 * between two identical non-space separators is an empty item. Whitespace separators are
 * not remembered, so `"a,b ,c"` gives `{"a","b","","c"}` (the comma before `b` counts).
 */
function split(args: Value[]): Value {
  const [s, d] = args;
  if (typeof s !== "string" || (d !== undefined && typeof d !== "string")) return ERROR;
  const seps = d ?? ", \t";
  const isSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\v" || c === "\f";
  const items: string[] = [];
  let last = 0;
  let prevSep = "";
  for (let i = 0; i < s.length && seps !== ""; i++) {
    const c = s[i]!;
    if (!seps.includes(c)) continue;
    if (i > last) items.push(s.slice(last, i));
    else if (prevSep !== "" && prevSep === c) items.push("");
    if (!isSpace(c)) prevSep = c;
    last = i + 1;
  }
  if (s.length > last) items.push(s.slice(last));
  return new ListValue(items);
}

/** splitUserName / splitSlotName at the first `@`; any non-string (even undefined) is error. */
function splitAt(s: Value, user: boolean): Value {
  if (typeof s !== "string") return ERROR;
  const at = s.indexOf("@");
  if (at < 0) return new ListValue(user ? [s, ""] : ["", s]);
  return new ListValue([s.slice(0, at), s.slice(at + 1)]);
}

/** evalInEachContext / countMatches: evaluate an expression inside each ad of a list. */
function eachContext(args: readonly Compiled[], f: Frame, nodes: readonly Expr[], count: boolean): Value {
  if (nodes.length !== 2) return ERROR;
  const exprNode = derefExpr(nodes[0]!, f);
  const l = args[1]!(f);
  if (isErr(l)) return ERROR;
  if (isUndef(l)) return count ? 0n : UNDEFINED;
  if (!(l instanceof ListValue)) return ERROR;
  const ev = f.run.table as unknown as { evaluateIn(e: Expr, f: Frame): Value };
  const results: Value[] = [];
  let matched = 0n;
  for (const it of l.items) {
    let v: Value;
    if (it instanceof ClassAd) v = ev.evaluateIn(exprNode, new Frame(it, f.my, f.target, f.run));
    else v = isUndef(it) ? UNDEFINED : ERROR;
    if (isTrue(v)) matched++;
    results.push(v);
  }
  return count ? matched : new ListValue(results);
}

/**
 * An attribute-reference argument stands for the expression it names (`Filter`,
 * `MY.Filter`, `TARGET.Filter`); a reference that names nothing is used as is, so
 * `evalInEachContext(Capability, GPUs)` projects an attribute from each ad.
 */
function derefExpr(node: Expr, f: Frame): Expr {
  if (node.type !== "attr") return node;
  if (node.base === null) {
    for (let s = f.scope; s !== null; s = s.parent) {
      const e = s.entry(node.key);
      if (e) return e.expr;
    }
    return f.target?.entry(node.key)?.expr ?? node;
  }
  const b = node.base;
  if (b.type !== "attr" || b.base !== null) return node;
  const ad = b.key === "my" ? f.my : b.key === "target" || b.key === "other" ? f.target : null;
  return ad?.entry(node.key)?.expr ?? node;
}

/**
 * Compiles expression trees to closures `(frame) => Value`. Attribute names are case-folded
 * once at parse time; a closure is cached on its node per function-table version, so an ad
 * is parsed once and evaluated many times without re-walking or re-hashing.
 *
 * Scoping (htcondor.md §8.5): an unscoped name is looked up in the current ad, then each
 * enclosing ad, then (HTCondor's compat alternate scope) the target ad, then the environment
 * (`CurrentTime`). An expression fetched from the target ad runs in the target's scope with
 * MY and TARGET swapped. A self-dependent attribute evaluates to undefined (HEAD behaviour).
 */
import { ClassAd, type AttrEntry } from "./classad.js";
import type { AttrNode, Expr, LiteralNode, RecordNode } from "./expr.js";
import { binaryOp, compare, logicalOperand, arithmetic, unaryOp } from "./operators.js";
import { ERROR, ListValue, UNDEFINED, booleanEquiv, type Value } from "./values.js";

/** Deepest chain of attribute dereferences one evaluation may follow before giving error. */
export const MAX_EVAL_DEPTH = 300;

/**
 * Most attribute dereferences one evaluation may make; later ones give error. Ads whose
 * attributes each use the previous one twice (`a2 = a1 + a1`) need 2^n of them, which would
 * otherwise run for hours; real policy expressions need a few hundred at most.
 */
export const MAX_EVAL_STEPS = 2_000_000;

/** Per-evaluation state shared by every frame of one top-level evaluate call. */
export interface EvalRun {
  readonly table: FunctionTable;
  depth: number;
  /** Attribute dereferences so far (bounded by MAX_EVAL_STEPS). */
  steps: number;
  /** Epoch seconds, read once per run so `time()` and `CurrentTime` agree. */
  now(): number;
  /**
   * Nested ads built from record literals in this run, per literal and scope ad. They live
   * only as long as the run, so a caller that changes a returned ad cannot change what the
   * next evaluation sees, while cycles through a record are still detected within a run.
   */
  records?: Map<RecordNode, Map<ClassAd | null, ClassAd>>;
}

/** Where an expression is being evaluated. */
export class Frame {
  private swappedFrame: Frame | null = null;
  constructor(
    /** The ad whose attributes unscoped names see first (null: no ad). */
    readonly scope: ClassAd | null,
    /** MY: the ad being matched (never falls back). */
    readonly my: ClassAd | null,
    /** TARGET: the other ad in matchmaking, else null. */
    readonly target: ClassAd | null,
    readonly run: EvalRun,
  ) {}

  /** The frame for expressions fetched from the target ad (MY and TARGET swapped). */
  swapped(): Frame {
    return (this.swappedFrame ??= new Frame(this.target, this.target, this.my, this.run));
  }

  /** A frame with the same MY/TARGET and another scope ad. */
  within(scope: ClassAd): Frame {
    if (scope === this.scope) return this;
    if (scope === this.target && this.target !== this.my) return this.swapped();
    return new Frame(scope, this.my, this.target, this.run);
  }
}

export type Compiled = (f: Frame) => Value;

/** A function as the table stores it. Strict ones get values; lazy ones get closures. */
export type FunctionImpl =
  | { readonly lazy: false; readonly fn: (args: Value[], f: Frame) => Value }
  | { readonly lazy: true; readonly fn: (args: readonly Compiled[], f: Frame, nodes: readonly Expr[]) => Value };

/** What the compiler needs from an evaluator: the functions and a cache identity. */
export interface FunctionTable {
  /** Replaced whenever the table changes, invalidating cached closures. */
  readonly version: object;
  get(key: string): FunctionImpl | undefined;
}

/** The cached closure for `e` under `table`, compiling on first use. */
export function compiled(e: Expr, table: FunctionTable): Compiled {
  const c = e.cache;
  if (c !== undefined && c.owner === table.version) return c.fn as Compiled;
  const fn = compileNode(e, table);
  e.cache = { owner: table.version, fn };
  return fn;
}

/** Evaluates an attribute slot in `f`, with cycle, depth and step protection. */
export function evalEntry(e: AttrEntry, f: Frame): Value {
  if (e.active) return UNDEFINED;
  const run = f.run;
  if (run.depth >= MAX_EVAL_DEPTH || ++run.steps > MAX_EVAL_STEPS) return ERROR;
  e.active = true;
  run.depth++;
  try {
    return compiled(e.expr, run.table)(f);
  } finally {
    e.active = false;
    run.depth--;
  }
}

function compileNode(e: Expr, t: FunctionTable): Compiled {
  switch (e.type) {
    case "literal": {
      const v = e.value;
      return () => v;
    }
    case "paren":
      return compiled(e.inner, t);
    case "attr":
      return compileAttr(e, t);
    case "unary": {
      const x = compiled(e.operand, t);
      const op = e.op;
      return (f) => unaryOp(op, x(f));
    }
    case "binary":
      return compileBinary(e.op, compiled(e.left, t), compiled(e.right, t));
    case "ternary":
      return compileTernary(e.cond, e.then, e.else, t);
    case "subscript": {
      const b = compiled(e.base, t);
      const i = compiled(e.index, t);
      return (f) => subscript(b(f), i(f), f);
    }
    case "call":
      return compileCall(e.key, e.args, t);
    case "list": {
      const exprs = e.items;
      // A list of literals needs no evaluation: its values are known once (and immutable).
      if (exprs.every((x) => x.type === "literal")) {
        const values = exprs.map((x) => (x as LiteralNode).value);
        return () => new ListValue(values, exprs);
      }
      const items = exprs.map((x) => compiled(x, t));
      return (f) => ListValue.lazy(exprs, () => items.map((c) => c(f)));
    }
    case "record":
      return compileRecord(e);
  }
}

function compileBinary(op: string, l: Compiled, r: Compiled): Compiled {
  switch (op) {
    case "&&":
      return (f) => and(l, r, f);
    case "||":
      return (f) => or(l, r, f);
    case "==":
    case "!=":
    case "<":
    case "<=":
    case ">":
    case ">=":
      return (f) => compare(op, l(f), r(f));
    case "+":
    case "-":
    case "*":
    case "/":
    case "%":
      return (f) => arithmetic(op, l(f), r(f));
    default:
      return (f) => binaryOp(op as never, l(f), r(f));
  }
}

/** `&&` per the table in §8.4: false wins, then error, then undefined. */
function and(l: Compiled, r: Compiled, f: Frame): Value {
  const a = logicalOperand(l(f));
  if (a === false) return false;
  if (typeof a === "object" && a.kind === "error") return ERROR;
  const b = logicalOperand(r(f));
  if (b === false) return false;
  if (typeof b === "object") return b.kind === "error" ? ERROR : UNDEFINED;
  return a === true ? true : UNDEFINED;
}

/** `||` per the table in §8.4: true wins, then error, then undefined. */
function or(l: Compiled, r: Compiled, f: Frame): Value {
  const a = logicalOperand(l(f));
  if (a === true) return true;
  if (typeof a === "object" && a.kind === "error") return ERROR;
  const b = logicalOperand(r(f));
  if (b === true) return true;
  if (typeof b === "object") return b.kind === "error" ? ERROR : UNDEFINED;
  return a === false ? false : UNDEFINED;
}

function compileTernary(cond: Expr, then: Expr | null, els: Expr, t: FunctionTable): Compiled {
  const c = compiled(cond, t);
  const e = compiled(els, t);
  if (then === null) {
    return (f) => {
      const v = c(f);
      return typeof v === "object" && v.kind === "undefined" ? e(f) : v;
    };
  }
  const th = compiled(then, t);
  return (f) => {
    const v = c(f);
    const b = booleanEquiv(v);
    if (b !== null) return b ? th(f) : e(f);
    return typeof v === "object" && v.kind === "undefined" ? UNDEFINED : ERROR;
  };
}

function subscript(b: Value, i: Value, f: Frame): Value {
  if (typeof b === "object" && b.kind === "error") return ERROR;
  if (typeof i === "object" && i.kind === "error") return ERROR;
  if (typeof b === "object" && b.kind === "undefined") return UNDEFINED;
  if (typeof i === "object" && i.kind === "undefined") return UNDEFINED;
  if (b instanceof ListValue) {
    if (typeof i !== "bigint" || i < 0n || i >= BigInt(b.items.length)) return ERROR;
    return b.items[Number(i)] as Value;
  }
  if (b instanceof ClassAd && typeof i === "string") return lookupIn(b, i.toLowerCase(), f);
  return ERROR;
}

function compileAttr(e: AttrNode, t: FunctionTable): Compiled {
  const key = e.key;
  if (e.base === null) {
    if (e.absolute) return (f) => lookupAbsolute(key, f);
    switch (key) {
      case "my":
        return (f) => f.my ?? UNDEFINED;
      case "target":
      case "other":
        return (f) => f.target ?? UNDEFINED;
      case "parent":
        return (f) => f.scope?.parent ?? UNDEFINED;
    }
    return (f) => lookupUnscoped(key, f);
  }
  const base = e.base;
  if (base.type === "attr" && base.base === null && !base.absolute) {
    switch (base.key) {
      case "my":
        return (f) => lookupIn(f.my, key, f);
      case "target":
      case "other":
        return (f) => (f.target ? lookupIn(f.target, key, f.swapped()) : UNDEFINED);
      case "parent":
        return (f) => lookupIn(f.scope?.parent ?? null, key, f);
    }
  }
  const b = compiled(base, t);
  return (f) => select(b(f), key, f);
}

/** The attribute `key` of `ad` only (no outward search), evaluated in `ad`. */
export function lookupIn(ad: ClassAd | null, key: string, f: Frame): Value {
  if (ad === null) return UNDEFINED;
  const entry = ad.entry(key);
  return entry ? evalEntry(entry, f.within(ad)) : UNDEFINED;
}

/** Unscoped name: scope chain, then the target ad, then the environment. */
export function lookupUnscoped(key: string, f: Frame): Value {
  for (let ad = f.scope; ad !== null; ad = ad.parent) {
    const entry = ad.entry(key);
    if (entry) return evalEntry(entry, f.within(ad));
  }
  const target = f.target;
  if (target !== null && target !== f.scope) {
    const entry = target.entry(key);
    if (entry) return evalEntry(entry, f.swapped());
  }
  if (key === "currenttime") return BigInt(Math.trunc(f.run.now()));
  return UNDEFINED;
}

function lookupAbsolute(key: string, f: Frame): Value {
  let root = f.scope;
  while (root !== null && root.parent !== null) root = root.parent;
  return lookupIn(root, key, f);
}

/** `base.name`: one ad (its own attributes only) or each ad of a list. */
function select(b: Value, key: string, f: Frame): Value {
  if (b instanceof ClassAd) return lookupIn(b, key, f);
  if (b instanceof ListValue) return new ListValue(b.items.map((x) => selectFromElement(x, key, f)));
  if (typeof b === "object" && b.kind === "undefined") return UNDEFINED;
  return ERROR;
}

/** A list element's `.name`: a name missing from the element continues outward. */
function selectFromElement(x: Value, key: string, f: Frame): Value {
  if (!(x instanceof ClassAd)) return typeof x === "object" && x.kind === "undefined" ? UNDEFINED : ERROR;
  for (let ad: ClassAd | null = x; ad !== null; ad = ad.parent) {
    const entry = ad.entry(key);
    if (entry) return evalEntry(entry, f.within(ad));
  }
  return UNDEFINED;
}

function compileCall(key: string, args: readonly Expr[], t: FunctionTable): Compiled {
  const impl = t.get(key);
  if (impl === undefined) return () => ERROR;
  const cs = args.map((a) => compiled(a, t));
  if (impl.lazy) {
    const fn = impl.fn;
    return (f) => fn(cs, f, args);
  }
  const fn = impl.fn;
  switch (cs.length) {
    case 0:
      return (f) => fn([], f);
    case 1: {
      const a0 = cs[0]!;
      return (f) => fn([a0(f)], f);
    }
    case 2: {
      const [a0, a1] = cs as [Compiled, Compiled];
      return (f) => fn([a0(f), a1(f)], f);
    }
    case 3: {
      const [a0, a1, a2] = cs as [Compiled, Compiled, Compiled];
      return (f) => fn([a0(f), a1(f), a2(f)], f);
    }
    default:
      return (f) => fn(cs.map((c) => c(f)), f);
  }
}

/**
 * A record literal evaluates to a nested ad whose parent is the current scope. The ad is
 * reused per scope within one evaluation run, so cycle detection sees the same attribute
 * slots on re-entry; the next run builds new ones (a caller may change what it got back).
 */
function compileRecord(e: RecordNode): Compiled {
  return (f) => {
    const records = (f.run.records ??= new Map());
    let perScope = records.get(e);
    if (perScope === undefined) records.set(e, (perScope = new Map()));
    let ad = perScope.get(f.scope);
    if (ad === undefined) {
      ad = new ClassAd(e.attrs);
      ad.parent = f.scope;
      perScope.set(f.scope, ad);
    }
    return ad;
  };
}

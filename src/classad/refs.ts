/**
 * Which attribute names an expression reads: the input of matchmaking's memo (jobs that
 * agree on every name their match reads match the same slots) and of the analysis.
 */
import type { ClassAd } from "./classad.js";
import type { Expr } from "./expr.js";

/** Adds the lower-cased names `e` references (`x`, `MY.x`, `TARGET.x`: `x`) to `into`. */
export function referencedNames(e: Expr, into: Set<string>): Set<string> {
  if (e.type === "attr") {
    into.add(e.key);
    // `MY.x` / `TARGET.x` read x; `a.x` also reads a (a nested ad).
    if (e.base !== null) referencedNames(e.base, into);
  } else forChildren(e, (c) => referencedNames(c, into));
  return into;
}

/**
 * The names `start` reads, followed through `ad`'s own attributes (an attribute that is an
 * expression adds the names it reads), lower-cased. Bounded by the ad's size.
 */
export function namesReadThrough(ad: ClassAd, start: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const todo = [...start];
  while (todo.length > 0) {
    const name = todo.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const e = ad.lookup(name);
    if (e === undefined || e.type === "literal") continue;
    for (const n of referencedNames(e, new Set())) if (!seen.has(n)) todo.push(n);
  }
  return seen;
}

/**
 * The names of the other ad (TARGET) that `ad`'s attributes `start` may read with `ad` as
 * MY: each `TARGET.x`, and each unscoped `x` that `ad` does not define (the lookup falls
 * through to the target); `MY.x` and unscoped names `ad` defines are followed through its
 * own expressions. Lower-cased. It may name more than is read (a selection on any other
 * base counts its name), never fewer: matchmaking keys jobs by what it returns.
 */
export function targetNamesRead(ad: ClassAd, start: Iterable<string>): Set<string> {
  const out = new Set<string>();
  const followed = new Set<string>();
  const own = (key: string): void => {
    if (followed.has(key)) return;
    followed.add(key);
    const e = ad.lookup(key);
    if (e !== undefined) visit(e);
  };
  const visit = (e: Expr): void => {
    if (e.type === "literal") return;
    if (e.type !== "attr") return forChildren(e, visit);
    const base = e.base;
    if (base === null) {
      if (WHOLE_ADS.has(e.key)) return;
      if (ad.lookup(e.key) !== undefined) own(e.key);
      if (e.absolute || ad.lookup(e.key) === undefined) out.add(e.key);
      return;
    }
    if (base.type === "attr" && base.base === null && !base.absolute && base.key === "my") return own(e.key);
    // TARGET.x, PARENT.x, a.x: counted as read from the target (PARENT and nested ads: over-counted).
    out.add(e.key);
    visit(base);
  };
  for (const name of start) own(name.toLowerCase());
  return out;
}

/** Calls `f` on each direct subexpression of `e`. */
function forChildren(e: Expr, f: (c: Expr) => void): void {
  switch (e.type) {
    case "unary":
      return f(e.operand);
    case "binary":
      f(e.left);
      return f(e.right);
    case "ternary":
      f(e.cond);
      if (e.then) f(e.then);
      return f(e.else);
    case "subscript":
      f(e.base);
      return f(e.index);
    case "paren":
      return f(e.inner);
    case "call":
      return e.args.forEach(f);
    case "list":
      return e.items.forEach(f);
    case "record":
      for (const [, a] of e.attrs) f(a);
      return;
    default:
      return;
  }
}

/** Functions that read attributes named at run time (eval text, other ads' expressions). */
const DYNAMIC_READERS = new Set(["eval", "evalineachcontext", "countmatches"]);

/**
 * Whether every attribute `e` can read is named in it (what `referencedNames` collects):
 * false when it uses a whole ad as a value (a bare `MY`, `TARGET`, `PARENT`, `MY["x"]`)
 * or calls a function that reads names chosen at run time (`eval`, `evalInEachContext`,
 * `countMatches`). An ad restricted to the names read then evaluates `e` as the whole ad.
 */
export function readsOnlyNamed(e: Expr): boolean {
  if (e.type === "attr") {
    if (e.base === null) return e.absolute || !WHOLE_ADS.has(e.key);
    // `MY.x`, `TARGET.x`: the ad is a scope here, not a value.
    if (e.base.type === "attr" && e.base.base === null && !e.base.absolute) return true;
    return readsOnlyNamed(e.base);
  }
  if (e.type === "call" && DYNAMIC_READERS.has(e.key)) return false;
  return !someChild(e, (c) => !readsOnlyNamed(c));
}

/** Names that denote an ad, not an attribute, when unscoped. */
const WHOLE_ADS = new Set(["my", "target", "other", "parent"]);

/** Whether `e` calls the function `key` (lower-cased) anywhere. */
export function callsFunction(e: Expr, key: string): boolean {
  if (e.type === "call" && e.key === key) return true;
  if (e.type === "attr") return e.base !== null && callsFunction(e.base, key);
  return someChild(e, (c) => callsFunction(c, key));
}

/** Whether `p` holds for some direct subexpression of `e`. */
function someChild(e: Expr, p: (c: Expr) => boolean): boolean {
  let found = false;
  forChildren(e, (c) => {
    if (!found && p(c)) found = true;
  });
  return found;
}

/**
 * Which attribute names an expression reads: the input of matchmaking's memo (jobs that
 * agree on every name their match reads match the same slots) and of the analysis.
 */
import type { ClassAd } from "./classad.js";
import type { Expr } from "./expr.js";

/** Adds the lower-cased names `e` references (`x`, `MY.x`, `TARGET.x`: `x`) to `into`. */
export function referencedNames(e: Expr, into: Set<string>): Set<string> {
  switch (e.type) {
    case "literal":
      break;
    case "attr":
      if (e.base === null) into.add(e.key);
      else {
        // `MY.x` / `TARGET.x` read x; `a.x` also reads a (a nested ad).
        into.add(e.key);
        referencedNames(e.base, into);
      }
      break;
    case "unary":
      referencedNames(e.operand, into);
      break;
    case "binary":
      referencedNames(e.left, into);
      referencedNames(e.right, into);
      break;
    case "ternary":
      referencedNames(e.cond, into);
      if (e.then) referencedNames(e.then, into);
      referencedNames(e.else, into);
      break;
    case "subscript":
      referencedNames(e.base, into);
      referencedNames(e.index, into);
      break;
    case "paren":
      referencedNames(e.inner, into);
      break;
    case "call":
      for (const a of e.args) referencedNames(a, into);
      break;
    case "list":
      for (const a of e.items) referencedNames(a, into);
      break;
    case "record":
      for (const [, a] of e.attrs) referencedNames(a, into);
      break;
  }
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

/**
 * Matchmaking (htcondor.md §8.5): A and B match iff A.Requirements is true evaluated with
 * MY=A, TARGET=B and B.Requirements is true with MY=B, TARGET=A. Undefined, error and
 * non-boolean results do not match. Rank is evaluated in the same two-ad context; a
 * non-numeric rank counts as 0.0 and booleans are promoted.
 */
import type { ClassAd } from "./classad.js";
import type { Evaluator } from "./evaluator.js";

/** True iff each ad's Requirements evaluates to boolean true against the other. */
export function matches(ev: Evaluator, a: ClassAd, b: ClassAd): boolean {
  return requirementsHold(ev, a, b) && requirementsHold(ev, b, a);
}

/** True iff `ad`'s Requirements is exactly boolean true with TARGET = `target`. */
export function requirementsHold(ev: Evaluator, ad: ClassAd, target: ClassAd): boolean {
  return ev.evaluateAttr(ad, "Requirements", target) === true;
}

/** A's Rank of B as a real number (non-numeric ⇒ 0.0). */
export function rank(ev: Evaluator, a: ClassAd, b: ClassAd): number {
  const v = ev.evaluateAttr(a, "Rank", b);
  switch (typeof v) {
    case "bigint":
      return Number(v);
    case "number":
      return Number.isNaN(v) ? 0 : v;
    case "boolean":
      return v ? 1 : 0;
    default:
      return 0;
  }
}

/**
 * The builtin-only evaluator used when a caller does not pass its own. It is created sealed
 * (every addFunction throws, whoever calls it), so no caller can change what another
 * caller's expressions mean, and it holds no per-evaluation state: the clock is read afresh
 * for each top-level evaluation and the regexp cache hands out patterns reset to their
 * start. It reads the wall clock; plugins that add functions, and tests that need a
 * simulated clock, create their own `Evaluator` and pass it.
 */
import { Evaluator } from "./evaluator.js";

let shared: Evaluator | null = null;

/** The shared, sealed builtin evaluator (created on first use). */
export function builtinEvaluator(): Evaluator {
  shared ??= new Evaluator({ sealed: true });
  return shared;
}

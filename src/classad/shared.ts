/**
 * The builtin-only evaluator used when a caller does not pass its own. Its function table
 * is sealed (adding a function throws), so no caller can change what another caller's
 * expressions mean; it reads the wall clock. Plugins that add functions, or tests that
 * need a simulated clock, create their own `Evaluator`.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import { Evaluator } from "./evaluator.js";

let shared: Evaluator | null = null;

/** The shared, sealed builtin evaluator (created on first use). */
export function builtinEvaluator(): Evaluator {
  if (shared === null) {
    const ev = new Evaluator();
    const seal = (): never => {
      throw new JobtapError(ErrorCode.INVALID_ARGUMENT, "the shared builtin ClassAd evaluator is read-only; create your own Evaluator");
    };
    ev.addFunction = seal;
    ev.addLazyFunction = seal;
    shared = ev;
  }
  return shared;
}

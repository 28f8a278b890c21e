/** Shared settings of the fuzz tests: JOBTAP_FUZZ_RUNS cases per property, JOBTAP_FUZZ_SEED. */
import { isJobtapError } from "../../src/errors.js";

export const RUNS = Number(process.env.JOBTAP_FUZZ_RUNS ?? 150);
export const SEED = Number(process.env.JOBTAP_FUZZ_SEED ?? 21);

/** Runs fn; a throw must be a JobtapError with one of `codes` and a message. */
export function cleanly(fn: () => unknown, codes: readonly string[]): void {
  try {
    fn();
  } catch (e) {
    if (!isJobtapError(e) || !codes.includes(e.code) || e.message.length === 0) {
      throw new Error(`not a clean coded error (${codes.join("/")}): ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
    }
  }
}


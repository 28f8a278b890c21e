/**
 * The builtin function table of htcondor.md §8.6, installed into each Evaluator instance.
 */
import { registerCore } from "./core.js";
import { registerEnv } from "./env.js";
import { registerLists } from "./lists.js";
import { registerRegex } from "./regex.js";
import { registerStrings } from "./strings.js";
import { registerTime } from "./time.js";
import type { Registry } from "./util.js";

/** Installs every builtin into `r` (an Evaluator under construction). */
export function registerBuiltins(r: Registry): void {
  registerCore(r);
  registerStrings(r);
  registerLists(r);
  registerRegex(r);
  registerTime(r);
  registerEnv(r);
}

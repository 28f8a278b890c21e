/**
 * Running external hook programs (DESIGN.md "One hook runner"; htcondor.md §1, §7.5, §11):
 * the runner with its time limits, output caps and in-flight limit; HTCondor's path-safety
 * checks; the ClassAd text formats hooks read and write. See docs/hooks.md.
 */
export { HookRunner, createHookRunner } from "./runner.js";
export { checkHookPath, HookPathCache, type HookPathCheck } from "./pathcheck.js";
export {
  DEFAULT_OUTPUT_CAP,
  DEFAULT_KILL_GRACE_MS,
  DEFAULT_MAX_IN_FLIGHT,
  DEFAULT_PATH_CHECK_CACHE_MS,
  hookSucceeded,
  describeHookResult,
  type HookSpec,
  type HookResult,
  type HookRan,
  type HookRefused,
  type HookSpawnError,
  type HookCancelled,
  type HookLog,
  type HookRunnerOptions,
  type HookRunAs,
  type HookUsers,
  type HookLauncher,
} from "./types.js";
export { JOB_HOOK_SEPARATOR, ROUTER_HOOK_SEPARATOR, readHookAds, readHookAd, writeHookAds, type HookAd, type FailedLine } from "./adio.js";

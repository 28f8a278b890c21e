/**
 * HTCondor configuration syntax and the job transform language — the pieces the router,
 * cron and fetch plugins share to read an admin's existing HTCondor configuration. What only
 * one of them reads (route tables, cron job tables) lives in that plugin's folder.
 *
 * - `parseCondorConfig(text, opts)` / `readCondorConfigFile(path, opts)` → `CondorConfig`
 *   (`get`, `raw`, `source`, `getBool`, `getNumber`, `getList`, `expand`, `names`).
 * - `parseTransform(text, origin)` → `Transform`; `new TransformRun({ evaluator })` applies
 *   transforms to ClassAds, sharing macros across pre-route → route → post-route.
 */
export { CondorConfig, formatSource } from "./config.js";
export type { ConfigEntry, ConfigSource, CondorConfigOptions } from "./config.js";
export { parseCondorConfig, readCondorConfigFile, INCLUDE_DEPTH_LIMIT } from "./config-reader.js";
export type { ConfigReadOptions } from "./config-reader.js";
export { expandMacros, MACRO_DEPTH_LIMIT } from "./macros.js";
export type { MacroScope, RawMacro, EvaluatedMacro } from "./macros.js";
export { parseTransform, parseUniverse, transformWhere, UNIVERSES } from "./transform.js";
export type { Transform, TransformStep, TransformOrigin, IfBranch, AttrRegex } from "./transform.js";
export { TransformRun, defaultBuiltins } from "./apply.js";
export type { TransformRunOptions, TransformOutcome } from "./apply.js";
export { formatUserLogEvent, appendUserLog } from "./user-log.js";
export type { UserLogEvent, UserLogJob, UserLogUsage } from "./user-log.js";

/**
 * HTCondor configuration syntax and the job transform language — the pieces the router,
 * cron and fetch plugins share to read an admin's existing HTCondor configuration.
 *
 * - `parseCondorConfig(text, opts)` / `readCondorConfigFile(path, opts)` → `CondorConfig`
 *   (`get`, `raw`, `source`, `getBool`, `getNumber`, `getList`, `expand`, `names`).
 * - `parseTransform(text, origin)` → `Transform`; `new TransformRun({ evaluator })` applies
 *   transforms to ClassAds, sharing macros across pre-route → route → post-route.
 * - `readRouterConfig(config)` / `routerConfigFromToml(table, path)` → `RouterConfig`;
 *   `convertOldRouteText(defaults, entries)` for the deprecated ClassAd route syntax.
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
export { buildRouterConfig, ROUTER_DEFAULTS } from "./routes.js";
export type { Route, RouteSettings, RouterConfig, RouterSettings, NamedTransform } from "./routes.js";
export { readRouterConfig, routerSettingsFromConfig, readJobTransforms } from "./router-config.js";
export { routerConfigFromToml } from "./router-toml.js";
export { convertOldRouteText, convertRouteAd } from "./old-routes.js";
export type { ConvertedRoute } from "./old-routes.js";
export { cronTableFromConfig, cronBool, parseCronPeriod, parseCronEnv, splitCronArgs } from "./cron-config.js";
export type { CronTable, CronJobConfig, CronMode, CronPrefix } from "./cron-config.js";

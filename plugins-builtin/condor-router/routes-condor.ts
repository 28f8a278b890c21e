/**
 * The HTCondor-config front end of the route table: JOB_ROUTER_* knobs, route and transform
 * bodies read unexpanded (their macros expand per job), and the deprecated
 * JOB_ROUTER_ENTRIES / JOB_ROUTER_DEFAULTS converted to transforms.
 */
import { ErrorCode, formatSource, JobtapError, parseTransform, type CondorConfig, type ConfigEntry } from "jobtap/plugin";
import { convertOldRoutes } from "./old-routes.js";
import {
  buildRouterConfig,
  type NamedTransform,
  ROUTER_DEFAULTS,
  type RouterConfig,
  type RouterSettings,
  type TransformSource,
} from "./routes.js";

/** Router-wide settings from the JOB_ROUTER_* knobs (defaults of spec §4.2). */
export function routerSettingsFromConfig(config: CondorConfig): RouterSettings {
  const d = ROUTER_DEFAULTS;
  const settings: RouterSettings = {
    defaultMaxJobsPerRoute: config.getNumber("JOB_ROUTER_DEFAULT_MAX_JOBS_PER_ROUTE", d.defaultMaxJobsPerRoute, true),
    defaultMaxIdleJobsPerRoute: config.getNumber(
      "JOB_ROUTER_DEFAULT_MAX_IDLE_JOBS_PER_ROUTE",
      d.defaultMaxIdleJobsPerRoute,
      true,
    ),
    maxJobs: config.getNumber("JOB_ROUTER_MAX_JOBS", d.maxJobs, true),
    pollingPeriod: config.getNumber("JOB_ROUTER_POLLING_PERIOD", d.pollingPeriod),
    roundRobinSelection: config.getBool("JOB_ROUTER_ROUND_ROBIN_SELECTION", d.roundRobinSelection),
    name: config.get("JOB_ROUTER_NAME") ?? d.name,
    releaseOnHold: config.getBool("JOB_ROUTER_RELEASE_ON_HOLD", d.releaseOnHold),
    mirrorUpdateLag: config.getNumber("MAX_JOB_MIRROR_UPDATE_LAG", d.mirrorUpdateLag),
    entriesRefresh: config.getNumber("JOB_ROUTER_ENTRIES_REFRESH", d.entriesRefresh),
  };
  const constraint = config.get("JOB_ROUTER_SOURCE_JOB_CONSTRAINT");
  if (constraint !== undefined) settings.sourceJobConstraint = constraint;
  const keyword = config.get("JOB_ROUTER_HOOK_KEYWORD");
  if (keyword !== undefined) settings.hookKeyword = keyword;
  if (config.has("JOB_ROUTER_SEND_ROUTE_IDTOKENS")) {
    settings.sendRouteIdTokens = config.getList("JOB_ROUTER_SEND_ROUTE_IDTOKENS");
  }
  return settings;
}

/** A knob's raw text as transform source, keeping the file line of every body line. */
function transformSource(entry: ConfigEntry): TransformSource {
  const origin = entry.lines
    ? { file: entry.source.file, lines: entry.lines }
    : { file: entry.source.file, firstLine: entry.source.line };
  return { text: entry.value, origin };
}

/** Collects `<PREFIX><Name>` knobs with a non-blank value, keyed by `<Name>` as spelled. */
function knobsWithPrefix(config: CondorConfig, prefix: string): Map<string, TransformSource> {
  const out = new Map<string, TransformSource>();
  for (const knob of config.names()) {
    if (!knob.toUpperCase().startsWith(prefix)) continue;
    const entry = config.entry(knob)!;
    if (entry.value.trim() === "") continue;
    out.set(knob.slice(prefix.length), transformSource(entry));
  }
  return out;
}

function nameList(config: CondorConfig, knob: string): { names: string[]; where: string } {
  const source = config.source(knob);
  return { names: config.getList(knob), where: source ? `${formatSource(source)}: ${knob}` : knob };
}

/**
 * Reads the route table from an HTCondor configuration. Throws CONDOR_TRANSFORM errors
 * naming the file and line for a bad route, a listed route that is not defined, or a
 * missing pre/post transform. With `skipBadRoutes` a route that does not load is left out
 * with a warning instead (HTCondor's router behaviour). The deprecated JOB_ROUTER_ENTRIES
 * are converted only when JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES is true (HTCondor 25;
 * else a warning), or always with `convertOldRoutes` (the CLI's converter).
 */
export function readRouterConfig(config: CondorConfig, opts: { skipBadRoutes?: boolean; convertOldRoutes?: boolean } = {}): RouterConfig {
  const settings = routerSettingsFromConfig(config);
  const routes = knobsWithPrefix(config, "JOB_ROUTER_ROUTE_");
  routes.delete("NAMES");
  for (const key of [...routes.keys()]) if (key.toUpperCase() === "NAMES") routes.delete(key);
  const warnings: string[] = [];
  let routeNames = config.has("JOB_ROUTER_ROUTE_NAMES") ? nameList(config, "JOB_ROUTER_ROUTE_NAMES") : undefined;
  const hasOld = config.has("JOB_ROUTER_ENTRIES") || config.has("JOB_ROUTER_ENTRIES_FILE");
  if (hasOld && !(opts.convertOldRoutes ?? config.getBool("JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES", false))) {
    const source = config.source("JOB_ROUTER_ENTRIES") ?? config.source("JOB_ROUTER_ENTRIES_FILE");
    warnings.push(
      `${source ? `${formatSource(source)}: ` : ""}JOB_ROUTER_ENTRIES ignored: the deprecated route syntax is used only with ` +
        "JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES = True (as HTCondor 25); `jobtap condor routes --convert-old-routes FILE` prints it in the current syntax",
    );
  } else if (hasOld) {
    const old = convertOldRoutes(config);
    warnings.push(...old.warnings);
    for (const route of old.routes) if (!routes.has(route.name)) routes.set(route.name, route.source);
    // Old configurations enabled every entry; keep that when no explicit order is given.
    routeNames ??= { names: old.routes.map((r) => r.name), where: old.where };
  }
  return buildRouterConfig({
    settings,
    routeNames,
    routes,
    preNames: nameList(config, "JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES"),
    postNames: nameList(config, "JOB_ROUTER_POST_ROUTE_TRANSFORM_NAMES"),
    transforms: knobsWithPrefix(config, "JOB_ROUTER_TRANSFORM_"),
    fallback: config.macroScope("config"),
    warnings,
    skipBadRoutes: opts.skipBadRoutes === true,
  });
}

/**
 * The schedd's submit-time transforms: `JOB_TRANSFORM_NAMES` in order, each defined by
 * `JOB_TRANSFORM_<Name>`. A listed name without a definition is an error naming the line.
 */
export function readJobTransforms(config: CondorConfig): NamedTransform[] {
  const list = nameList(config, "JOB_TRANSFORM_NAMES");
  const all = knobsWithPrefix(config, "JOB_TRANSFORM_");
  const seen = new Set<string>();
  const out: NamedTransform[] = [];
  for (const name of list.names) {
    if (name.toUpperCase() === "NAMES" || seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    const source = [...all].find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
    if (!source) {
      throw new JobtapError(ErrorCode.CONDOR_TRANSFORM, `${list.where}: transform ${name} is listed but never defined`);
    }
    out.push({ name, transform: parseTransform(source.text, source.origin) });
  }
  return out;
}

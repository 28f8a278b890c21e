/**
 * The TOML front end of the route table: a table per route holding its transform text.
 *
 * ```toml
 * source_job_constraint = "WantJobRouter"
 * default_max_idle_jobs_per_route = 10
 * route_names = ["Site1", "Site2"]          # optional: default is the order of [routes]
 * pre_route_transform_names = ["Defaults"]
 * [routes.Site1]
 * transform = '''
 * GridResource = "batch slurm"
 * '''
 * [transforms.Defaults]
 * transform = "DELETE WantJobRouter"
 * ```
 * Errors name the TOML path (`router.routes.Site1.transform:3: ...`).
 */
import { ErrorCode, JobtapError } from "jobtap/plugin";
import { buildRouterConfig, ROUTER_DEFAULTS, type RouterConfig, type RouterSettings, type TransformSource } from "./routes.js";

type Table = Record<string, unknown>;

const SETTING_KEYS: Record<string, { field: keyof RouterSettings; type: "number" | "integer" | "boolean" | "string" | "list" }> = {
  source_job_constraint: { field: "sourceJobConstraint", type: "string" },
  default_max_jobs_per_route: { field: "defaultMaxJobsPerRoute", type: "integer" },
  default_max_idle_jobs_per_route: { field: "defaultMaxIdleJobsPerRoute", type: "integer" },
  max_jobs: { field: "maxJobs", type: "integer" },
  polling_period: { field: "pollingPeriod", type: "number" },
  round_robin_selection: { field: "roundRobinSelection", type: "boolean" },
  name: { field: "name", type: "string" },
  release_on_hold: { field: "releaseOnHold", type: "boolean" },
  max_job_mirror_update_lag: { field: "mirrorUpdateLag", type: "number" },
  entries_refresh: { field: "entriesRefresh", type: "number" },
  hook_keyword: { field: "hookKeyword", type: "string" },
  send_route_idtokens: { field: "sendRouteIdTokens", type: "list" },
};
const OTHER_KEYS = new Set(["route_names", "pre_route_transform_names", "post_route_transform_names", "routes", "transforms"]);

function fail(path: string, problem: string): never {
  throw new JobtapError(ErrorCode.CONFIG, `${path}: ${problem}`, { path });
}

function isTable(v: unknown): v is Table {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function checkType(value: unknown, type: string, path: string): unknown {
  const ok =
    (type === "string" && typeof value === "string") ||
    (type === "boolean" && typeof value === "boolean") ||
    (type === "number" && typeof value === "number") ||
    (type === "integer" && typeof value === "number" && Number.isInteger(value)) ||
    (type === "list" && Array.isArray(value) && value.every((x) => typeof x === "string"));
  if (!ok) fail(path, `expected ${type === "list" ? "an array of strings" : `a ${type}`}, got ${JSON.stringify(value)}`);
  return value;
}

function settingsFromToml(table: Table, path: string): RouterSettings {
  const settings: RouterSettings = { ...ROUTER_DEFAULTS };
  for (const [key, value] of Object.entries(table)) {
    if (OTHER_KEYS.has(key)) continue;
    const spec = SETTING_KEYS[key];
    if (!spec) fail(`${path}.${key}`, `unknown router setting (known: ${[...Object.keys(SETTING_KEYS), ...OTHER_KEYS].join(", ")})`);
    (settings as unknown as Table)[spec.field] = checkType(value, spec.type, `${path}.${key}`);
  }
  return settings;
}

/** `[routes.X] transform = "..."` tables → transform sources labelled by their TOML path. */
function transformTables(value: unknown, path: string): Map<string, TransformSource> {
  const out = new Map<string, TransformSource>();
  if (value === undefined) return out;
  if (!isTable(value)) fail(path, "expected a table of named tables");
  for (const [name, entry] of Object.entries(value)) {
    const here = `${path}.${name}`;
    if (!isTable(entry)) fail(here, "expected a table with a transform key");
    for (const key of Object.keys(entry)) if (key !== "transform") fail(`${here}.${key}`, `unknown key (expected "transform")`);
    const text = checkType(entry.transform, "string", `${here}.transform`) as string;
    out.set(name, { text, origin: { file: `${here}.transform` } });
  }
  return out;
}

function names(table: Table, key: string, path: string): { names: string[]; where: string } | undefined {
  if (table[key] === undefined) return undefined;
  return { names: checkType(table[key], "list", `${path}.${key}`) as string[], where: `${path}.${key}` };
}

/**
 * Builds the route table from a parsed TOML table (`path` names it in errors). Produces the
 * same RouterConfig as the HTCondor config form; TOML shape errors are CONFIG errors, bad
 * transform text is a CONDOR_TRANSFORM error naming `<path>.routes.<name>.transform:<line>`
 * (with `skipBadRoutes`: a warning, and the route is left out).
 */
export function routerConfigFromToml(table: unknown, path = "router", opts: { skipBadRoutes?: boolean } = {}): RouterConfig {
  if (!isTable(table)) fail(path, "expected a table");
  const routes = transformTables(table.routes, `${path}.routes`);
  return buildRouterConfig({
    settings: settingsFromToml(table, path),
    routeNames: names(table, "route_names", path) ?? { names: [...routes.keys()], where: `${path}.routes` },
    routes,
    preNames: names(table, "pre_route_transform_names", path) ?? { names: [], where: path },
    postNames: names(table, "post_route_transform_names", path) ?? { names: [], where: path },
    transforms: transformTables(table.transforms, `${path}.transforms`),
    warnings: [],
    skipBadRoutes: opts.skipBadRoutes === true,
  });
}

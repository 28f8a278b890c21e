/**
 * Job router route tables (spec §4.2, §4.3): routes and pre/post-route transforms written
 * in the transform language, with the special route macros turned into typed settings.
 *
 * Two front ends feed one builder: an HTCondor config (router-config.ts) and jobtap's TOML
 * (router-toml.ts). Both hand over the same `RouterInput`, so both yield identical routes.
 */
import { ErrorCode, expandMacros, JobtapError, parseTransform, transformWhere, type MacroScope, type Transform, type TransformOrigin } from "jobtap/plugin";

/** Router-wide settings (HTCondor's JOB_ROUTER_* knobs), with HTCondor's defaults. */
export interface RouterSettings {
  sourceJobConstraint?: string;
  defaultMaxJobsPerRoute: number;
  defaultMaxIdleJobsPerRoute: number;
  /** Cap on managed jobs over all routes; < 0 = unlimited. */
  maxJobs: number;
  /** Seconds between polls. */
  pollingPeriod: number;
  roundRobinSelection: boolean;
  /** Written into RoutedBy / ManagedManager. */
  name: string;
  releaseOnHold: boolean;
  /** Seconds (MAX_JOB_MIRROR_UPDATE_LAG). */
  mirrorUpdateLag: number;
  /** Seconds between re-reads of the route table; 0 = never. */
  entriesRefresh: number;
  hookKeyword?: string;
  sendRouteIdTokens?: string[];
}

/** The defaults of spec §4.2. */
export const ROUTER_DEFAULTS: Readonly<RouterSettings> = Object.freeze({
  defaultMaxJobsPerRoute: 100,
  defaultMaxIdleJobsPerRoute: 50,
  maxJobs: -1,
  pollingPeriod: 10,
  roundRobinSelection: false,
  name: "jobrouter",
  releaseOnHold: true,
  mirrorUpdateLag: 600,
  entriesRefresh: 0,
});

/** The special route macros, typed. Boolean ones stay expressions: they are evaluated per job. */
export interface RouteSettings {
  maxJobs: number;
  /** -1 disables the idle check. */
  maxIdleJobs: number;
  /** Jobs per second. */
  failureRateThreshold: number;
  /** Expression over the original job after completion; true ⇒ failure. */
  jobFailureTest?: string;
  jobShouldBeSandboxed?: string;
  editJobInPlace?: string;
  useSharedX509UserProxy?: string;
  sharedX509UserProxy?: string;
  /** Declared but empty ⇒ []; absent ⇒ undefined (use the router-wide list). */
  sendIdTokens?: string[];
  /** UNIVERSE command, else the TargetUniverse macro, else 9 (grid). */
  targetUniverse: number;
  /** Quotes stripped. */
  gridResource?: string;
}

/** One route: its name, its transform and its settings. */
export interface Route {
  name: string;
  transform: Transform;
  settings: RouteSettings;
}

/** A named pre- or post-route transform. */
export interface NamedTransform {
  name: string;
  transform: Transform;
}

/** A parsed router configuration. */
export interface RouterConfig {
  settings: RouterSettings;
  /** Enabled routes in priority order. */
  routes: Route[];
  preRouteTransforms: NamedTransform[];
  postRouteTransforms: NamedTransform[];
  /** Things an admin should know (routing disabled, deprecated syntax converted, ...). */
  warnings: string[];
}

/** Transform text with its origin, as a front end found it. */
export interface TransformSource {
  text: string;
  origin: TransformOrigin;
}

/** What a front end hands to `buildRouterConfig`. */
export interface RouterInput {
  settings: RouterSettings;
  /** Route order; `where` labels the list in errors. */
  routeNames: { names: string[]; where: string } | undefined;
  routes: Map<string, TransformSource>;
  preNames: { names: string[]; where: string };
  postNames: { names: string[]; where: string };
  transforms: Map<string, TransformSource>;
  /** Macro fallback for route macro values (the daemon configuration), if any. */
  fallback?: MacroScope;
  warnings: string[];
  /**
   * A route that does not load is left out with a warning naming it and its line, as
   * HTCondor's router ignores it, instead of failing the whole table (default false).
   */
  skipBadRoutes?: boolean;
}

function fail(where: string, problem: string): never {
  throw new JobtapError(ErrorCode.CONDOR_TRANSFORM, `${where}: ${problem}`, { where });
}

/** Case-insensitive map lookup (route and transform names are knob suffixes). */
function findNamed<T>(map: Map<string, T>, name: string): T | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of map) if (k.toLowerCase() === lower) return v;
  return undefined;
}

/** Builds the route table; throws CONDOR_TRANSFORM errors naming the file and line. */
export function buildRouterConfig(input: RouterInput): RouterConfig {
  const warnings = [...input.warnings];
  const names = input.routeNames?.names ?? [];
  if (input.routeNames === undefined) warnings.push("JOB_ROUTER_ROUTE_NAMES is not set: routing is disabled");
  const routes: Route[] = [];
  for (const name of dedupe(names)) {
    if (name.toUpperCase() === "NAMES") continue;
    const source = findNamed(input.routes, name);
    if (!source) fail(input.routeNames!.where, `route ${name} is listed but never defined`);
    if (!input.skipBadRoutes) {
      routes.push(buildRoute(name, source, input));
      continue;
    }
    try {
      routes.push(buildRoute(name, source, input));
    } catch (e) {
      warnings.push(`route ${name} ignored: ${(e as Error).message}`);
    }
  }
  const unhonoured = unhonouredWarning(routes, input.settings);
  if (unhonoured !== undefined) warnings.push(unhonoured);
  return {
    settings: input.settings,
    routes,
    preRouteTransforms: namedTransforms(input.preNames, input.transforms),
    postRouteTransforms: namedTransforms(input.postNames, input.transforms),
    warnings,
  };
}

/** Route attributes jobtap reads but cannot act on (no IDTOKENS, X.509 proxies or spool sandbox), and the settings that hold them. */
const UNHONOURED: ReadonlyArray<[string, keyof RouteSettings]> = [
  ["SendIDTokens", "sendIdTokens"],
  ["UseSharedX509UserProxy", "useSharedX509UserProxy"],
  ["SharedX509UserProxy", "sharedX509UserProxy"],
  ["JobShouldBeSandboxed", "jobShouldBeSandboxed"],
];

/**
 * One warning naming every route attribute (and JOB_ROUTER_SEND_ROUTE_IDTOKENS) the table
 * sets that jobtap parses but does not honour, with the routes that set it; undefined if none.
 */
function unhonouredWarning(routes: readonly Route[], settings: RouterSettings): string | undefined {
  const found: string[] = [];
  for (const [attr, key] of UNHONOURED) {
    const names = routes.filter((r) => r.settings[key] !== undefined).map((r) => r.name);
    if (names.length > 0) found.push(`${attr} (route${names.length > 1 ? "s" : ""} ${names.join(", ")})`);
  }
  if (settings.sendRouteIdTokens !== undefined && settings.sendRouteIdTokens.length > 0) found.push("JOB_ROUTER_SEND_ROUTE_IDTOKENS");
  if (found.length === 0) return undefined;
  return `parsed but not honoured by jobtap (no IDTOKENS, X.509 proxies or spool sandbox; routed copies run without them): ${found.join("; ")}`;
}

function dedupe(names: string[]): string[] {
  const seen = new Set<string>();
  return names.filter((n) => !seen.has(n.toLowerCase()) && seen.add(n.toLowerCase()));
}

function namedTransforms(list: { names: string[]; where: string }, all: Map<string, TransformSource>): NamedTransform[] {
  return dedupe(list.names).map((name) => {
    const source = findNamed(all, name);
    if (!source) fail(list.where, `transform ${name} is listed but never defined`);
    return { name, transform: parseTransform(source.text, source.origin) };
  });
}

/** Parses one route and checks it can never match everything by accident. */
export function buildRoute(name: string, source: TransformSource, input: Pick<RouterInput, "settings" | "fallback">): Route {
  const transform = parseTransform(source.text, source.origin);
  if (transform.requirements === undefined && input.settings.sourceJobConstraint === undefined) {
    fail(transformWhere(source.origin, 1), `route ${name} has no REQUIREMENTS and there is no JOB_ROUTER_SOURCE_JOB_CONSTRAINT`);
  }
  return { name, transform, settings: routeSettings(transform, input) };
}

/** Reads the special route macros into typed settings (spec §4.3). */
export function routeSettings(transform: Transform, input: Pick<RouterInput, "settings" | "fallback">): RouteSettings {
  const macros = new RouteMacros(transform, input.fallback);
  const settings: RouteSettings = {
    maxJobs: macros.number("MaxJobs", input.settings.defaultMaxJobsPerRoute, true),
    maxIdleJobs: macros.number("MaxIdleJobs", input.settings.defaultMaxIdleJobsPerRoute, true),
    failureRateThreshold: macros.number("FailureRateThreshold", 0.03, false),
    targetUniverse: transform.universe ?? macros.number("TargetUniverse", 9, true),
  };
  const expressions = ["JobFailureTest", "JobShouldBeSandboxed", "EditJobInPlace", "UseSharedX509UserProxy"] as const;
  for (const key of expressions) {
    const v = macros.nonEmpty(key);
    if (v !== undefined) settings[(key[0]!.toLowerCase() + key.slice(1)) as "jobFailureTest"] = v;
  }
  const grid = macros.nonEmpty("GridResource");
  if (grid !== undefined) settings.gridResource = unquote(grid);
  const proxy = macros.nonEmpty("SharedX509UserProxy");
  if (proxy !== undefined) settings.sharedX509UserProxy = unquote(proxy);
  const tokens = macros.text("SendIDTokens");
  if (tokens !== undefined) settings.sendIdTokens = splitList(unquote(tokens.value));
  return settings;
}

/** A route's top-level `name = value` lines (the last one wins), expanded on request. */
class RouteMacros {
  private readonly macros = new Map<string, { value: string; line: number }>();
  private readonly scope: MacroScope;

  constructor(private readonly transform: Transform, fallback: MacroScope | undefined) {
    for (const step of transform.steps) {
      if (step.op !== "macro") continue;
      const key = step.name.toLowerCase();
      const old = this.macros.get(key)?.value ?? "";
      const value = step.append && old !== "" ? `${old} ${step.value}` : step.value;
      this.macros.set(key, { value, line: step.line });
    }
    this.scope = {
      lookup: (n) => {
        const local = this.macros.get(n.toLowerCase());
        return local ? { value: local.value } : fallback?.lookup(n);
      },
      env: fallback?.env ?? {},
      code: ErrorCode.CONDOR_TRANSFORM,
      where: transform.origin.file,
    };
  }

  /** The expanded value of macro `key` and where it was set, if it was. */
  text(key: string): { value: string; where: string } | undefined {
    const m = this.macros.get(key.toLowerCase());
    if (!m) return undefined;
    const where = transformWhere(this.transform.origin, m.line);
    return { value: expandMacros(m.value, { ...this.scope, where }, [key]).trim(), where };
  }

  /** The expanded value, or undefined when unset or empty. */
  nonEmpty(key: string): string | undefined {
    const v = this.text(key)?.value;
    return v === undefined || v === "" ? undefined : v;
  }

  /** A numeric macro; a value that is not a number is an error naming its line. */
  number(key: string, fallback: number, integer: boolean): number {
    const t = this.text(key);
    if (t === undefined || t.value === "") return fallback;
    const n = Number(t.value);
    if (!Number.isFinite(n) || (integer && !Number.isInteger(n))) {
      fail(t.where, `${key} = ${t.value} is not ${integer ? "an integer" : "a number"}`);
    }
    return n;
  }
}

/** Strips one pair of surrounding double quotes. */
export function unquote(s: string): string {
  const t = s.trim();
  return t.length >= 2 && t.startsWith('"') && t.endsWith('"') ? t.slice(1, -1) : t;
}

/** Splits an HTCondor list (commas and/or whitespace). */
export function splitList(s: string): string[] {
  return s.split(/[\s,]+/).filter((x) => x !== "");
}

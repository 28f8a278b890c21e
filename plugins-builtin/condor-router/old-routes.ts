/**
 * The deprecated ClassAd route syntax (JOB_ROUTER_DEFAULTS + JOB_ROUTER_ENTRIES, spec §4.12)
 * converted to transform text the way HTCondor's own converter does: NAME, UNIVERSE,
 * REQUIREMENTS (flattened, TARGET. removed), the other attributes as route macros, then
 * COPY, DELETE, SET and EVALSET groups, each sorted by attribute name.
 */
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { attrRef, ClassAd, ErrorCode, formatSource, JobtapError, parseNewAd, unparse, type ClassAdExpr as Expr, type CondorConfig } from "jobtap/plugin";
import type { TransformSource } from "./routes.js";

/** One converted route: its name and its transform text. */
export interface ConvertedRoute {
  name: string;
  text: string;
}

/** Route attributes that are flattened with TARGET. rewritten to MY. (per-job expressions). */
const FLATTEN_TO_MY = new Set(
  ["FailureRateThreshold", "JobFailureTest", "JobShouldBeSandboxed", "EditJobInPlace", "UseSharedX509UserProxy", "SharedX509UserProxy", "OverrideRoutingEntry"].map((s) => s.toLowerCase()),
);
const HANDLED = new Set(["name", "targetuniverse", "requirements"]);
const GROUPS = ["copy_", "delete_", "set_", "eval_set_"] as const;

function fail(where: string, problem: string): never {
  throw new JobtapError(ErrorCode.CONDOR_CONFIG, `${where}: ${problem}`, { where });
}

/** Index just past the `]` closing the `[` at `open` (strings and comments skipped), or -1. */
function closingBracket(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"' || ch === "'") {
      for (i++; i < text.length && text[i] !== ch; i++) if (text[i] === "\\") i++;
    } else if (ch === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (ch === "/" && text[i + 1] === "*") {
      const close = text.indexOf("*/", i + 2);
      i = close < 0 ? text.length : close + 1;
    } else if (ch === "[") depth++;
    else if (ch === "]" && --depth === 0) return i + 1;
  }
  return -1;
}

/** Splits `[..] [..]` (commas, whitespace and comments between) into ads. */
export function splitRouteAds(text: string, where: string): ClassAd[] {
  const ads: ClassAd[] = [];
  let rest = text;
  for (;;) {
    rest = rest.replace(/^(\s|,|\/\/[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)+/, "");
    if (rest === "") return ads;
    const n = ads.length + 1;
    if (!rest.startsWith("[")) fail(where, `route entry ${n} does not start with [`);
    const end = closingBracket(rest, 0);
    if (end < 0) fail(where, `route entry ${n} has no closing ]`);
    try {
      ads.push(parseNewAd(rest.slice(0, end)));
    } catch (e) {
      fail(where, `route entry ${n} does not parse: ${(e as Error).message}`);
    }
    rest = rest.slice(end);
  }
}

function isTargetRef(e: Expr): boolean {
  return e.type === "attr" && e.base === null && !e.absolute && e.key === "target";
}

/**
 * Inlines references to the route's own attributes (unscoped or `MY.`) and rewrites `TARGET.x` to `x`
 * (`toMy` false) or `MY.x` (`toMy` true): what HTCondor's flatten does for the converter.
 */
export function flattenAgainstRoute(e: Expr, route: ClassAd, toMy: boolean, seen: ReadonlySet<string> = new Set()): Expr {
  const again = (x: Expr): Expr => flattenAgainstRoute(x, route, toMy, seen);
  switch (e.type) {
    case "literal":
      return e;
    case "attr": {
      if (e.base !== null && isTargetRef(e.base)) return toMy ? attrRef(e.name, attrRef("MY")) : attrRef(e.name);
      const isMy = e.base !== null && e.base.type === "attr" && e.base.base === null && e.base.key === "my";
      if (e.base !== null && !isMy) return { ...e, base: again(e.base) };
      const own = route.lookup(e.name);
      if (e.absolute || own === undefined || seen.has(e.key)) return e;
      const inlined = flattenAgainstRoute(own, route, toMy, new Set([...seen, e.key]));
      return inlined.type === "literal" || inlined.type === "attr" ? inlined : { type: "paren", inner: inlined };
    }
    case "unary":
      return { ...e, operand: again(e.operand) };
    case "binary":
      return { ...e, left: again(e.left), right: again(e.right) };
    case "ternary":
      return { ...e, cond: again(e.cond), then: e.then && again(e.then), else: again(e.else) };
    case "subscript":
      return { ...e, base: again(e.base), index: again(e.index) };
    case "paren":
      return { ...e, inner: again(e.inner) };
    case "call":
      return { ...e, args: e.args.map(again) };
    case "list":
      return { ...e, items: e.items.map(again) };
    case "record":
      return e;
  }
}

function stringOf(e: Expr | undefined): string | undefined {
  if (e === undefined) return undefined;
  return e.type === "literal" && typeof e.value === "string" ? e.value : unparse(e, true);
}

function byName(a: [string, Expr], b: [string, Expr]): number {
  return a[0].toLowerCase() < b[0].toLowerCase() ? -1 : a[0].toLowerCase() > b[0].toLowerCase() ? 1 : 0;
}

/** Converts one merged route ad into transform text. */
export function convertRouteAd(route: ClassAd, name: string): string {
  const lines = [`# autoconversion of route '${name}' from old route syntax`, `NAME ${name}`];
  const universe = route.lookup("TargetUniverse");
  if (universe) lines.push(`UNIVERSE ${unparse(universe, true)}`);
  const req = route.lookup("Requirements");
  if (req) lines.push(`REQUIREMENTS ${unparse(flattenAgainstRoute(req, route, false, new Set(["requirements"])), true)}`);
  const groups = new Map<string, [string, Expr][]>(GROUPS.map((g) => [g, []]));
  const macros: [string, Expr][] = [];
  for (const [attr, expr] of route.attributes()) {
    const lower = attr.toLowerCase();
    const group = [...GROUPS].reverse().find((g) => lower.startsWith(g));
    if (group) groups.get(group)!.push([attr.slice(group.length), expr]);
    else if (!HANDLED.has(lower)) macros.push([attr, expr]);
  }
  for (const [attr, expr] of macros.sort(byName)) {
    const lower = attr.toLowerCase();
    if (FLATTEN_TO_MY.has(lower)) lines.push(`${attr} = ${unparse(flattenAgainstRoute(expr, route, true), true)}`);
    else if (lower === "gridresource") lines.push(`${attr} = ${unparse(expr, true)}`);
    else lines.push(`${attr} = ${stringOf(expr)}`);
  }
  for (const [attr, expr] of groups.get("copy_")!.sort(byName)) lines.push(`COPY ${attr} ${stringOf(expr)}`);
  for (const [attr] of groups.get("delete_")!.sort(byName)) lines.push(`DELETE ${attr}`);
  for (const [attr, expr] of groups.get("set_")!.sort(byName)) lines.push(`SET ${attr} ${unparse(expr, true)}`);
  for (const [attr, expr] of groups.get("eval_set_")!.sort(byName)) {
    lines.push(`EVALSET ${attr} ${unparse(flattenAgainstRoute(expr, route, true), true)}`);
  }
  return lines.join("\n") + "\n";
}

/**
 * Converts JOB_ROUTER_DEFAULTS + JOB_ROUTER_ENTRIES text into routes (entry wins over the
 * defaults; a later entry of the same name replaces an earlier one unless it says
 * `OverrideRoutingEntry = false`).
 */
export function convertOldRouteText(defaultsText: string | undefined, entriesText: string, where = "JOB_ROUTER_ENTRIES"): ConvertedRoute[] {
  let defaults = new ClassAd();
  if (defaultsText !== undefined && defaultsText.trim() !== "") {
    const text = defaultsText.trim().startsWith("[") ? defaultsText : `[${defaultsText}]`;
    try {
      defaults = parseNewAd(text);
    } catch (e) {
      fail(where, `JOB_ROUTER_DEFAULTS does not parse: ${(e as Error).message}`);
    }
  }
  const routes = new Map<string, ConvertedRoute>();
  for (const entry of splitRouteAds(entriesText, where)) {
    const route = defaults.clone().update(entry);
    const name = stringOf(route.lookup("Name")) ?? stringOf(route.lookup("GridResource"));
    if (name === undefined || name === "") fail(where, `a route entry has neither Name nor GridResource`);
    const override = route.lookup("OverrideRoutingEntry");
    const keepOld = override?.type === "literal" && override.value === false;
    if (routes.has(name.toLowerCase()) && keepOld) continue;
    routes.delete(name.toLowerCase());
    routes.set(name.toLowerCase(), { name, text: convertRouteAd(route, name) });
  }
  return [...routes.values()];
}

/** JOB_ROUTER_ENTRIES_FILE, relative to the folder of the file that set it (as `include`). */
function readEntriesFile(config: CondorConfig, file: string): string {
  const source = config.source("JOB_ROUTER_ENTRIES_FILE");
  const path = source && !isAbsolute(file) ? resolve(dirname(source.file), file) : file;
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    const where = source ? `${formatSource(source)}: JOB_ROUTER_ENTRIES_FILE` : "JOB_ROUTER_ENTRIES_FILE";
    return fail(where, `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** Reads and converts the old-syntax knobs of `config` (JOB_ROUTER_ENTRIES[_FILE], _DEFAULTS). */
export function convertOldRoutes(config: CondorConfig): {
  routes: { name: string; source: TransformSource }[];
  warnings: string[];
  where: string;
} {
  const source = config.source("JOB_ROUTER_ENTRIES");
  const where = source ? `${formatSource(source)}: JOB_ROUTER_ENTRIES` : "JOB_ROUTER_ENTRIES";
  let entries = config.get("JOB_ROUTER_ENTRIES") ?? "";
  const file = config.get("JOB_ROUTER_ENTRIES_FILE");
  if (file !== undefined) entries += "\n" + readEntriesFile(config, file);
  const warnings = [`${where}: deprecated ClassAd route syntax converted to transforms`];
  if (config.has("JOB_ROUTER_ENTRIES_CMD")) warnings.push("JOB_ROUTER_ENTRIES_CMD is not supported (ignored)");
  const converted = convertOldRouteText(config.get("JOB_ROUTER_DEFAULTS"), entries, where);
  return {
    routes: converted.map((r) => ({ name: r.name, source: { text: r.text, origin: { file: `${where} route ${r.name} (converted)` } } })),
    warnings,
    where,
  };
}

/**
 * Finding and importing plugin modules (spec flux-jobtap §7.1, §7.2).
 *
 * Resolution: a dot-name without `/` is a builtin (table lookup, a miss is an error); an
 * absolute path or one starting with `./` or `../` is used as is; any other name is tried in
 * each directory of the search path in order (as given, then with .js, .mjs, .ts appended),
 * and finally in the table of plugins shipped with jobtap but not loaded by default
 * (alloc-bypass, perilog: Flux finds their .so files in its default plugin path).
 * A `.ts`/`.mts` file is transpiled on load with typescript.transpileModule, so plugin
 * authors need no build step.
 */
import { register } from "node:module";
import { existsSync, statSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ErrorCode, JobtapError, isJobtapError } from "../errors.js";
import type { BuiltinEntry, ShippedEntry } from "./builtins.js";
import type { PluginContext } from "./context.js";

/** A plugin's setup function. */
export type PluginSetup = (p: PluginContext) => void | Promise<void>;

/** What a plugin module's default export may be. */
export type PluginDefinition = PluginSetup | { name?: string; setup: PluginSetup };

/**
 * A plugin's configuration check, exported by its module as `checkConfig`: every problem its
 * `conf.update` would refuse in this whole instance configuration, found without loading
 * the plugin. The daemon and `jobtap config check` run the builtins' and the listed
 * shipped plugins' checks before anything starts.
 */
export type ConfigCheck = (config: Record<string, unknown>) => string[];

/** A plugin module as imported. */
export interface PluginModule {
  default?: unknown;
  checkConfig?: ConfigCheck;
}

/** Where a plugin comes from, after resolution. */
export type PluginSource =
  | { kind: "builtin"; name: string; entry: BuiltinEntry }
  | { kind: "shipped"; name: string; entry: ShippedEntry }
  | { kind: "file"; path: string };

const EXTENSIONS = ["", ".js", ".mjs", ".ts"];

/** Resolves a load argument to a builtin entry, an absolute file path or a shipped entry. */
export function resolvePlugin(
  nameOrPath: string,
  builtins: readonly BuiltinEntry[],
  searchPath: readonly string[],
  shipped: readonly ShippedEntry[],
): PluginSource {
  if (nameOrPath.length === 0) {
    throw new JobtapError(ErrorCode.INVALID_ARGUMENT, "plugin name must not be empty");
  }
  if (nameOrPath.startsWith(".") && !nameOrPath.includes("/")) {
    const entry = builtins.find((b) => b.name === nameOrPath);
    if (entry === undefined) {
      throw new JobtapError(ErrorCode.PLUGIN_NOT_FOUND, `${nameOrPath}: no such builtin plugin`);
    }
    return { kind: "builtin", name: entry.name, entry };
  }
  const isPath = isAbsolute(nameOrPath) || /^\.\.?\//.test(nameOrPath);
  const dirs = isPath || searchPath.length === 0 ? [""] : searchPath;
  for (const dir of dirs) {
    const found = withExtension(resolve(dir, nameOrPath));
    if (found !== undefined) return { kind: "file", path: found };
  }
  const entry = isPath ? undefined : shipped.find((s) => s.name === nameOrPath);
  if (entry !== undefined) return { kind: "shipped", name: entry.name, entry };
  throw new JobtapError(ErrorCode.PLUGIN_NOT_FOUND, `${nameOrPath}: No such plugin found`);
}

function withExtension(base: string): string | undefined {
  for (const ext of EXTENSIONS) {
    const p = base + ext;
    if (existsSync(p) && statSync(p).isFile()) return p;
  }
  return undefined;
}

/** The list name of a file plugin until its module says otherwise: its basename, as Flux lists `args.so`. */
export function fileListName(path: string): string {
  return basename(path);
}

/**
 * The list name of a loaded file plugin: the `name` its module exports (`{ name, setup }`),
 * else `listName` (its file's basename), as a Flux plugin that sets its own name is listed,
 * removed and queried by it. A dot-name (the builtins') and `all` (remove's word for every
 * plugin) cannot be exported; nor a `/`.
 */
export function ownListName(listName: string, own: string | undefined, where: string): string {
  if (own === undefined) return listName;
  if (own === "" || own.includes("/") || own.startsWith(".") || own === "all") {
    throw badShape(where, `exported name ${JSON.stringify(own)} is not a plugin name (non-empty, no "/", not starting with ".", not "all")`);
  }
  return own;
}

/** Flux's internal name: the plugin's own name if it has no `/` or `.`, else the basename
 *  cut at its first `.`. Used as the service namespace. */
export function internalName(listName: string, own: string | undefined): string {
  if (own !== undefined && own.length > 0 && !/[./]/.test(own)) return own;
  const base = listName.startsWith(".") ? listName.slice(1) : listName;
  return base.split(".")[0] ?? base;
}

/** Imports a plugin module; every import of a file is fresh (a reload gets new state). */
export async function importPlugin(source: PluginSource, seq: number): Promise<PluginModule> {
  if (source.kind !== "file") return source.entry.load();
  const path = source.path;
  registerApiResolution();
  try {
    if (/\.m?ts$/.test(path)) return await importCode(path, await transpile(path), seq);
    const code = readFileSync(path, "utf8");
    // With the resolution hooks a JS plugin is imported in place (its relative imports and
    // its own helpers' `jobtap/plugin` imports resolve); without them, rewritten.
    if (apiResolution !== "registered" && API_SPECIFIER.test(code)) return await importCode(path, code, seq);
    return (await import(`${pathToFileURL(path).href}?jobtap-load=${seq}`)) as PluginModule;
  } catch (e) {
    if (isJobtapError(e)) throw e;
    const why = e instanceof Error ? e.message : String(e);
    const at = (e as Error | undefined)?.name === "SyntaxError" ? await syntaxErrorAt(path) : undefined;
    throw new JobtapError(ErrorCode.PLUGIN_LOAD, `${at ?? path}: ${why}`, { path });
  }
}

/**
 * `FILE:LINE:COL` of the first syntax error in a JS plugin, or undefined. Node's SyntaxError
 * from import() carries no position (only its printed stack shows one), so the source is
 * parsed again with TypeScript's parser (a dependency already, loaded only on this path),
 * which puts the error where V8 does for the common cases (an unexpected token, an
 * unterminated string or block).
 */
async function syntaxErrorAt(path: string): Promise<string | undefined> {
  try {
    const ts = (await import("typescript")).default;
    const out = ts.transpileModule(readFileSync(path, "utf8"), {
      fileName: path,
      reportDiagnostics: true,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, allowJs: true },
    });
    const diag = out.diagnostics?.[0];
    if (diag?.file === undefined || diag.start === undefined) return undefined;
    const pos = diag.file.getLineAndCharacterOfPosition(diag.start);
    return `${path}:${pos.line + 1}:${pos.character + 1}`;
  } catch {
    return undefined;
  }
}

/** The file URL of one of this host's API modules: `plugin` (`jobtap/plugin`), `index` (`jobtap`). */
function apiUrl(module: "plugin" | "index"): string {
  const js = fileURLToPath(new URL(`../${module}.js`, import.meta.url));
  const ts = fileURLToPath(new URL(`../${module}.ts`, import.meta.url));
  return pathToFileURL(existsSync(js) ? js : ts).href;
}

/** A quoted `jobtap` or `jobtap/plugin` specifier. */
const API_SPECIFIER = /(["'])jobtap(\/plugin)?\1/;

/** Set once the resolution hooks are registered: they are process-wide, like Node's loader. */
let apiResolution: "registered" | "unavailable" | undefined;

/**
 * Registers resolve-hooks.ts with Node (`module.register`, Node >= 20.6) so that `jobtap`
 * and `jobtap/plugin` resolve to this installation from every module a plugin imports,
 * wherever it lives. Only from the compiled package (the daemon): Node cannot load the
 * TypeScript sources the tests run, where the text rewrite below covers the plugin file.
 */
function registerApiResolution(): void {
  if (apiResolution !== undefined) return;
  apiResolution = "unavailable";
  const hooks = new URL("./resolve-hooks.js", import.meta.url);
  if (typeof register !== "function" || !existsSync(fileURLToPath(hooks))) return;
  register(hooks.href, { data: { index: apiUrl("index"), plugin: apiUrl("plugin") } });
  apiResolution = "registered";
}

/**
 * Points every `"jobtap/plugin"` specifier at `pluginUrl` (and `"jobtap"` at `indexUrl`,
 * when given), so a plugin kept outside any package that depends on jobtap (e.g.
 * /etc/jobtap/plugins) still gets the host's API.
 */
export function rewriteApiImports(code: string, pluginUrl: string, indexUrl?: string): string {
  const out = code.replace(/(["'])jobtap\/plugin\1/g, JSON.stringify(pluginUrl));
  return indexUrl === undefined ? out : out.replace(/(["'])jobtap\1/g, JSON.stringify(indexUrl));
}

/** Transpiles a TS plugin (types stripped, no type check); syntax errors name line:col.
 *  TypeScript is imported lazily: it is large and only TS plugins need it. */
async function transpile(path: string): Promise<string> {
  const ts = (await import("typescript")).default;
  const out = ts.transpileModule(readFileSync(path, "utf8"), {
    fileName: path,
    reportDiagnostics: true,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  const diag = out.diagnostics?.[0];
  if (diag !== undefined) {
    const text = ts.flattenDiagnosticMessageText(diag.messageText, "\n");
    const pos =
      diag.file && diag.start !== undefined
        ? diag.file.getLineAndCharacterOfPosition(diag.start)
        : undefined;
    const where = pos ? `${path}:${pos.line + 1}:${pos.character + 1}` : path;
    throw new JobtapError(ErrorCode.PLUGIN_LOAD, `${where}: ${text}`, { path });
  }
  return out.outputText;
}

/**
 * Imports rewritten code from a temp file beside the plugin (so its relative imports of JS
 * modules still resolve), or from the temp directory when that directory is read-only;
 * the temp file is removed once imported.
 */
async function importCode(path: string, code: string, seq: number): Promise<PluginModule> {
  const rewritten = rewriteApiImports(code, apiUrl("plugin"), apiUrl("index"));
  const name = `.${basename(path)}.${process.pid}.${seq}.mjs`;
  let tmp = join(dirname(path), name);
  try {
    writeFileSync(tmp, rewritten);
  } catch {
    tmp = join(tmpdir(), name);
    writeFileSync(tmp, rewritten);
  }
  try {
    return (await import(pathToFileURL(tmp).href)) as PluginModule;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** Checks the default export's shape; returns the setup function and the plugin's own name. */
export function pluginShape(mod: PluginModule, where: string): {
  setup: PluginSetup;
  name: string | undefined;
} {
  const d = mod.default;
  if (typeof d === "function") return { setup: d as PluginSetup, name: undefined };
  if (typeof d === "object" && d !== null && typeof (d as { setup?: unknown }).setup === "function") {
    const name = (d as { name?: unknown }).name;
    if (name !== undefined && typeof name !== "string") {
      throw badShape(where, "`name` must be a string");
    }
    return { setup: (d as { setup: PluginSetup }).setup.bind(d), name };
  }
  throw badShape(where, "default export must be a function (p) => void or { name, setup(p) }");
}

function badShape(where: string, why: string): JobtapError {
  return new JobtapError(ErrorCode.PLUGIN_BAD_SHAPE, `${where}: ${why}`);
}

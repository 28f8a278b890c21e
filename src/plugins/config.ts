/**
 * TOML configuration of the plugin host (spec flux-jobtap §7.6):
 *
 *   [job-manager]
 *   plugin-path = ["/etc/jobtap/plugins"]     # or "dir1:dir2"
 *   plugin-deadline = "30s"                    # default deadline of async handlers
 *   plugins = [
 *     { remove = "all" },
 *     { load = "fairshare.ts", conf = { decay = 0.5 }, deadline = "5s" },
 *     { load = "policy.js", isolate = true, heap-mb = 256, restart = { max = 3, window = "60s", probation = "1s" } },
 *   ]
 *
 * Directives are processed once, in order, at start (remove before load within one entry).
 * Every error names its TOML path and stops startup. Unknown keys in a directive are
 * rejected; other `[job-manager]` keys belong to the job manager and are not checked here.
 */
import TOML from "@iarna/toml";
import { ErrorCode, JobtapError, isJobtapError } from "../errors.js";
import { parseFSD } from "../manager/base/fsd.js";
import type { JobtapHost } from "./host.js";
import { msg } from "./dispatch.js";
import type { IsolateOptions } from "./isolate.js";
import { resolvePlugin } from "./loader.js";

/** One `[job-manager] plugins` entry, validated. */
export interface PluginDirective {
  /** Position in the array, for error messages. */
  index: number;
  remove?: string;
  load?: string;
  conf?: Record<string, unknown>;
  deadlineMs?: number;
  /** Run in a worker thread (`isolate = true`, with `heap-mb` and `restart`). */
  isolate?: IsolateOptions;
}

/** The plugin-related part of `[job-manager]`. */
export interface PluginConfig {
  directives: PluginDirective[];
  pluginPath: string[];
  deadlineMs?: number;
}

const DIRECTIVE_KEYS = new Set(["load", "remove", "conf", "deadline", "isolate", "heap-mb", "restart"]);

function configError(path: string, why: string): JobtapError {
  return new JobtapError(ErrorCode.CONFIG, `${path}: ${why}`, { path });
}

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** Parses TOML text; a syntax error names `source:line:column`. */
export function parseToml(text: string, source = "config"): Record<string, unknown> {
  // A UTF-8 byte order mark (editors on Windows write one) is not part of the document.
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const binary = /[\u0000\uFFFD]/.exec(body);
  if (binary) {
    const line = body.slice(0, binary.index).split("\n").length;
    throw new JobtapError(ErrorCode.CONFIG, `${source}:${line}: not a TOML text file (binary or non-UTF-8 data)`, { source });
  }
  let doc: Record<string, unknown>;
  try {
    doc = TOML.parse(body) as Record<string, unknown>;
  } catch (e) {
    const t = e as { line?: number; col?: number; message?: string };
    const where = t.line !== undefined ? `${source}:${t.line + 1}:${(t.col ?? 0) + 1}` : source;
    // @iarna/toml appends "at row R, col C, pos P:" and the offending text: the position is
    // already in `where`, and the text may hold anything, so both go.
    const first = ((t.message ?? String(e)).split("\n")[0] ?? "").replace(/\s+at row \d+, col \d+, pos \d+:?\s*$/, "");
    throw new JobtapError(ErrorCode.CONFIG, `${where}: ${printable(first)}`, { source });
  }
  const big = findBigInt(doc, []);
  if (big) {
    throw new JobtapError(
      ErrorCode.CONFIG,
      `${tomlPath(big.path)}: integer out of range (at most ${Number.MAX_SAFE_INTEGER})`,
      { source, path: tomlPath(big.path) },
    );
  }
  return doc;
}

/** Control characters shown as escapes, so a message never writes raw bytes to a terminal. */
function printable(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** The first integer too large for a JavaScript number (TOML's are 64-bit): its path. */
function findBigInt(v: unknown, path: Array<string | number>): { path: Array<string | number>; value: bigint } | undefined {
  if (typeof v === "bigint") return { path, value: v };
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const hit = findBigInt(v[i], [...path, i]);
      if (hit) return hit;
    }
  } else if (typeof v === "object" && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      const hit = findBigInt(x, [...path, k]);
      if (hit) return hit;
    }
  }
  return undefined;
}

/** `["resources", "memory"]` → `[resources].memory`; `["job-manager", "plugins", 2, "conf", "x"]`
 *  → `[job-manager.plugins][2].conf.x`, the form every config error uses. */
function tomlPath(path: Array<string | number>): string {
  const firstIndex = path.findIndex((p) => typeof p === "number");
  const tablePart = firstIndex < 0 ? path.slice(0, -1) : path.slice(0, firstIndex);
  const rest = firstIndex < 0 ? path.slice(-1) : path.slice(firstIndex);
  let out = tablePart.length > 0 ? `[${tablePart.join(".")}]` : "";
  for (const p of rest) out += typeof p === "number" ? `[${p}]` : out === "" ? p : `.${p}`;
  return out;
}

/** Validates the plugin keys of `[job-manager]` and returns them. */
export function readPluginConfig(config: Record<string, unknown>): PluginConfig {
  const jm = config["job-manager"];
  if (jm === undefined) return { directives: [], pluginPath: [] };
  if (!isTable(jm)) throw configError("[job-manager]", "must be a table");
  const out: PluginConfig = { directives: [], pluginPath: readPath(jm["plugin-path"]) };
  if (jm["plugin-deadline"] !== undefined) {
    out.deadlineMs = duration(jm["plugin-deadline"], "[job-manager].plugin-deadline");
  }
  const plugins = jm.plugins;
  if (plugins === undefined) return out;
  if (!Array.isArray(plugins)) {
    throw configError("[job-manager.plugins]", "config must be an array");
  }
  out.directives = plugins.map((entry, i) => readDirective(entry, i));
  return out;
}

function readPath(v: unknown): string[] {
  const where = "[job-manager].plugin-path";
  if (v === undefined) return [];
  if (typeof v === "string") return v.split(":").filter((d) => d.length > 0);
  if (Array.isArray(v) && v.every((d) => typeof d === "string")) return v as string[];
  throw configError(where, "must be a string (colon-separated) or an array of strings");
}

function duration(v: unknown, where: string): number {
  if (typeof v !== "string" && typeof v !== "number") {
    throw configError(where, "must be a duration such as \"30s\" or a number of seconds");
  }
  try {
    return parseFSD(v, where) * 1000;
  } catch (e) {
    throw configError(where, msg(e));
  }
}

/** A probation deadline: a positive duration (a missed one unloads the plugin). */
function probation(v: unknown, where: string): number {
  const ms = duration(v, where);
  if (!(ms > 0 && Number.isFinite(ms))) throw configError(where, "must be a positive duration such as \"1s\"");
  return ms;
}

function readDirective(entry: unknown, i: number): PluginDirective {
  const at = `[job-manager.plugins][${i}]`;
  if (!isTable(entry)) throw configError(at, "must be a table such as { load = \"name\" }");
  for (const key of Object.keys(entry)) {
    if (!DIRECTIVE_KEYS.has(key)) {
      throw configError(`${at}.${key}`, "unknown key (expected load, remove, conf, deadline, isolate, heap-mb, restart)");
    }
  }
  const d: PluginDirective = { index: i };
  for (const key of ["load", "remove"] as const) {
    const v = entry[key];
    if (v === undefined) continue;
    if (typeof v !== "string" || v.length === 0) {
      throw configError(`${at}.${key}`, "must be a non-empty string");
    }
    d[key] = v;
  }
  if (d.load === undefined && d.remove === undefined) {
    throw configError(at, "needs a load or remove key");
  }
  if (entry.conf !== undefined) {
    if (!isTable(entry.conf)) throw configError(`${at}.conf`, "plugin conf must be a table");
    if (d.load === undefined) throw configError(`${at}.conf`, "conf is only valid with load");
    d.conf = entry.conf;
  }
  if (entry.deadline !== undefined) d.deadlineMs = duration(entry.deadline, `${at}.deadline`);
  const iso = readIsolate(entry, at);
  if (iso !== undefined) {
    if (d.load === undefined) throw configError(`${at}.isolate`, "isolate is only valid with load");
    d.isolate = iso;
  }
  return d;
}

/** `isolate = true` and its options; `heap-mb` and `restart` need it. */
function readIsolate(entry: Record<string, unknown>, at: string): IsolateOptions | undefined {
  const { isolate, restart } = entry;
  const heap = entry["heap-mb"];
  if (isolate !== undefined && typeof isolate !== "boolean") throw configError(`${at}.isolate`, "must be true or false");
  if (isolate !== true) {
    const extra = heap !== undefined ? "heap-mb" : restart !== undefined ? "restart" : undefined;
    if (extra !== undefined) throw configError(`${at}.${extra}`, "only valid with isolate = true");
    return undefined;
  }
  const out: IsolateOptions = {};
  if (heap !== undefined) {
    if (typeof heap !== "number" || !Number.isInteger(heap) || heap < 16) {
      throw configError(`${at}.heap-mb`, "must be an integer number of MiB >= 16");
    }
    out.heapMb = heap;
  }
  if (restart !== undefined) {
    if (!isTable(restart)) throw configError(`${at}.restart`, "must be a table such as { max = 3, window = \"60s\" }");
    for (const k of Object.keys(restart)) {
      if (!["max", "window", "probation"].includes(k)) throw configError(`${at}.restart.${k}`, "unknown key (expected max, window, probation)");
    }
    const max = restart.max ?? 3;
    if (typeof max !== "number" || !Number.isInteger(max) || max < 0) {
      throw configError(`${at}.restart.max`, "must be an integer >= 0");
    }
    const windowMs = restart.window === undefined ? 60_000 : duration(restart.window, `${at}.restart.window`);
    out.restart = { max, windowMs };
    if (restart.probation !== undefined) out.restart.probationMs = probation(restart.probation, `${at}.restart.probation`);
  }
  return out;
}

/**
 * Applies the directives in order (at start, or when re-applying a changed list); the
 * first failure names its TOML path. `replay`: replay active jobs to each loaded plugin.
 */
export async function applyDirectives(
  host: JobtapHost,
  directives: readonly PluginDirective[],
  replay = false,
): Promise<void> {
  for (const d of directives) {
    const at = `[job-manager.plugins][${d.index}]`;
    if (d.remove !== undefined) {
      try {
        host.remove(d.remove);
      } catch {
        throw configError(`${at}.remove`, `failed to find plugin to remove "${d.remove}"`);
      }
    }
    if (d.load === undefined) continue;
    try {
      const deadline = d.deadlineMs === undefined ? {} : { deadlineMs: d.deadlineMs };
      const isolate = d.isolate === undefined ? {} : { isolate: d.isolate };
      await host.load(d.load, d.conf ?? {}, { replay, ...deadline, ...isolate });
    } catch (e) {
      const cause = isJobtapError(e) ? e.code : ErrorCode.INTERNAL;
      throw new JobtapError(ErrorCode.CONFIG, `${at}.load: ${msg(e)}`, { path: `${at}.load`, cause });
    }
  }
  host.appliedDirectives = directives;
}

/**
 * Beyond Flux: re-applies a changed `[job-manager] plugins` list at runtime. The new list
 * is validated and every `load` target resolved before anything changes; an unchanged
 * list is a no-op (returns false). Otherwise every non-builtin is removed, removed
 * builtins come back in table order, and the directives run again with the runtime-load
 * replay. If a directive fails, the previous list is re-applied and the error (naming
 * its TOML path) is thrown. Plugins lose in-memory state (their `p.state` is kept).
 */
export async function reapplyPlugins(
  host: JobtapHost,
  config: Record<string, unknown>,
): Promise<boolean> {
  const { directives } = readPluginConfig(config);
  for (const d of directives) {
    if (d.load === undefined) continue;
    try {
      resolvePlugin(d.load, host.builtins, host.searchPath, host.shipped);
    } catch (e) {
      throw configError(`[job-manager.plugins][${d.index}].load`, msg(e));
    }
  }
  if (JSON.stringify(directives) === JSON.stringify(host.appliedDirectives)) return false;
  const old = host.appliedDirectives;
  try {
    await resetTo(host, directives);
  } catch (e) {
    await resetTo(host, old).catch((e2: unknown) =>
      host.report("error", `re-applying the previous plugin list failed: ${msg(e2)}`),
    );
    throw e;
  }
  return true;
}

async function resetTo(host: JobtapHost, directives: readonly PluginDirective[]): Promise<void> {
  host.remove("all");
  for (const b of host.builtins) {
    if (host.find(b.name) === undefined) await host.load(b.name, {}, { replay: true });
  }
  // Only builtins are loaded now: put them back in table order.
  host.sortBuiltinsFirst();
  await applyDirectives(host, directives, true);
}

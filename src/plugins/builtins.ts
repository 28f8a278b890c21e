/**
 * What a builtin plugin table is, and the config check over one. The tables themselves
 * (which plugins jobtap ships, in which order, with which config checks) are the composition
 * layer's: plugins-builtin/index.ts. The host is handed them, so this layer imports no plugin.
 */
import type { ConfigCheck, PluginModule } from "./loader.js";

/**
 * One builtin: its dotted name, a lazy import of its module, and the module's own
 * `checkConfig` export if it has one (imported by the table so a config is checked without loading).
 */
export interface BuiltinEntry {
  name: `.${string}`;
  load: () => Promise<PluginModule>;
  /** Loaded after the configured plugins rather than before them (Flux's .update-queue). */
  afterConfig?: true;
  checkConfig?: ConfigCheck;
}

/** A plugin shipped with jobtap but not loaded by default: loadable by its plain name. */
export interface ShippedEntry {
  name: string;
  load: () => Promise<PluginModule>;
  /** Run only when the config's plugin list loads it. */
  checkConfig?: ConfigCheck;
}

/**
 * Every problem the builtins, and the shipped plugins the config's `[job-manager] plugins`
 * list loads, would refuse in this configuration: their own `checkConfig`, run without
 * loading anything (each check stops at its section's first problem). A message two checks
 * share is reported once.
 */
export function checkBuiltinConfig(
  config: Record<string, unknown>,
  builtins: readonly BuiltinEntry[],
  shipped: readonly ShippedEntry[],
): string[] {
  const listed = loadedNames(config);
  const checks = [...builtins, ...shipped.filter((s) => listed.has(s.name))];
  const problems: string[] = [];
  for (const { checkConfig } of checks) {
    for (const message of checkConfig?.(config) ?? []) if (!problems.includes(message)) problems.push(message);
  }
  return problems;
}

/** The `load` names of the raw `[job-manager] plugins` list (malformed entries are the
 *  plugin config reader's to report). */
function loadedNames(config: Record<string, unknown>): Set<string> {
  const jm = config["job-manager"];
  const plugins = typeof jm === "object" && jm !== null ? (jm as { plugins?: unknown }).plugins : undefined;
  if (!Array.isArray(plugins)) return new Set();
  return new Set(plugins.map((d) => (d as { load?: unknown } | null)?.load).filter((l): l is string => typeof l === "string"));
}

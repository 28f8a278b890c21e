/**
 * The builtin plugin table. Builtins are dot-named, loaded first in this order, hidden from
 * `list` (unless `all`) and never removed by `*` or `all` (spec flux-jobtap §7, §8).
 *
 * To add a builtin: write plugins-builtin/<name>/index.ts against "jobtap/plugin" only and
 * append an entry here. Flux's order is .priority-default, .limit-job-size, .limit-duration,
 * .dependency-after, .dependency-singleton, .begin-time, .validate-duration,
 * .update-duration, .history, .post-event; then the `[job-manager] plugins` of the config;
 * then .update-queue, which Flux's queue context loads after parsing the config.
 */
import type { ConfigCheck, PluginModule } from "./loader.js";
import { checkConfig as accountingCheck } from "../../plugins-builtin/accounting/index.js";
import { checkConfig as execSlurmCheck } from "../../plugins-builtin/exec-slurm/index.js";
import { checkConfig as limitDurationCheck } from "../../plugins-builtin/limit-duration/index.js";
import { checkConfig as limitJobSizeCheck } from "../../plugins-builtin/limit-job-size/index.js";
import { checkConfig as perilogCheck } from "../../plugins-builtin/perilog/index.js";
import { checkConfig as updateQueueCheck } from "../../plugins-builtin/update-queue/index.js";
import { checkConfig as validateDurationCheck } from "../../plugins-builtin/validate-duration/index.js";

/**
 * One builtin: its dotted name, a lazy import of its module, and the module's own
 * `checkConfig` export if it has one (imported here so a config is checked without loading).
 */
export interface BuiltinEntry {
  name: `.${string}`;
  load: () => Promise<PluginModule>;
  /** Loaded after the configured plugins rather than before them (Flux's .update-queue). */
  afterConfig?: true;
  checkConfig?: ConfigCheck;
}

/** The builtins every job manager loads, in load order. */
export const BUILTINS: readonly BuiltinEntry[] = [
  {
    name: ".priority-default",
    load: () => import("../../plugins-builtin/priority-default/index.js"),
  },
  {
    name: ".limit-job-size",
    load: () => import("../../plugins-builtin/limit-job-size/index.js"),
    checkConfig: limitJobSizeCheck,
  },
  {
    name: ".limit-duration",
    load: () => import("../../plugins-builtin/limit-duration/index.js"),
    checkConfig: limitDurationCheck,
  },
  { name: ".dependency-after", load: () => import("../../plugins-builtin/dependency-after/index.js") },
  { name: ".dependency-singleton", load: () => import("../../plugins-builtin/dependency-singleton/index.js") },
  { name: ".begin-time", load: () => import("../../plugins-builtin/begin-time/index.js") },
  {
    name: ".validate-duration",
    load: () => import("../../plugins-builtin/validate-duration/index.js"),
    checkConfig: validateDurationCheck,
  },
  { name: ".update-duration", load: () => import("../../plugins-builtin/update-duration/index.js") },
  { name: ".history", load: () => import("../../plugins-builtin/history/index.js") },
  { name: ".post-event", load: () => import("../../plugins-builtin/post-event/index.js") },
  {
    name: ".exec-slurm",
    load: () => import("../../plugins-builtin/exec-slurm/index.js"),
    checkConfig: execSlurmCheck,
  },
  {
    name: ".update-queue",
    load: () => import("../../plugins-builtin/update-queue/index.js"),
    afterConfig: true,
    checkConfig: updateQueueCheck,
  },
];

/** A plugin shipped with jobtap but not loaded by default: loadable by its plain name. */
export interface ShippedEntry {
  name: string;
  load: () => Promise<PluginModule>;
  /** Run only when the config's plugin list loads it. */
  checkConfig?: ConfigCheck;
}

/**
 * Shipped plugins (Flux's alloc-bypass.so, alloc-check.so, perilog.so, submit-hold.so):
 * `load("perilog")` finds them after the search path, as Flux finds its `.so` files.
 */
export const SHIPPED: readonly ShippedEntry[] = [
  { name: "alloc-bypass", load: () => import("../../plugins-builtin/alloc-bypass/index.js") },
  { name: "alloc-check", load: () => import("../../plugins-builtin/alloc-check/index.js") },
  { name: "perilog", load: () => import("../../plugins-builtin/perilog/index.js"), checkConfig: perilogCheck },
  { name: "submit-hold", load: () => import("../../plugins-builtin/submit-hold/index.js") },
  { name: "condor-cron", load: () => import("../../plugins-builtin/condor-cron/index.js") },
  { name: "condor-router", load: () => import("../../plugins-builtin/condor-router/index.js") },
  { name: "condor-fetch", load: () => import("../../plugins-builtin/condor-fetch/index.js") },
  { name: "accounting", load: () => import("../../plugins-builtin/accounting/index.js"), checkConfig: accountingCheck },
];

/**
 * Every problem the builtins, and the shipped plugins the config's `[job-manager] plugins`
 * list loads, would refuse in this configuration: their own `checkConfig`, run without
 * loading anything (each check stops at its section's first problem). A message two checks
 * share is reported once.
 */
export function checkBuiltinConfig(
  config: Record<string, unknown>,
  builtins: readonly BuiltinEntry[] = BUILTINS,
  shipped: readonly ShippedEntry[] = SHIPPED,
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

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
import type { PluginModule } from "./loader.js";

/** One builtin: its dotted name and a lazy import of its module. */
export interface BuiltinEntry {
  name: `.${string}`;
  load: () => Promise<PluginModule>;
  /** Loaded after the configured plugins rather than before them (Flux's .update-queue). */
  afterConfig?: true;
}

/** The builtins every job manager loads, in load order. */
export const BUILTINS: readonly BuiltinEntry[] = [
  {
    name: ".priority-default",
    load: () => import("../../plugins-builtin/priority-default/index.js"),
  },
  { name: ".limit-job-size", load: () => import("../../plugins-builtin/limit-job-size/index.js") },
  { name: ".limit-duration", load: () => import("../../plugins-builtin/limit-duration/index.js") },
  { name: ".dependency-after", load: () => import("../../plugins-builtin/dependency-after/index.js") },
  { name: ".dependency-singleton", load: () => import("../../plugins-builtin/dependency-singleton/index.js") },
  { name: ".begin-time", load: () => import("../../plugins-builtin/begin-time/index.js") },
  { name: ".validate-duration", load: () => import("../../plugins-builtin/validate-duration/index.js") },
  { name: ".update-duration", load: () => import("../../plugins-builtin/update-duration/index.js") },
  { name: ".history", load: () => import("../../plugins-builtin/history/index.js") },
  { name: ".post-event", load: () => import("../../plugins-builtin/post-event/index.js") },
  { name: ".exec-slurm", load: () => import("../../plugins-builtin/exec-slurm/index.js") },
  { name: ".update-queue", load: () => import("../../plugins-builtin/update-queue/index.js"), afterConfig: true },
];

/** A plugin shipped with jobtap but not loaded by default: loadable by its plain name. */
export interface ShippedEntry {
  name: string;
  load: () => Promise<PluginModule>;
}

/**
 * Shipped plugins (Flux's alloc-bypass.so, alloc-check.so, perilog.so, submit-hold.so):
 * `load("perilog")` finds them after the search path, as Flux finds its `.so` files.
 */
export const SHIPPED: readonly ShippedEntry[] = [
  { name: "alloc-bypass", load: () => import("../../plugins-builtin/alloc-bypass/index.js") },
  { name: "alloc-check", load: () => import("../../plugins-builtin/alloc-check/index.js") },
  { name: "perilog", load: () => import("../../plugins-builtin/perilog/index.js") },
  { name: "submit-hold", load: () => import("../../plugins-builtin/submit-hold/index.js") },
  { name: "condor-cron", load: () => import("../../plugins-builtin/condor-cron/index.js") },
];

/**
 * The plugins jobtap ships: the builtin table and the shipped-but-not-loaded table, with
 * each plugin's config check. This is the composition layer's list: the daemon, the config
 * checker, `jobtap`'s `jobtapPlugins` and `createTestHost` hand it to the plugin host, which
 * itself imports no plugin.
 *
 * Builtins are dot-named, loaded first in this order, hidden from `list` (unless `all`) and
 * never removed by `*` or `all` (spec flux-jobtap §7, §8). To add one: write
 * plugins-builtin/<name>/index.ts against "jobtap/plugin" only and append an entry here.
 * Flux's order is .priority-default, .limit-job-size, .limit-duration, .dependency-after,
 * .dependency-singleton, .begin-time, .validate-duration, .update-duration, .history,
 * .post-event; then the `[job-manager] plugins` of the config; then .update-queue, which
 * Flux's queue context loads after parsing the config.
 */
import type { BuiltinEntry, ShippedEntry } from "../src/plugins/builtins.js";
import { pluginHostFactory, type JobtapHost, type JobtapPluginsOptions } from "../src/plugins/index.js";
import type { ManagerPort } from "../src/manager/port/port.js";
import { checkConfig as accountingCheck } from "./accounting/index.js";
import { checkConfig as condorCronCheck } from "./condor-cron/config.js";
import { checkConfig as condorFetchCheck } from "./condor-fetch/config.js";
import { checkConfig as condorRouterCheck } from "./condor-router/config.js";
import { checkConfig as execSlurmCheck } from "./exec-slurm/index.js";
import { checkConfig as limitDurationCheck } from "./limit-duration/index.js";
import { checkConfig as limitJobSizeCheck } from "./limit-job-size/index.js";
import { checkConfig as perilogCheck } from "./perilog/index.js";
import { checkConfig as updateQueueCheck } from "./update-queue/index.js";
import { checkConfig as validateDurationCheck } from "./validate-duration/index.js";

/** The builtins every job manager loads, in load order. */
export const BUILTINS: readonly BuiltinEntry[] = [
  { name: ".priority-default", load: () => import("./priority-default/index.js") },
  { name: ".limit-job-size", load: () => import("./limit-job-size/index.js"), checkConfig: limitJobSizeCheck },
  { name: ".limit-duration", load: () => import("./limit-duration/index.js"), checkConfig: limitDurationCheck },
  { name: ".dependency-after", load: () => import("./dependency-after/index.js") },
  { name: ".dependency-singleton", load: () => import("./dependency-singleton/index.js") },
  { name: ".begin-time", load: () => import("./begin-time/index.js") },
  { name: ".validate-duration", load: () => import("./validate-duration/index.js"), checkConfig: validateDurationCheck },
  { name: ".update-duration", load: () => import("./update-duration/index.js") },
  { name: ".history", load: () => import("./history/index.js") },
  { name: ".post-event", load: () => import("./post-event/index.js") },
  { name: ".user-log", load: () => import("./user-log/index.js") },
  { name: ".exec-slurm", load: () => import("./exec-slurm/index.js"), checkConfig: execSlurmCheck },
  {
    name: ".update-queue",
    load: () => import("./update-queue/index.js"),
    afterConfig: true,
    checkConfig: updateQueueCheck,
  },
];

/**
 * Shipped plugins (Flux's alloc-bypass.so, alloc-check.so, perilog.so, submit-hold.so):
 * `load("perilog")` finds them after the search path, as Flux finds its `.so` files.
 */
export const SHIPPED: readonly ShippedEntry[] = [
  { name: "alloc-bypass", load: () => import("./alloc-bypass/index.js") },
  { name: "alloc-check", load: () => import("./alloc-check/index.js") },
  { name: "perilog", load: () => import("./perilog/index.js"), checkConfig: perilogCheck },
  { name: "submit-hold", load: () => import("./submit-hold/index.js") },
  { name: "condor-cron", load: () => import("./condor-cron/index.js"), checkConfig: condorCronCheck },
  { name: "condor-router", load: () => import("./condor-router/index.js"), checkConfig: condorRouterCheck },
  { name: "condor-fetch", load: () => import("./condor-fetch/index.js"), checkConfig: condorFetchCheck },
  { name: "accounting", load: () => import("./accounting/index.js"), checkConfig: accountingCheck },
];

/**
 * Returns the `plugins` factory for createJobManager, loading jobtap's builtins and finding
 * its shipped plugins unless `opts.builtins` / `opts.shipped` say otherwise. Config errors
 * (with their TOML path) reject the returned Promise, which stops startup.
 */
export function jobtapPlugins(opts: JobtapPluginsOptions = {}): (mgr: ManagerPort) => Promise<JobtapHost> {
  return pluginHostFactory({ ...opts, builtins: opts.builtins ?? BUILTINS, shipped: opts.shipped ?? SHIPPED });
}

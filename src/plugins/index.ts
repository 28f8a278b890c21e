/**
 * The plugin host factory the job manager is given (`createJobManager({ plugins })`).
 *
 * Called after eventlog replay and before the restart callbacks: it creates the host,
 * loads the builtins in table order, processes the TOML `[job-manager] plugins` directives
 * in order, then loads `.update-queue` (Flux's queue context loads it after the config). Plugins loaded here get no job replay: the manager's restart
 * callbacks (job.create/job.new for every active job) follow.
 */
import type { Clock } from "../manager/base/clock.js";
import { RealClock } from "../manager/base/clock.js";
import type { HookLauncher } from "../hooks/types.js";
import type { ManagerPort } from "../manager/port/port.js";
import type { BuiltinEntry, ShippedEntry } from "./builtins.js";
import { applyDirectives, readPluginConfig } from "./config.js";
import { JobtapHost } from "./host.js";
import type { HostLogger } from "./dispatch.js";

/** Options of `jobtapPlugins`. */
export interface JobtapPluginsOptions {
  /** The whole instance configuration (parsed TOML). */
  config?: Record<string, unknown>;
  /** Overrides the search path built from JOBTAP_PLUGIN_PATH and `[job-manager] plugin-path`. */
  pluginPath?: readonly string[];
  /** Builtin table (jobtap's own: BUILTINS of plugins-builtin/index.ts); default: none. */
  builtins?: readonly BuiltinEntry[];
  /** Plugins found by plain name after the search path (jobtap's: SHIPPED); default: none. */
  shipped?: readonly ShippedEntry[];
  log?: HostLogger;
  /** Default async-handler deadline (ms); overrides `[job-manager] plugin-deadline`. */
  deadlineMs?: number;
  /** Used when the manager offers no clock. */
  clock?: Clock;
  /** The instance owner's uid for `p.owner`; default: the manager's, else the process uid. */
  owner?: number;
  /** A multi-user instance's privileged launcher: `p.hookUsers` runs hooks as other users through it. */
  hookLauncher?: HookLauncher;
  /** The environment to read JOBTAP_PLUGIN_PATH from (default process.env). */
  env?: Record<string, string | undefined>;
  /** Bench only: no `job.explain` handler is registered (bench why's "nobody asks" A/B). */
  withoutExplain?: boolean;
}

/**
 * Returns the `plugins` factory for createJobManager, with the builtin and shipped tables it
 * is handed (jobtap's own are plugins-builtin/index.ts's, whose `jobtapPlugins` fills them
 * in). Config errors (with their TOML path) reject the returned Promise, which stops
 * startup. Validation happens when the factory runs; call `checkPluginConfig` to validate
 * earlier (e.g. `jobtap config check`).
 */
export function pluginHostFactory(
  opts: JobtapPluginsOptions = {},
): (mgr: ManagerPort) => Promise<JobtapHost> {
  return async (mgr) => {
    const config = opts.config ?? mgr.config();
    const pc = readPluginConfig(config);
    const envPath = (opts.env ?? process.env).JOBTAP_PLUGIN_PATH;
    const searchPath = opts.pluginPath ?? [
      ...(envPath ?? "").split(":").filter((d) => d.length > 0),
      ...pc.pluginPath,
    ];
    const deadlineMs = opts.deadlineMs ?? pc.deadlineMs;
    const host = new JobtapHost({
      clock: mgr.clock ?? opts.clock ?? new RealClock(),
      config,
      searchPath,
      ...(opts.log ? { log: opts.log } : {}),
      builtins: opts.builtins ?? [],
      shipped: opts.shipped ?? [],
      ...(deadlineMs !== undefined ? { deadlineMs } : {}),
      ...(opts.owner !== undefined ? { owner: opts.owner } : {}),
      ...(opts.hookLauncher ? { hookLauncher: opts.hookLauncher } : {}),
      ...(opts.withoutExplain === true ? { withoutExplain: true } : {}),
    });
    host.attach(mgr);
    await host.loadBuiltins();
    await applyDirectives(host, pc.directives);
    await host.loadBuiltins(true);
    return host;
  };
}

/** Validates the plugin part of a config without loading anything; throws CONFIG errors. */
export function checkPluginConfig(config: Record<string, unknown>): void {
  readPluginConfig(config);
}

export { JobtapHost } from "./host.js";
export type { JobtapHostOptions, LoadOptions, PluginInfo } from "./host.js";
export { checkBuiltinConfig } from "./builtins.js";
export type { BuiltinEntry, ShippedEntry } from "./builtins.js";
export { parseToml, readPluginConfig, reapplyPlugins } from "./config.js";
export type { HostLogger } from "./dispatch.js";
export type { HandlerRecord, HandlerOutcome } from "./stack.js";
export { DEFAULT_HEAP_MB, DEFAULT_RESTART } from "./isolate.js";
export { DEFAULT_PROBATION_MS } from "./isolate-probation.js";
export type { IsolateOptions, RestartPolicy } from "./isolate.js";
export type { TraceFilter, TraceRecord, TraceCall, TraceTransition } from "./trace.js";
export { DEFAULT_DEADLINE_MS } from "./host.js";

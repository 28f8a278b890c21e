/**
 * Config reload (SIGHUP, `jobtap config reload`): the daemon's `--config` file is read and
 * checked again, every plugin gets the new config through `conf.update` (Flux's config
 * reload), and then — beyond Flux — a changed `[job-manager] plugins` list is re-applied at
 * runtime. Daemon settings that shape the running process (socket, resources, queue depth,
 * store limits, shutdown policy) are read only at start.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import { reapplyPlugins, type JobtapHost } from "../plugins/index.js";
import { loadConfigFile, type DaemonSettings } from "./config.js";

/** What one reload did. */
export interface ReloadOutcome {
  /** The file read. */
  source: string;
  /** True if the `[job-manager] plugins` list changed and was re-applied. */
  pluginsReapplied: boolean;
}

export interface ReloaderDeps {
  configPath: string | undefined;
  env: Record<string, string | undefined>;
  host: () => JobtapHost | undefined;
  log: (level: "info" | "warn", message: string) => void;
  /** Applies the daemon's own settings after a reload that succeeded (slot policy). */
  applied?: (settings: DaemonSettings) => void;
}

/**
 * Returns the daemon's reload function. Reloads run one at a time (a second SIGHUP waits
 * for the first). A failure keeps the old configuration and the old plugin list and
 * rejects with the reason (a CONFIG error with TOML paths, or the plugin's own message).
 */
export function createReloader(d: ReloaderDeps): () => Promise<ReloadOutcome> {
  let current = Promise.resolve() as Promise<unknown>;
  return () => {
    const run = current.then(() => reloadOnce(d), () => reloadOnce(d));
    current = run.catch(() => undefined);
    return run;
  };
}

async function reloadOnce(d: ReloaderDeps): Promise<ReloadOutcome> {
  try {
    const outcome = await apply(d);
    d.log("info", `configuration ${outcome.source} reloaded${outcome.pluginsReapplied ? "; plugin list re-applied" : ""}`);
    return outcome;
  } catch (e) {
    d.log("warn", `configuration reload refused, keeping the old one: ${(e as Error).message}`);
    throw e;
  }
}

async function apply(d: ReloaderDeps): Promise<ReloadOutcome> {
  if (d.configPath === undefined) {
    throw new JobtapError(ErrorCode.INVALID_ARGUMENT, "the daemon runs on its embedded defaults (no --config): nothing to reload");
  }
  const host = d.host();
  if (!host) throw new JobtapError(ErrorCode.NOT_SUPPORTED, "no plugin host is attached");
  const config = loadConfigFile(d.configPath, d.env);
  const old = host.config;
  await host.reloadConfig(config.raw);
  let pluginsReapplied: boolean;
  try {
    pluginsReapplied = await reapplyPlugins(host, config.raw);
  } catch (e) {
    // reapplyPlugins has restored the old list; give the plugins their old config back too.
    await host.reloadConfig(old).catch((e2: unknown) => d.log("warn", `restoring the old config: ${(e2 as Error).message}`));
    throw e;
  }
  d.applied?.(config.settings);
  return { source: config.source, pluginsReapplied };
}

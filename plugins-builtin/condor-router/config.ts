/**
 * condor-router configuration: the plugin's `conf` table holds either routes written in
 * jobtap's TOML (the keys `routerConfigFromToml` reads: `routes`, `transforms`,
 * `route_names`, `source_job_constraint`, `polling_period`, ...) or a pasted HTCondor
 * configuration (`condor_config = "/etc/condor/config.d/60-router"` or the text itself in
 * `condor_config_text`), never both. Hook paths are HTCondor knobs
 * (`<Keyword>_HOOK_TRANSLATE_JOB`, ...): in the pasted configuration, or in the TOML
 * `hooks` table keyed by knob name. docs/condor-router.md.
 */
import { CondorConfig, formatSource, parseCondorConfig, readCondorConfigFile, ErrorCode, JobtapError, type ConfigCheck } from "jobtap/plugin";
import { checkPluginConf } from "../common/config.js";
import type { RouterConfig } from "./routes.js";
import { readRouterConfig } from "./routes-condor.js";
import { routerConfigFromToml } from "./routes-toml.js";

/** Everything the router runs from. */
export interface RouterPluginConfig {
  router: RouterConfig;
  /** The path of knob `<Keyword>_HOOK_<TYPE>`, or undefined when it is not configured. */
  hookPath(keyword: string, type: string): string | undefined;
  /** Where the routes came from, for messages. */
  source: string;
}

type Table = Record<string, unknown>;
const CONDOR_KEYS = new Set(["condor_config", "condor_config_text", "hooks"]);

/**
 * Reads the plugin's configuration; throws an Error naming the TOML path or the HTCondor
 * file and line of the first problem (a bad route fails the whole load: the router keeps
 * its previous table on a reload).
 */
export function readRouterPluginConfig(conf: Readonly<Table>, env: Record<string, string | undefined> = process.env): RouterPluginConfig {
  const file = conf.condor_config;
  const text = conf.condor_config_text;
  if (file !== undefined && (typeof file !== "string" || file === "")) throw new JobtapError(ErrorCode.CONFIG, "conf.condor_config: must be a file path");
  if (text !== undefined && typeof text !== "string") throw new JobtapError(ErrorCode.CONFIG, "conf.condor_config_text: must be HTCondor configuration text");
  const hooks = hookTable(conf.hooks);
  if (file !== undefined || text !== undefined) {
    const extra = Object.keys(conf).filter((k) => !CONDOR_KEYS.has(k));
    if (extra.length > 0) throw new JobtapError(ErrorCode.CONFIG, `conf.${extra[0]}: routes come from the HTCondor configuration; put TOML routes in a separate plugin conf`);
    let config = file === undefined ? new CondorConfig({ env }) : readCondorConfigFile(file, { env });
    if (text !== undefined) config = parseCondorConfig(text, { env, into: config, file: "conf.condor_config_text" });
    checkHookKnobs(config);
    return {
      router: readRouterConfig(config, { skipBadRoutes: true }),
      hookPath: (kw, type) => hooks.get(`${kw}_HOOK_${type}`.toUpperCase()) ?? nonEmpty(config.get(`${kw}_HOOK_${type}`)),
      source: file ?? "conf.condor_config_text",
    };
  }
  const { hooks: _h, ...routes } = conf;
  return {
    router: routerConfigFromToml(routes, "conf", { skipBadRoutes: true }),
    hookPath: (kw, type) => hooks.get(`${kw}_HOOK_${type}`.toUpperCase()),
    source: "conf",
  };
}

const HOOK_KNOB = /^[A-Za-z0-9_]+_HOOK_(TRANSLATE_JOB|UPDATE_JOB_INFO|JOB_FINALIZE|JOB_EXIT|JOB_CLEANUP)$/i;

/** A router hook knob of the pasted configuration must name an absolute path (HTCondor refuses others). */
function checkHookKnobs(config: CondorConfig): void {
  for (const name of config.names()) {
    const path = nonEmpty(config.get(name));
    if (!HOOK_KNOB.test(name) || path === undefined || path.startsWith("/")) continue;
    const src = config.source(name);
    throw new JobtapError(ErrorCode.CONFIG, `${src ? `${formatSource(src)}: ` : ""}${name} = ${path}: a hook path must be absolute`);
  }
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === "" ? undefined : v.trim();
}

/** `hooks = { ROUTER_HOOK_TRANSLATE_JOB = "/path" }`, keys upper-cased. */
function hookTable(v: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (v === undefined) return out;
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new JobtapError(ErrorCode.CONFIG, "conf.hooks: must be a table of <Keyword>_HOOK_<TYPE> = path");
  for (const [k, path] of Object.entries(v)) {
    if (!HOOK_KNOB.test(k)) {
      throw new JobtapError(ErrorCode.CONFIG, `conf.hooks.${k}: not a router hook knob (<Keyword>_HOOK_TRANSLATE_JOB, _UPDATE_JOB_INFO, _JOB_FINALIZE, _JOB_EXIT, _JOB_CLEANUP)`);
    }
    if (typeof path !== "string" || !path.startsWith("/")) throw new JobtapError(ErrorCode.CONFIG, `conf.hooks.${k}: must be an absolute path`);
    out.set(k.toUpperCase(), path);
  }
  return out;
}

/** Seconds a router hook may run (0: no limit, HTCondor's behaviour). */
function hookTimeLimit(conf: Readonly<Table>): number {
  const v = conf.hook_time_limit;
  if (v === undefined) return 0;
  if (typeof v !== "number" || !(v >= 0)) throw new JobtapError(ErrorCode.CONFIG, `conf.hook_time_limit: must be a number of seconds >= 0, got ${JSON.stringify(v)}`);
  return v * 1000;
}

/** The whole `conf` table: the routes and hooks, and the hook time limit in ms. Throws as readRouterPluginConfig. */
export function readConf(conf: Readonly<Table>): { cfg: RouterPluginConfig; timeLimitMs: number } {
  const { hook_time_limit: _t, ...rest } = conf;
  return { cfg: readRouterPluginConfig(rest), timeLimitMs: hookTimeLimit(conf) };
}

/** What `conf.update` would refuse in each `[job-manager] plugins` entry loading condor-router. */
export const checkConfig: ConfigCheck = checkPluginConf("condor-router", readConf);

/**
 * Reading the instance configuration the way Flux's limit plugins do: `[policy.limits]` for
 * the general limits and `[queues.<name>.policy.limits]` per queue. Every error names the
 * TOML path, so a bad config is rejected by `conf.update` with a message an admin can act on.
 */
import { ErrorCode } from "jobtap/plugin";

/** A TOML table as parsed. */
export type Table = Record<string, unknown>;

/**
 * A config error, coded CONFIG (so `isJobtapError(e, ErrorCode.CONFIG)` holds): the message
 * names the TOML path. Not a JobtapError subclass: this module may be evaluated before
 * jobtap/plugin's errors in an import cycle, and `extends` needs its base at that moment.
 */
export class ConfigError extends Error {
  readonly code = ErrorCode.CONFIG;
}

/** True for a plain object (a TOML table). */
export function isTable(v: unknown): v is Table {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Follows `keys` from `root`; a present non-table along the way is a ConfigError. */
export function tableAt(root: Table, keys: readonly string[], where: string): Table | undefined {
  let t: Table = root;
  let path = where;
  for (const k of keys) {
    path = path === "" ? k : `${path}.${k}`;
    const next = t[k];
    if (next === undefined) return undefined;
    if (!isTable(next)) throw new ConfigError(`[${path}]: must be a table`);
    t = next;
  }
  return t;
}

/**
 * The `[queues]` table as name → queue table (empty when none are configured), with RFC 33
 * virtual queues resolved: a queue with `parent = "NAME"` inherits every policy key of its
 * parent, and a key it sets itself overrides only that key (tables merge, values replace).
 */
export function queueTables(conf: Table): Map<string, Table> {
  const own = new Map<string, Table>();
  const queues = conf.queues;
  if (queues === undefined) return own;
  if (!isTable(queues)) throw new ConfigError("[queues]: must be a table");
  for (const [name, q] of Object.entries(queues)) {
    if (!isTable(q)) throw new ConfigError(`[queues.${name}]: must be a table`);
    own.set(name, q);
  }
  const out = new Map<string, Table>();
  for (const [name, q] of own) {
    const parent = parentOf(name, q, own);
    if (parent === undefined) {
      out.set(name, q);
      continue;
    }
    const inherited = tableAt(own.get(parent)!, ["policy"], `queues.${parent}`) ?? {};
    out.set(name, { ...q, policy: mergeTables(inherited, tableAt(q, ["policy"], `queues.${name}`) ?? {}) });
  }
  return out;
}

/** A virtual queue's parent, checked as flux-config-queues(5) requires; undefined if none. */
export function parentOf(name: string, q: Table, queues: ReadonlyMap<string, Table>): string | undefined {
  const parent = q.parent;
  if (parent === undefined) return undefined;
  const at = `[queues.${name}].parent`;
  if (typeof parent !== "string") throw new ConfigError(`${at}: must be a string, got ${JSON.stringify(parent)}`);
  const p = queues.get(parent);
  if (p === undefined) throw new ConfigError(`${at}: "${parent}" is not a configured queue`);
  if (parent === name) throw new ConfigError(`${at}: a queue cannot be its own parent`);
  if (p.parent !== undefined) throw new ConfigError(`${at}: "${parent}" is itself a virtual queue`);
  if (q.requires !== undefined) throw new ConfigError(`[queues.${name}].requires: a virtual queue shares its parent's resources`);
  if (isTable(q.policy) && q.policy.scheduler !== undefined) {
    throw new ConfigError(`[queues.${name}.policy].scheduler: a virtual queue uses its parent's scheduler configuration`);
  }
  return parent;
}

/** `over` merged into `base`: tables merge key by key, any other value replaces. */
function mergeTables(base: Table, over: Table): Table {
  const out: Table = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isTable(b) && isTable(v) ? mergeTables(b, v) : v;
  }
  return out;
}

/** The `[policy.limits]` table of the instance (or of one queue's table). */
export function limitsOf(t: Table, where: string): Table | undefined {
  return tableAt(t, ["policy", "limits"], where);
}

/** The queue a job asked for (`attributes.system.queue`), else the configured default. */
export function jobQueue(jobspec: { attributes: { system?: Table } }, dflt?: string): string | undefined {
  const q = jobspec.attributes.system?.queue;
  return typeof q === "string" ? q : dflt;
}

/** `[policy.jobspec.defaults.system] queue`: the queue of jobs that name none. */
export function defaultQueue(conf: Table): string | undefined {
  const sys = tableAt(conf, ["policy", "jobspec", "defaults", "system"], "");
  const q = sys?.queue;
  if (q === undefined) return undefined;
  if (typeof q !== "string") throw new ConfigError(`[policy.jobspec.defaults.system].queue: must be a string, got ${JSON.stringify(q)}`);
  return q;
}

/** ` for queue Q` when the limit came from a queue: Flux's message suffix. */
export function forQueue(queue: string | undefined): string {
  return queue === undefined ? "" : ` for queue ${queue}`;
}

/**
 * A plugin's `checkConfig` from a reader that throws at its first problem: run on each view
 * of the config (default: the whole config), every distinct problem found.
 */
export function checkWith(read: (conf: Table) => unknown, views: (conf: Table) => Table[] = (c) => [c]) {
  return (conf: Table): string[] => {
    const problems: string[] = [];
    for (const view of views(conf)) {
      try {
        read(view);
      } catch (e) {
        const message = (e as Error).message;
        if (!problems.includes(message)) problems.push(message);
      }
    }
    return problems;
  };
}

/**
 * The config as a whole, then the general limits alone and each queue alone, so a bad
 * queue does not hide a bad general limit (the limit readers stop at their first problem).
 */
export function limitViews(conf: Table): Table[] {
  const queues = isTable(conf.queues) ? Object.entries(conf.queues) : [];
  if (queues.length === 0) return [conf];
  const { queues: _all, ...general } = conf;
  return [conf, general, ...queues.map(([name, q]) => ({ queues: { [name]: q } }))];
}

/**
 * The `conf` tables of the `[job-manager] plugins` entries that load the shipped plugin
 * `name`, each with its TOML path (`[job-manager.plugins][2].conf`). A malformed list or
 * entry is the plugin config reader's to report: it is skipped here.
 */
export function pluginConfs(config: Table, name: string): Array<{ conf: Table; at: string }> {
  const jm = config["job-manager"];
  const plugins = isTable(jm) ? jm.plugins : undefined;
  if (!Array.isArray(plugins)) return [];
  const out: Array<{ conf: Table; at: string }> = [];
  plugins.forEach((entry: unknown, i) => {
    if (!isTable(entry) || entry.load !== name) return;
    const conf = entry.conf ?? {};
    if (isTable(conf)) out.push({ conf, at: `[job-manager.plugins][${i}].conf` });
  });
  return out;
}

/**
 * A shipped plugin's `checkConfig` from the reader its `conf.update` uses (one function, so
 * the check and the load never disagree): the reader is run on the `conf` of each entry
 * that loads `name`, and its first problem is reported under that entry's TOML path (a
 * message naming `conf.x` becomes `[job-manager.plugins][i].conf.x`; one naming an HTCondor
 * file keeps its FILE:LINE after the entry's path).
 */
export function checkPluginConf(name: string, read: (conf: Table) => unknown): (config: Table) => string[] {
  return (config: Table): string[] => {
    const problems: string[] = [];
    for (const { conf, at } of pluginConfs(config, name)) {
      try {
        read(conf);
      } catch (e) {
        const message = (e as Error).message;
        problems.push(/^conf[.:]/.test(message) ? `${at}${message.slice(4)} (${name})` : `${at}: ${name}: ${message}`);
      }
    }
    return problems;
  };
}

/**
 * The daemon's TOML configuration, read and checked in one place so that `jobtap config
 * check FILE` and `jobtap daemon --config FILE` agree exactly. Every problem is reported
 * with its TOML path, and checking goes on past the first one so a user sees them all.
 *
 *   [daemon]
 *   socket = "/run/jobtap.sock"        # default <statedir>/jobtap.sock
 *   guests = false                     # true: other users may connect (socket 0666)
 *   user = "jobtap"                    # a multi-user instance: started as root, runs as this
 *                                      #   service user, jobs as their users (docs/site.md)
 *   max-request-size = 33554432        # bytes
 *   shutdown = "kill"                  # or "wait": what SIGTERM does to running jobs
 *   shutdown-timeout = "30s"           # "wait": how long before running jobs are killed
 *
 *   [limits]                           # docs/configuration.md
 *   jobspec-size = "2M"                # argument-size, exec-size: bytes too
 *   jobs-per-user = 100000             # active jobs of one user
 *   submit-rate = 50                   # jobs/s one user may submit (token bucket; 0: no limit)
 *   submit-burst = 500                 # the bucket (default: ten seconds of submit-rate)
 *   jobspec-bytes-per-user = "1G"      # one user's stored jobspecs (0: no limit)
 *   eventlog-entries = 10000           # a job's eventlog, through requests
 *   connections = 1000                 # open socket connections
 *   connections-per-user = 64          # a guest's authenticated connections
 *
 *   [exec]
 *   allow-root = false                 # a multi-user instance: may root's jobs run?
 *
 *   [resources]                        # the local pool (default: this machine)
 *   cores = 8
 *   gpus = 0
 *   memory = "16G"                     # or a number of bytes
 *   slots = [{ count = 2, cores = 4, memory = "8G" }]   # static slots (default: one)
 *
 *   [job-manager]                      # plugins, plugin-path, plugin-deadline: see
 *   queue-depth = 8                    #   docs/configuration.md (checked by the host)
 *   inactive-age-limit = "7d"
 *   inactive-num-limit = 10000
 *   batch-window = "10ms"
 */
import { readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { carveSlots, type SlotType } from "../manager/scheduler/slots.js";
import { hasPolicy, slotPolicies } from "../manager/policy/slot-policy.js";
import { hasPeriodicPolicy, periodicSettings } from "../manager/policy/system-periodic.js";
import { unknownPolicyKeys } from "../manager/policy/policy-keys.js";
import type { SystemPolicy } from "../manager/policy/user-policy.js";
import type { SlotPolicy } from "../manager/ads/hostads.js";
import { dirname, resolve } from "node:path";
import { ErrorCode, JobtapError, isJobtapError } from "../errors.js";
import { parseFSD } from "../manager/base/fsd.js";
import { checkBuiltinConfig, parseToml, readPluginConfig } from "../plugins/index.js";
import { BUILTINS, SHIPPED } from "../../plugins-builtin/index.js";
import { resolvePlugin } from "../plugins/loader.js";
import { DEFAULT_MAX_REQUEST_BYTES } from "./protocol.js";
import { closest } from "./suggest.js";
import { KERNEL_ARGUMENT_MAX, type JobLimits } from "../manager/core/limits.js";
import { HTTP_KEYS, readHttpSettings, type HttpSettings } from "./http/config.js";

/** What SIGTERM/SIGINT does to jobs that are running. */
export type ShutdownPolicy = "kill" | "wait";

/** The daemon-level settings, with defaults filled in. */
export interface DaemonSettings {
  socket?: string;
  /** Let other local users connect (socket 0666); they are guests. */
  guests: boolean;
  /** `[daemon] user`: the service user of a multi-user instance (docs/site.md). */
  user?: string;
  /** `[exec] allow-root`: a multi-user instance runs root's jobs (default: refused). */
  allowRoot: boolean;
  maxRequestBytes: number;
  shutdown: ShutdownPolicy;
  shutdownTimeoutMs: number;
  resources?: { cores?: number; gpus?: number; memory?: number };
  /** `[resources] slots`, checked against the pool (memory sizes already in bytes). */
  slots?: SlotType[];
  queueDepth?: number;
  inactiveAgeLimitMs?: number;
  inactiveNumLimit?: number;
  batchWindowMs?: number;
  /** `[limits]`: what a job must meet at submit (unset keys keep the manager's defaults). */
  limits?: Partial<JobLimits>;
  /** `[limits] connections`: open socket connections at once (see connections.ts). */
  maxConnections: number;
  /** `[limits] connections-per-user`: a guest's authenticated connections at most. */
  connectionsPerUser?: number;
  /** `[policy]` START/RANK/PREEMPT/STARTD_ATTRS per slot (src/manager/policy/slot-policy.ts). */
  slotPolicy?: SlotPolicy[];
  /** `[policy]` SYSTEM_PERIODIC_HOLD/RELEASE/REMOVE (src/manager/policy/system-periodic.ts). */
  systemPeriodic?: SystemPolicy;
  /** `[policy]` PERIODIC_EXPR_INTERVAL in ms (unset: the manager's 60 s). */
  periodicExprIntervalMs?: number;
  /** `[daemon] http` and its companions (http/config.ts); absent: no TCP listener. */
  http?: HttpSettings;
}

/** A whole configuration: the raw tables (plugins see all of it) plus the daemon's reading. */
export interface DaemonConfig {
  source: string;
  raw: Record<string, unknown>;
  settings: DaemonSettings;
}

const DAEMON_KEYS = ["socket", "guests", "user", "max-request-size", "shutdown", "shutdown-timeout", ...HTTP_KEYS];
const RESOURCE_KEYS = ["cores", "gpus", "memory", "slots"];
const LIMIT_KEYS: Array<[string, keyof JobLimits]> = [
  ["jobspec-size", "jobspecBytes"],
  ["argument-size", "argumentBytes"],
  ["exec-size", "execBytes"],
];
/** `[limits]`: the jobspec bytes one user's stored jobs may hold (0: no limit). */
const STORED_BYTES_KEY = "jobspec-bytes-per-user";
/** `[limits]` keys that are counts, not byte sizes. */
const LIMIT_COUNT_KEYS: Array<[string, "jobsPerUser" | "eventlogEntries"]> = [
  ["jobs-per-user", "jobsPerUser"],
  ["eventlog-entries", "eventlogEntries"],
];
/** Default of `[limits] connections`. */
export const DEFAULT_MAX_CONNECTIONS = 1000;
const SIZE_UNITS: Record<string, number> = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** The embedded default: no file at all. */
export function defaultConfig(): DaemonConfig {
  return { source: "(embedded defaults)", raw: {}, settings: defaultSettings() };
}

function defaultSettings(): DaemonSettings {
  return {
    guests: false,
    allowRoot: false,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    maxConnections: DEFAULT_MAX_CONNECTIONS,
    shutdown: "kill",
    shutdownTimeoutMs: 30_000,
  };
}

/**
 * Reads and checks a config file. Returns the config and every problem found; the daemon
 * refuses to start if there is any, `config check` prints them all.
 */
export function checkConfigFile(
  path: string,
  env: Record<string, string | undefined>,
): { config?: DaemonConfig; errors: JobtapError[] } {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    return { errors: [new JobtapError(ErrorCode.CONFIG, `${path}: ${(e as Error).message}`)] };
  }
  let raw: Record<string, unknown>;
  try {
    raw = parseToml(text, path);
  } catch (e) {
    return { errors: [asConfigError(e)] };
  }
  const errors: JobtapError[] = [];
  anchorLoadPaths(raw, dirname(resolve(path)));
  const settings = readSettings(raw, errors);
  readSlotPolicy(raw, settings, dirname(resolve(path)), errors);
  readPeriodicPolicy(raw, settings, dirname(resolve(path)), errors);
  errors.push(...unknownPolicyKeys(raw.policy as Record<string, unknown> | undefined));
  checkPlugins(raw, env, errors);
  // What the builtins' conf.update would refuse, so the daemon does not start and then fail.
  for (const message of checkBuiltinConfig(raw, BUILTINS, SHIPPED)) errors.push(new JobtapError(ErrorCode.CONFIG, message));
  return { config: { source: path, raw, settings }, errors };
}

/**
 * The slots' startd policy from `[policy]` (and its `condor_config` FILE, relative to the
 * config file) and the `[resources] slots` entries, when any of them sets one.
 */
function readSlotPolicy(raw: Record<string, unknown>, s: DaemonSettings, dir: string, errors: JobtapError[]): void {
  const policy = raw.policy as Record<string, unknown> | undefined;
  const perType = (Array.isArray((raw.resources as { slots?: unknown } | undefined)?.slots) ? (raw.resources as { slots: unknown[] }).slots : []) as Array<Record<string, unknown>>;
  if (!hasPolicy(policy) && !perType.some((t) => typeof t === "object" && t !== null && hasPolicy(t))) return;
  const r = s.resources ?? {};
  const pool = { cores: r.cores ?? cpus().length, gpus: r.gpus ?? 0, memory: r.memory ?? totalmem() };
  guard(errors, () => {
    s.slotPolicy = slotPolicies(carveSlots(pool, s.slots), policy, perType, dir);
    return true;
  });
}

/** The site's periodic job policy and PERIODIC_EXPR_INTERVAL from `[policy]` (and its condor_config). */
function readPeriodicPolicy(raw: Record<string, unknown>, s: DaemonSettings, dir: string, errors: JobtapError[]): void {
  const policy = raw.policy as Record<string, unknown> | undefined;
  if (!hasPeriodicPolicy(policy)) return;
  guard(errors, () => {
    const p = periodicSettings(policy, dir);
    s.systemPeriodic = p.system;
    if (p.intervalMs !== undefined) s.periodicExprIntervalMs = p.intervalMs;
    return true;
  });
}

/** Loads a config for the daemon: throws one CONFIG error listing every problem. */
export function loadConfigFile(path: string, env: Record<string, string | undefined>): DaemonConfig {
  const { config, errors } = checkConfigFile(path, env);
  if (errors.length > 0 || config === undefined) {
    const lines = errors.map((e) => e.message);
    throw new JobtapError(ErrorCode.CONFIG, `${path}: configuration rejected:\n  ${lines.join("\n  ")}`, {
      errors: lines,
    });
  }
  return config;
}

/**
 * `load = "./prio.ts"` in a config file means next to that file, not wherever the daemon
 * happens to be started: such paths are made absolute against the file's directory.
 */
function anchorLoadPaths(raw: Record<string, unknown>, dir: string): void {
  const jm = raw["job-manager"] as { plugins?: unknown } | undefined;
  if (typeof jm !== "object" || jm === null || !Array.isArray(jm.plugins)) return;
  for (const entry of jm.plugins as unknown[]) {
    const d = entry as { load?: unknown };
    if (typeof d === "object" && d !== null && typeof d.load === "string" && /^\.\.?\//.test(d.load)) {
      d.load = resolve(dir, d.load);
    }
  }
}

function asConfigError(e: unknown): JobtapError {
  if (isJobtapError(e)) return new JobtapError(ErrorCode.CONFIG, e.message, e.details);
  return new JobtapError(ErrorCode.CONFIG, e instanceof Error ? e.message : String(e));
}

function configError(path: string, why: string): JobtapError {
  return new JobtapError(ErrorCode.CONFIG, `${path}: ${why}`, { path });
}

function table(raw: Record<string, unknown>, name: string, errors: JobtapError[]): Record<string, unknown> {
  const t = raw[name];
  if (t === undefined) return {};
  if (typeof t !== "object" || t === null || Array.isArray(t)) {
    errors.push(configError(`[${name}]`, "must be a table"));
    return {};
  }
  return t as Record<string, unknown>;
}

function readSettings(raw: Record<string, unknown>, errors: JobtapError[]): DaemonSettings {
  const s = defaultSettings();
  unknownTables(raw, errors);
  const daemon = table(raw, "daemon", errors);
  unknownKeys(daemon, "daemon", DAEMON_KEYS, errors);
  const socket = daemon.socket;
  if (socket !== undefined) {
    if (typeof socket === "string" && socket !== "") s.socket = socket;
    else errors.push(configError("[daemon].socket", "must be a non-empty path string"));
  }
  const guests = daemon.guests;
  if (typeof guests === "boolean") s.guests = guests;
  else if (guests !== undefined) errors.push(configError("[daemon].guests", `must be true or false, got ${JSON.stringify(guests)}`));
  const user = daemon.user;
  if (typeof user === "string" && /^[a-z_][a-z0-9_.-]*\$?$/i.test(user)) s.user = user;
  else if (user !== undefined) errors.push(configError("[daemon].user", `must be a user name, got ${JSON.stringify(user)}`));
  const allowRoot = (raw.exec as Record<string, unknown> | undefined)?.["allow-root"];
  if (typeof allowRoot === "boolean") s.allowRoot = allowRoot;
  else if (allowRoot !== undefined) errors.push(configError("[exec].allow-root", `must be true or false, got ${JSON.stringify(allowRoot)}`));
  const cap = daemon["max-request-size"];
  if (cap !== undefined) s.maxRequestBytes = size(cap, "[daemon].max-request-size", errors) ?? s.maxRequestBytes;
  const policy = daemon.shutdown;
  if (policy === "kill" || policy === "wait") s.shutdown = policy;
  else if (policy !== undefined) errors.push(configError("[daemon].shutdown", `must be "kill" or "wait", got ${JSON.stringify(policy)}`));
  const timeout = duration(daemon["shutdown-timeout"], "[daemon].shutdown-timeout", errors);
  if (timeout !== undefined) s.shutdownTimeoutMs = timeout;
  const http = readHttpSettings(daemon, (where, why) => errors.push(configError(where, why)));
  if (http !== undefined) s.http = http;
  readResources(table(raw, "resources", errors), s, errors);
  readManager(table(raw, "job-manager", errors), s, errors);
  readLimits(table(raw, "limits", errors), s, errors);
  return s;
}

function readLimits(t: Record<string, unknown>, s: DaemonSettings, errors: JobtapError[]): void {
  const known = [...LIMIT_KEYS, [STORED_BYTES_KEY], ...LIMIT_COUNT_KEYS, ["connections"], ["connections-per-user"], ["submit-rate"], ["submit-burst"]];
  unknownKeys(t, "limits", known.map(([k]) => k as string), errors);
  const limits: Partial<JobLimits> = {};
  for (const [key, field] of LIMIT_KEYS) {
    if (t[key] === undefined) continue;
    const v = size(t[key], `[limits].${key}`, errors);
    if (v === undefined) continue;
    if (v < 1) errors.push(configError(`[limits].${key}`, "must be at least 1 byte"));
    else if (field === "argumentBytes" && v > KERNEL_ARGUMENT_MAX) {
      errors.push(configError(`[limits].${key}`, `${v} is more than Linux accepts for one argument (${KERNEL_ARGUMENT_MAX} bytes)`));
    } else limits[field] = v;
  }
  const rate = t["submit-rate"];
  if (typeof rate === "number" && Number.isFinite(rate) && rate >= 0) limits.submitRate = rate;
  else if (rate !== undefined) errors.push(configError("[limits].submit-rate", `must be a number of jobs per second (0: no limit), got ${JSON.stringify(rate)}`));
  const burst = count(t["submit-burst"], "[limits].submit-burst", errors);
  if (burst !== undefined) limits.submitBurst = burst;
  // 0 is allowed here: no limit on a user's stored jobspecs.
  const stored = t[STORED_BYTES_KEY] === undefined ? undefined : size(t[STORED_BYTES_KEY], `[limits].${STORED_BYTES_KEY}`, errors);
  if (stored !== undefined) limits.jobspecBytesPerUser = stored;
  for (const [key, field] of LIMIT_COUNT_KEYS) {
    const v = count(t[key], `[limits].${key}`, errors);
    if (v !== undefined) limits[field] = v;
  }
  const connections = count(t.connections, "[limits].connections", errors);
  if (connections !== undefined) s.maxConnections = connections;
  const perUser = count(t["connections-per-user"], "[limits].connections-per-user", errors);
  if (perUser !== undefined) s.connectionsPerUser = perUser;
  if (Object.keys(limits).length > 0) s.limits = limits;
}

function readResources(t: Record<string, unknown>, s: DaemonSettings, errors: JobtapError[]): void {
  unknownKeys(t, "resources", RESOURCE_KEYS, errors);
  const r: NonNullable<DaemonSettings["resources"]> = {};
  for (const key of ["cores", "gpus"] as const) {
    const v = t[key];
    if (v === undefined) continue;
    if (Number.isInteger(v) && (v as number) >= 0) r[key] = v as number;
    else errors.push(configError(`[resources].${key}`, "must be a non-negative integer"));
  }
  if (t.memory !== undefined) {
    const m = size(t.memory, "[resources].memory", errors);
    if (m !== undefined) r.memory = m;
  }
  if (Object.keys(r).length > 0) s.resources = r;
  if (t.slots !== undefined) readSlots(t.slots, r, s, errors);
}

/**
 * `[resources] slots`: sizes may be written like `memory` ("8G"); the layout must fit the
 * pool as the manager will see it (unset keys: this machine), checked here so `config
 * check` reports it with its TOML path.
 */
function readSlots(v: unknown, r: NonNullable<DaemonSettings["resources"]>, s: DaemonSettings, errors: JobtapError[]): void {
  if (!Array.isArray(v)) {
    errors.push(configError("[resources].slots", "must be an array of tables such as { count = 2, cores = 4 }"));
    return;
  }
  const slots = v.map((entry, i) => {
    if (typeof entry !== "object" || entry === null || Array.isArray(entry) || (entry as { memory?: unknown }).memory === undefined) return entry;
    const memory = size((entry as { memory: unknown }).memory, `[resources].slots[${i}].memory`, errors);
    return { ...entry, memory };
  }) as SlotType[];
  const pool = { cores: r.cores ?? cpus().length, gpus: r.gpus ?? 0, memory: r.memory ?? totalmem() };
  if (guard(errors, () => carveSlots(pool, slots)) !== undefined) s.slots = slots;
}

/**
 * Flux `[job-manager]` keys jobtap does not implement: refused rather than silently ignored,
 * so a configuration pasted from Flux does not seem to do what it cannot
 * (docs/configuration.md says why).
 */
const UNSUPPORTED_MANAGER_KEYS: Record<string, string> = {
  housekeeping: "not supported by jobtap (no housekeeping runs after a job; use the perilog plugin's epilog)",
  "journal-size-limit": "not supported by jobtap (its event stream keeps no backlog to limit)",
};

function readManager(t: Record<string, unknown>, s: DaemonSettings, errors: JobtapError[]): void {
  for (const [key, why] of Object.entries(UNSUPPORTED_MANAGER_KEYS)) {
    if (t[key] !== undefined) errors.push(configError(`[job-manager].${key}`, why));
  }
  // The unsupported ones are named above; any other stranger is a slip.
  const others = Object.fromEntries(Object.entries(t).filter(([k]) => !(k in UNSUPPORTED_MANAGER_KEYS)));
  unknownKeys(others, "job-manager", JOB_MANAGER_KEYS, errors);
  for (const [key, field] of [["queue-depth", "queueDepth"], ["inactive-num-limit", "inactiveNumLimit"]] as const) {
    const v = t[key];
    if (v === undefined) continue;
    if (Number.isInteger(v) && (v as number) >= 0) s[field] = v as number;
    else errors.push(configError(`[job-manager].${key}`, "must be a non-negative integer"));
  }
  const age = duration(t["inactive-age-limit"], "[job-manager].inactive-age-limit", errors);
  if (age !== undefined) s.inactiveAgeLimitMs = age;
  const batch = duration(t["batch-window"], "[job-manager].batch-window", errors);
  if (batch !== undefined) s.batchWindowMs = batch;
}

function unknownKeys(t: Record<string, unknown>, name: string, known: string[], errors: JobtapError[]): void {
  for (const key of Object.keys(t)) {
    if (known.includes(key)) continue;
    const guess = closest(key, known);
    const hint = guess === undefined ? "" : `; did you mean "${guess}"?`;
    errors.push(configError(`[${name}].${key}`, `unknown key${hint} (expected ${known.join(", ")})`));
  }
}

/**
 * The top-level tables jobtap reads: the daemon's own, the builtins' (Flux's names), and
 * those of the executors. Plugins see the whole configuration (conf.update, as in Flux) and
 * may read tables of their own, so another table is accepted, unless its name is a slip
 * for one of these (`[job-manger]`), which would silently leave that table unset.
 */
export const KNOWN_TABLES = ["daemon", "resources", "limits", "job-manager", "policy", "queues", "resource", "exec"];

/** [job-manager] keys: the daemon's, the plugin host's, perilog's tables, .update-queue's. */
const JOB_MANAGER_KEYS = [
  "plugins",
  "plugin-path",
  "plugin-deadline",
  "queue-depth",
  "inactive-age-limit",
  "inactive-num-limit",
  "batch-window",
  "prolog",
  "epilog",
  "perilog",
  "stop-queues-on-restart",
];

function unknownTables(raw: Record<string, unknown>, errors: JobtapError[]): void {
  for (const key of Object.keys(raw)) {
    if (KNOWN_TABLES.includes(key)) continue;
    const guess = closest(key, KNOWN_TABLES);
    if (guess === undefined) continue; // a plugin's own table
    errors.push(new JobtapError(ErrorCode.CONFIG, `[${key}]: unknown table; did you mean [${guess}]?`, { path: key }));
  }
}

function duration(v: unknown, where: string, errors: JobtapError[]): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "string" && typeof v !== "number") {
    errors.push(configError(where, 'must be a duration such as "30s" or a number of seconds'));
    return undefined;
  }
  try {
    return parseFSD(v, where) * 1000;
  } catch (e) {
    errors.push(configError(where, (e as Error).message.replace(`${where}: `, "")));
    return undefined;
  }
}

/** A positive integer (a count of jobs, entries, connections). */
function count(v: unknown, where: string, errors: JobtapError[]): number | undefined {
  if (v === undefined) return undefined;
  if (Number.isSafeInteger(v) && (v as number) >= 1) return v as number;
  errors.push(configError(where, `must be a positive integer, got ${JSON.stringify(v)}`));
  return undefined;
}

/** A byte count: an integer, or a string like "512M" / "16G" (powers of 1024). */
function size(v: unknown, where: string, errors: JobtapError[]): number | undefined {
  if (Number.isInteger(v) && (v as number) >= 0) return v as number;
  const m = typeof v === "string" ? /^(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?$/i.exec(v.trim()) : null;
  if (m) return Math.round(Number(m[1]) * (SIZE_UNITS[(m[2] as string).toLowerCase()] as number));
  errors.push(configError(where, `must be a byte count such as 1048576 or "16G", got ${JSON.stringify(v)}`));
  return undefined;
}

/**
 * The host's own checks, once per directive so that every bad entry is reported, plus a
 * lookup of every `load` target (a plugin that cannot be found stops the daemon too).
 */
function checkPlugins(raw: Record<string, unknown>, env: Record<string, string | undefined>, errors: JobtapError[]): void {
  const jm = raw["job-manager"];
  if (typeof jm !== "object" || jm === null || Array.isArray(jm)) return;
  const { plugins, ...rest } = jm as Record<string, unknown>;
  const searchPath = guard(errors, () => readPluginConfig({ "job-manager": rest }).pluginPath) ?? [];
  if (plugins === undefined) return;
  if (!Array.isArray(plugins)) {
    guard(errors, () => readPluginConfig({ "job-manager": { plugins } }));
    return;
  }
  const envPath = (env.JOBTAP_PLUGIN_PATH ?? "").split(":").filter((d) => d !== "");
  plugins.forEach((entry, i) => {
    // Earlier entries are replaced by a harmless one so the host's message keeps index i.
    const probe = [...Array<unknown>(i).fill({ remove: "all" }), entry];
    const directives = guard(errors, () => readPluginConfig({ "job-manager": { plugins: probe } }).directives);
    const load = directives?.[i]?.load;
    if (load === undefined) return;
    guard(errors, () => resolvePlugin(load, BUILTINS, [...envPath, ...searchPath], SHIPPED), `[job-manager.plugins][${i}].load`);
  });
}

function guard<T>(errors: JobtapError[], fn: () => T, where?: string): T | undefined {
  try {
    return fn();
  } catch (e) {
    const err = asConfigError(e);
    errors.push(where === undefined ? err : configError(where, err.message));
    return undefined;
  }
}

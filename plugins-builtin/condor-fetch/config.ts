/**
 * condor-fetch configuration: the plugin's `conf` table gives a pasted HTCondor
 * configuration (`condor_config = "/etc/condor/config.d/50-fetch"`), the same knobs as TOML,
 * or both (the TOML after the file). Both become one HTCondor configuration read by one
 * function, so knob names, defaults and precedence are HTCondor's either way
 * (spec htcondor.md §2.1, §2.2, §3.1, §3.3, §3.4; docs/condor-fetch.md).
 *
 * A bad knob throws naming it with its file:line (or its TOML path): a FetchWorkDelay,
 * START or RANK that does not parse, an interval that is not a whole number, a hook path
 * that is not absolute, a slot keyword for a slot this host does not have.
 */
import { ownerList } from "./owner.js";
import { checkPluginConf } from "../common/config.js";
import type { RequeuePolicy } from "./requeue.js";
import { DEFAULT_REQUEUE } from "./requeue.js";
import { CondorConfig, formatSource, parseExpr, readCondorConfigFile, splitCondorArgs, ErrorCode, JobtapError, type ConfigCheck } from "jobtap/plugin";

/** The hook types of one keyword, as spelled in `<Keyword>_HOOK_<TYPE>` knobs. */
export const HOOK_TYPES = [
  "FETCH_WORK",
  "REPLY_FETCH",
  "EVICT_CLAIM",
  "PREPARE_JOB_BEFORE_TRANSFER",
  "PREPARE_JOB",
  "UPDATE_JOB_INFO",
  "JOB_EXIT",
] as const;
export type HookType = (typeof HOOK_TYPES)[number];

/** The hook programs configured under one keyword (paths are absolute; safety is checked later). */
export interface KeywordHooks {
  keyword: string;
  paths: Partial<Record<HookType, string>>;
  /** `<Keyword>_HOOK_PREPARE_JOB_ARGS`, split with HTCondor's argument rules. */
  prepareJobArgs: string[];
  /** `<Keyword>_HOOK_JOB_EXIT_TIMEOUT` in seconds (default 30). */
  jobExitTimeout: number;
}

/** Everything the plugin runs from. */
export interface FetchConfig {
  /** SlotID → the keyword it fetches with (`SLOT<N>_JOB_HOOK_KEYWORD`, else `STARTD_JOB_HOOK_KEYWORD`). */
  slotKeywords: Map<number, string>;
  /** FetchWorkDelay expression text (undefined: 300 s). */
  fetchWorkDelay: string | undefined;
  /** START and RANK expression text, merged into every slot ad. */
  start: string | undefined;
  rank: string | undefined;
  starterKeyword: string | undefined;
  starterDefaultKeyword: string | undefined;
  /** STARTER_INITIAL_UPDATE_INTERVAL and STARTER_UPDATE_INTERVAL, seconds. */
  initialUpdateInterval: number;
  updateInterval: number;
  /** PREPARE_JOB ≥ 300: the cool-down of a requeued copy and the requeue limit (requeue.ts). */
  requeue: RequeuePolicy;
  /** `JOBTAP_ALLOWED_OWNERS`: the users fetched work may run as; undefined: any (owner.ts). */
  allowedOwners: string[] | undefined;
  /** The hooks of a keyword (any keyword: a job's HookKeyword too); undefined when none is set. */
  hooksFor(keyword: string): KeywordHooks | undefined;
  /** Where the HTCondor file came from, for messages. */
  file: string | undefined;
}

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v);

/** Top-level TOML keys and the knob each becomes. */
const TOP_KNOBS: Record<string, string> = {
  keyword: "STARTD_JOB_HOOK_KEYWORD",
  fetch_work_delay: "FetchWorkDelay",
  start: "START",
  rank: "RANK",
  starter_keyword: "STARTER_JOB_HOOK_KEYWORD",
  starter_default_keyword: "STARTER_DEFAULT_JOB_HOOK_KEYWORD",
  starter_initial_update_interval: "STARTER_INITIAL_UPDATE_INTERVAL",
  starter_update_interval: "STARTER_UPDATE_INTERVAL",
  // HTCondor's cool-down knob; the cap and the limit are jobtap's (HTCondor has neither).
  requeue_delay: "SYSTEM_COOLDOWN_DURATION",
  requeue_delay_max: "JOBTAP_REQUEUE_DELAY_MAX",
  max_requeues: "JOBTAP_MAX_REQUEUES",
  // Who fetched work may run as, in a multi-user instance (owner.ts); HTCondor has no such list.
  allowed_owners: "JOBTAP_ALLOWED_OWNERS",
};
/** Per-keyword TOML keys (`hooks.<KEYWORD>.<key>`) and the knob suffix each becomes. */
const HOOK_KEYS: Record<string, string> = {
  ...Object.fromEntries(HOOK_TYPES.map((t) => [t.toLowerCase(), `HOOK_${t}`])),
  prepare_job_args: "HOOK_PREPARE_JOB_ARGS",
  job_exit_timeout: "HOOK_JOB_EXIT_TIMEOUT",
};
const TOP_KEYS = ["condor_config", ...Object.keys(TOP_KNOBS), "slots", "hooks"];

/** A TOML scalar as knob text; throws naming `at` for anything else. */
function knobText(v: unknown, at: string): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  if (typeof v === "boolean") return v ? "true" : "false";
  throw new JobtapError(ErrorCode.CONFIG, `${at}: must be a string, number or boolean, got ${JSON.stringify(v)}`);
}

/** Adds the TOML keys to `config` as knobs whose source is their TOML path. */
function addToml(config: CondorConfig, conf: Readonly<Table>): void {
  const define = (name: string, v: unknown, at: string) => config.define({ name, value: knobText(v, at), source: { file: at, line: 0 } });
  for (const [k, v] of Object.entries(conf)) {
    if (!TOP_KEYS.includes(k)) throw new JobtapError(ErrorCode.CONFIG, `conf.${k}: unknown key (expected ${TOP_KEYS.join(", ")})`);
    const knob = TOP_KNOBS[k];
    if (knob !== undefined) define(knob, v, `conf.${k}`);
  }
  if (conf.slots !== undefined) {
    if (!isTable(conf.slots)) throw new JobtapError(ErrorCode.CONFIG, "conf.slots: must be a table of SlotID = keyword");
    for (const [n, kw] of Object.entries(conf.slots)) {
      if (!/^[1-9]\d*$/.test(n)) throw new JobtapError(ErrorCode.CONFIG, `conf.slots.${n}: a slot is named by its SlotID (1, 2, ...)`);
      define(`SLOT${n}_JOB_HOOK_KEYWORD`, kw, `conf.slots.${n}`);
    }
  }
  if (conf.hooks !== undefined) {
    if (!isTable(conf.hooks)) throw new JobtapError(ErrorCode.CONFIG, "conf.hooks: must be a table of keyword = { fetch_work = ..., ... }");
    for (const [kw, hooks] of Object.entries(conf.hooks)) {
      if (!/^[A-Za-z0-9_]+$/.test(kw)) throw new JobtapError(ErrorCode.CONFIG, `conf.hooks.${kw}: a keyword is letters, digits and _`);
      if (!isTable(hooks)) throw new JobtapError(ErrorCode.CONFIG, `conf.hooks.${kw}: must be a table`);
      for (const [k, v] of Object.entries(hooks)) {
        const suffix = HOOK_KEYS[k];
        if (suffix === undefined) throw new JobtapError(ErrorCode.CONFIG, `conf.hooks.${kw}.${k}: unknown key (expected ${Object.keys(HOOK_KEYS).join(", ")})`);
        define(`${kw}_${suffix}`, v, `conf.hooks.${kw}.${k}`);
      }
    }
  }
}

/** `name = value (file:line)` for messages. */
function located(config: CondorConfig, name: string): string {
  const src = config.source(name);
  return src ? `${formatSource(src)}: ${name}` : name;
}

function expression(config: CondorConfig, name: string): string | undefined {
  const text = config.get(name);
  if (text === undefined) return undefined;
  try {
    parseExpr(text, true);
  } catch (e) {
    throw new JobtapError(ErrorCode.CONFIG, `${located(config, name)} = ${text}: not a ClassAd expression: ${(e as Error).message}`);
  }
  return text;
}

function seconds(config: CondorConfig, name: string, dflt: number, unit = " of seconds"): number {
  const text = config.get(name);
  if (text === undefined) return dflt;
  const n = Number(text);
  if (!/^\s*\d+\s*$/.test(text) || !Number.isSafeInteger(n)) throw new JobtapError(ErrorCode.CONFIG, `${located(config, name)} = ${text}: must be a whole number${unit}`);
  return n;
}

/** The hooks of `keyword` from the config, or undefined when it defines none. Throws on a relative path. */
function keywordHooks(config: CondorConfig, keyword: string): KeywordHooks | undefined {
  const paths: KeywordHooks["paths"] = {};
  for (const t of HOOK_TYPES) {
    const name = `${keyword}_HOOK_${t}`;
    const path = config.get(name);
    if (path === undefined) continue;
    if (!path.startsWith("/")) throw new JobtapError(ErrorCode.CONFIG, `${located(config, name)} = ${path}: a hook path must be absolute`);
    paths[t] = path;
  }
  if (Object.keys(paths).length === 0) return undefined;
  const args = config.get(`${keyword}_HOOK_PREPARE_JOB_ARGS`);
  return {
    keyword,
    paths,
    prepareJobArgs: args === undefined ? [] : splitCondorArgs(args),
    jobExitTimeout: seconds(config, `${keyword}_HOOK_JOB_EXIT_TIMEOUT`, 30),
  };
}

/**
 * Reads the plugin's configuration. `slotIds` are the host's SlotIDs (a keyword for any
 * other slot is an error); undefined (`checkConfig`, no host yet) skips that one check. The HTCondor file is read again at each call, so a
 * `jobtap config reload` picks up an edited file.
 */
export function readFetchConfig(conf: Readonly<Table>, slotIds: readonly number[] | undefined, env: Record<string, string | undefined> = process.env): FetchConfig {
  const file = conf.condor_config;
  if (file !== undefined && (typeof file !== "string" || file === "")) throw new JobtapError(ErrorCode.CONFIG, "conf.condor_config: must be a file path");
  const config = file === undefined ? new CondorConfig({ env }) : readCondorConfigFile(file, { env });
  addToml(config, conf);
  const startd = config.get("STARTD_JOB_HOOK_KEYWORD");
  const slotKeywords = new Map<number, string>();
  for (const name of config.names()) {
    const m = /^slot(\d+)_JOB_HOOK_KEYWORD$/i.exec(name);
    if (m === null || config.get(name) === undefined) continue;
    const id = Number(m[1]);
    if (slotIds !== undefined && !slotIds.includes(id)) throw new JobtapError(ErrorCode.CONFIG, `${located(config, name)}: no slot ${id} on this host (it has ${slotIds.length > 0 ? `slots ${slotIds.join(", ")}` : "no slots"})`);
  }
  for (const id of slotIds ?? []) {
    const kw = config.get(`SLOT${id}_JOB_HOOK_KEYWORD`) ?? startd;
    if (kw !== undefined) slotKeywords.set(id, kw);
  }
  const cache = new Map<string, KeywordHooks | undefined>();
  const hooksFor = (keyword: string): KeywordHooks | undefined => {
    const key = keyword.toUpperCase();
    if (!cache.has(key)) cache.set(key, keywordHooks(config, keyword));
    return cache.get(key);
  };
  // Every keyword the config names is read now, so a bad hook knob fails the load, not a job.
  for (const name of config.names()) {
    const m = /^(\w+?)_HOOK_(?:\w+)$/i.exec(name);
    if (m !== null && !/^(JOB_ROUTER|SHADOW)$/i.test(m[1]!)) hooksFor(m[1]!);
  }
  return {
    slotKeywords,
    fetchWorkDelay: expression(config, "FetchWorkDelay"),
    start: expression(config, "START"),
    rank: expression(config, "RANK"),
    starterKeyword: config.get("STARTER_JOB_HOOK_KEYWORD"),
    starterDefaultKeyword: config.get("STARTER_DEFAULT_JOB_HOOK_KEYWORD"),
    initialUpdateInterval: seconds(config, "STARTER_INITIAL_UPDATE_INTERVAL", 8),
    updateInterval: seconds(config, "STARTER_UPDATE_INTERVAL", 300),
    requeue: requeuePolicy(config),
    allowedOwners: ownerList(config.get("JOBTAP_ALLOWED_OWNERS")),
    hooksFor,
    file,
  };
}

/** The requeue knobs: whole numbers, the cap not below the first delay. */
function requeuePolicy(config: CondorConfig): RequeuePolicy {
  const delay = seconds(config, "SYSTEM_COOLDOWN_DURATION", DEFAULT_REQUEUE.delay);
  const delayMax = seconds(config, "JOBTAP_REQUEUE_DELAY_MAX", Math.max(DEFAULT_REQUEUE.delayMax, delay));
  if (delayMax < delay) throw new JobtapError(ErrorCode.CONFIG, `${located(config, "JOBTAP_REQUEUE_DELAY_MAX")} = ${delayMax}: must not be below SYSTEM_COOLDOWN_DURATION (${delay})`);
  const maxRequeues = seconds(config, "JOBTAP_MAX_REQUEUES", DEFAULT_REQUEUE.maxRequeues, "");
  return { delay, delayMax, maxRequeues };
}

/** What `conf.update` would refuse in each `[job-manager] plugins` entry loading condor-fetch (slots unknown until the host runs). */
export const checkConfig: ConfigCheck = checkPluginConf("condor-fetch", (conf) => readFetchConfig(conf, undefined));

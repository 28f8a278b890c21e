/**
 * condor-cron configuration: the plugin's `conf` table gives either a pasted HTCondor
 * configuration (`condor_config = "/etc/condor/config.d/50-cron"`) or the same jobs as
 * TOML (`startd`, `schedd`, `benchmarks` tables), or both (the TOML after the file). Both
 * become one HTCondor configuration, read into cron tables by `cronTableFromConfig`, so the
 * knobs, defaults and skip rules are HTCondor's either way (docs/condor-cron.md).
 *
 * Errors in the `conf` table itself throw naming its TOML path; a bad job definition does
 * not throw: the job is skipped and reported with the knob and its file:line (or TOML path).
 */
import { checkPluginConf } from "../common/config.js";
import { CondorConfig, readCondorConfigFile, ErrorCode, JobtapError, type ConfigCheck } from "jobtap/plugin";
import { cronTableFromConfig, type CronTable } from "./table.js";

export type CronKind = "startd" | "schedd" | "benchmarks";
export const KINDS: readonly CronKind[] = ["startd", "schedd", "benchmarks"];
export const KNOB_PREFIX = { startd: "STARTD_CRON_", schedd: "SCHEDD_CRON_", benchmarks: "BENCHMARKS_" } as const;
/** The manager's name in the hook's environment (`<MGR>_INTERFACE_VERSION`). */
export const MANAGER_NAME = { startd: "STARTD", schedd: "SCHEDD", benchmarks: "BENCHMARKS" } as const;
/** The daemon a manager belongs to (`<SUBSYS>_CRON_NAME`). */
export const SUBSYS = { startd: "STARTD", schedd: "SCHEDD", benchmarks: "STARTD" } as const;

/** Everything the plugin runs from. */
export interface CronConfig {
  tables: Record<CronKind, CronTable>;
  /** `<P>CONFIG_VAL` per manager (exported to the jobs as `<MGR>_CONFIG_VAL`). */
  configVal: Partial<Record<CronKind, string>>;
  /** RUNBENCHMARKS (a ClassAd expression over slot 1's ad); undefined: the default. */
  runBenchmarks: string | undefined;
  /** Seconds between checks whether benchmarks should run. */
  benchmarkCheck: number;
  /** Bytes of one run's stdout read; past it the output is discarded. */
  outputCap: number;
  /** Spawn helper processes that start the jobs (0: the daemon spawns them itself). */
  spawnHelpers: number;
  /** Where the config came from, for messages. */
  file: string | undefined;
}

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v);

/** Per-job TOML keys and the HTCondor item each becomes. */
const JOB_KEYS: Record<string, string> = {
  executable: "EXECUTABLE",
  mode: "MODE",
  period: "PERIOD",
  args: "ARGS",
  env: "ENV",
  cwd: "CWD",
  prefix: "PREFIX",
  kill: "KILL",
  reconfig: "RECONFIG",
  reconfig_rerun: "RECONFIG_RERUN",
  job_load: "JOB_LOAD",
  condition: "CONDITION",
  slots: "SLOTS",
  metrics: "METRICS",
  config_val_prog: "CONFIG_VAL_PROG",
};
const MANAGER_KEYS: Record<string, string> = {
  max_job_load: "MAX_JOB_LOAD",
  config_val: "CONFIG_VAL",
  log_non_zero_exit: "LOG_NON_ZERO_EXIT",
  autopublish: "AUTOPUBLISH",
};
const TOP_KEYS = new Set(["condor_config", "startd", "schedd", "benchmarks", "run_benchmarks", "benchmark_check", "output_cap", "spawn_helpers"]);

/** One argument in HTCondor's V2 quoting: inside single quotes, a quote doubled. */
const v2 = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** A TOML value as HTCondor knob text; throws naming `at` when it has the wrong type. */
function knobText(key: string, v: unknown, at: string): string {
  if (key === "args") {
    if (!Array.isArray(v) || !v.every((a) => typeof a === "string")) throw new JobtapError(ErrorCode.CONFIG, `${at}: must be an array of strings`);
    return `"${v.map(v2).join(" ")}"`;
  }
  if (key === "env") {
    if (!isTable(v) || !Object.values(v).every((a) => typeof a === "string")) throw new JobtapError(ErrorCode.CONFIG, `${at}: must be a table of strings`);
    return `"${Object.entries(v).map(([k, x]) => `${k}=${v2(x as string)}`).join(" ")}"`;
  }
  if (key === "slots" || key === "metrics") {
    if (!Array.isArray(v) || !v.every((a) => typeof a === (key === "slots" ? "number" : "string"))) {
      throw new JobtapError(ErrorCode.CONFIG, `${at}: must be an array of ${key === "slots" ? "slot numbers" : "strings"}`);
    }
    return v.join(",");
  }
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  if (typeof v === "string") return v;
  throw new JobtapError(ErrorCode.CONFIG, `${at}: must be a string, number or boolean, got ${JSON.stringify(v)}`);
}

/** Adds one manager's TOML table to `config` as knobs whose source is the TOML path. */
function addManager(config: CondorConfig, kind: CronKind, t: unknown): void {
  const at = `conf.${kind}`;
  if (t === undefined) return;
  if (!isTable(t)) throw new JobtapError(ErrorCode.CONFIG, `${at}: must be a table`);
  const P = KNOB_PREFIX[kind];
  const define = (name: string, value: string, where: string) => config.define({ name, value, source: { file: where, line: 0 } });
  for (const [k, v] of Object.entries(t)) {
    if (k === "jobs") continue;
    const item = MANAGER_KEYS[k];
    if (item === undefined || (item === "AUTOPUBLISH" && kind !== "startd")) {
      throw new JobtapError(ErrorCode.CONFIG, `${at}.${k}: unknown key (expected jobs, ${Object.keys(MANAGER_KEYS).filter((x) => x !== "autopublish" || kind === "startd").join(", ")})`);
    }
    define(item === "AUTOPUBLISH" ? "STARTD_CRON_AUTOPUBLISH" : `${P}${item}`, knobText(k, v, `${at}.${k}`), `${at}.${k}`);
  }
  const jobs = t.jobs;
  if (jobs === undefined) return;
  if (!isTable(jobs)) throw new JobtapError(ErrorCode.CONFIG, `${at}.jobs: must be a table of jobs`);
  const names: string[] = [];
  for (const [name, job] of Object.entries(jobs)) {
    const jat = `${at}.jobs.${name}`;
    if (!/^[A-Za-z0-9_]+$/.test(name)) throw new JobtapError(ErrorCode.CONFIG, `${jat}: a job name is letters, digits and _`);
    if (!isTable(job)) throw new JobtapError(ErrorCode.CONFIG, `${jat}: must be a table`);
    for (const [k, v] of Object.entries(job)) {
      const item = JOB_KEYS[k];
      if (item === undefined) throw new JobtapError(ErrorCode.CONFIG, `${jat}.${k}: unknown key (expected ${Object.keys(JOB_KEYS).join(", ")})`);
      define(`${P}${name}_${item}`, knobText(k, v, `${jat}.${k}`), `${jat}.${k}`);
    }
    names.push(name);
  }
  const listed = config.get(`${P}JOBLIST`);
  define(`${P}JOBLIST`, [listed ?? "", ...names].join(" ").trim(), `${at}.jobs`);
}

function positive(v: unknown, at: string, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== "number" || !(v > 0) || !Number.isFinite(v)) throw new JobtapError(ErrorCode.CONFIG, `${at}: must be a positive number, got ${JSON.stringify(v)}`);
  return v;
}

function helperCount(v: unknown): number {
  if (v === undefined) return 1;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > 64) throw new JobtapError(ErrorCode.CONFIG, `conf.spawn_helpers: must be an integer from 0 to 64, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * Reads the plugin's configuration. `conf` is `p.conf`; the HTCondor file (if any) is read
 * again at each call, so a `jobtap config reload` picks up an edited file.
 */
export function readCronConfig(conf: Readonly<Table>, env: Record<string, string | undefined> = process.env): CronConfig {
  for (const k of Object.keys(conf)) if (!TOP_KEYS.has(k)) throw new JobtapError(ErrorCode.CONFIG, `conf.${k}: unknown key (expected ${[...TOP_KEYS].join(", ")})`);
  const file = conf.condor_config;
  if (file !== undefined && (typeof file !== "string" || file === "")) throw new JobtapError(ErrorCode.CONFIG, "conf.condor_config: must be a file path");
  const config = file === undefined ? new CondorConfig({ env }) : readCondorConfigFile(file, { env });
  for (const kind of KINDS) addManager(config, kind, conf[kind]);
  const runBench = conf.run_benchmarks;
  if (runBench !== undefined && typeof runBench !== "string") throw new JobtapError(ErrorCode.CONFIG, "conf.run_benchmarks: must be a ClassAd expression string");
  const tables = {} as Record<CronKind, CronTable>;
  const configVal: CronConfig["configVal"] = {};
  for (const kind of KINDS) {
    const P = KNOB_PREFIX[kind];
    tables[kind] = cronTableFromConfig(config, P);
    // jobtap ships no condor_mips/condor_kflops: benchmarks run only when listed.
    if (kind === "benchmarks" && !config.has(`${P}JOBLIST`)) tables[kind] = { ...tables[kind], jobs: [], skipped: [] };
    const cv = config.get(`${P}CONFIG_VAL`);
    if (cv !== undefined) configVal[kind] = cv;
  }
  return {
    tables,
    configVal,
    runBenchmarks: runBench ?? config.get("RUNBENCHMARKS"),
    benchmarkCheck: positive(conf.benchmark_check, "conf.benchmark_check", 300),
    outputCap: positive(conf.output_cap, "conf.output_cap", 1024 * 1024),
    spawnHelpers: helperCount(conf.spawn_helpers),
    file,
  };
}

/** What `conf.update` would refuse in each `[job-manager] plugins` entry loading condor-cron. */
export const checkConfig: ConfigCheck = checkPluginConf("condor-cron", (conf) => readCronConfig(conf));

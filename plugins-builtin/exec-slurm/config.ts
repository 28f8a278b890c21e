/**
 * `[exec.slurm]`: where the slurm executor finds the cluster and how it talks to it.
 *
 *   [exec.slurm]
 *   bindir = "/usr/bin"            # directory of sbatch, squeue, scancel, sacct (default: PATH)
 *   slurm-conf = "/etc/slurm/slurm.conf"   # SLURM_CONF for every command (default: inherited)
 *   partition = "batch"            # defaults for jobs that name none
 *   account = "physics"
 *   qos = "normal"
 *   sbatch-args = ["--exclusive"]  # appended to every sbatch
 *   poll-period = "5s"             # one squeue for all jobs this often
 *   max-poll-period = "60s"        # back-off ceiling while slurmctld does not answer
 *   max-poll-failures = 10         # failed polls in a row before waiting jobs get an exception
 *   command-timeout = "30s"        # a Slurm command running longer is killed (and retried)
 *   submit-concurrency = 4         # sbatch processes at once
 *
 * Every error names its TOML path; an unknown key is an error.
 */
import { ErrorCode, JobtapError, parseFSD } from "jobtap/plugin";
import { ConfigError, isTable, tableAt, type Table } from "../common/config.js";
import type { SlurmExecConfig } from "./executor.js";

const KEYS = [
  "bindir",
  "slurm-conf",
  "partition",
  "account",
  "qos",
  "sbatch-args",
  "poll-period",
  "max-poll-period",
  "max-poll-failures",
  "command-timeout",
  "submit-concurrency",
] as const;

/** The defaults: Slurm found on PATH, polls every 5 s. */
export function defaultSlurmConfig(): SlurmExecConfig {
  return {
    site: { commandTimeoutMs: 30_000 },
    choices: {},
    pollPeriodMs: 5_000,
    maxPollPeriodMs: 60_000,
    maxPollFailures: 10,
    submitConcurrency: 4,
  };
}

/** Reads `[exec.slurm]` from the whole instance config; throws ConfigError naming the key. */
export function readSlurmConfig(conf: Table): SlurmExecConfig {
  const c = defaultSlurmConfig();
  const t = tableAt(conf, ["exec", "slurm"], "");
  if (t === undefined) return c;
  for (const key of Object.keys(t)) {
    if (!(KEYS as readonly string[]).includes(key)) throw new ConfigError(`[exec.slurm].${key}: unknown key (expected ${KEYS.join(", ")})`);
  }
  const bindir = text(t, "bindir");
  if (bindir !== undefined) c.site.bindir = bindir;
  const slurmConf = text(t, "slurm-conf");
  if (slurmConf !== undefined) c.site.slurmConf = slurmConf;
  for (const key of ["partition", "account", "qos"] as const) {
    const v = text(t, key);
    if (v !== undefined) c.choices[key] = v;
  }
  const args = t["sbatch-args"];
  if (args !== undefined) {
    if (!Array.isArray(args) || !args.every((a) => typeof a === "string")) throw new ConfigError("[exec.slurm].sbatch-args: must be an array of strings");
    c.choices.args = args as string[];
  }
  c.pollPeriodMs = duration(t, "poll-period") ?? c.pollPeriodMs;
  c.maxPollPeriodMs = Math.max(c.pollPeriodMs, duration(t, "max-poll-period") ?? c.maxPollPeriodMs);
  c.site.commandTimeoutMs = duration(t, "command-timeout") ?? c.site.commandTimeoutMs;
  c.submitConcurrency = count(t, "submit-concurrency") ?? c.submitConcurrency;
  c.maxPollFailures = count(t, "max-poll-failures") ?? c.maxPollFailures;
  return c;
}

function count(t: Table, key: string): number | undefined {
  const n = t[key];
  if (n === undefined) return undefined;
  if (!Number.isInteger(n) || (n as number) < 1) throw new ConfigError(`[exec.slurm].${key}: must be an integer >= 1, got ${JSON.stringify(n)}`);
  return n as number;
}

function text(t: Table, key: string): string | undefined {
  const v = t[key];
  if (v === undefined) return undefined;
  if (typeof v !== "string" || v === "") throw new ConfigError(`[exec.slurm].${key}: must be a non-empty string, got ${JSON.stringify(v)}`);
  return v;
}

function duration(t: Table, key: string): number | undefined {
  const v = t[key];
  if (v === undefined) return undefined;
  let seconds: number;
  try {
    if (typeof v !== "string" && typeof v !== "number") throw new JobtapError(ErrorCode.CONFIG, "not a duration");
    seconds = parseFSD(v, `[exec.slurm].${key}`);
  } catch {
    throw new ConfigError(`[exec.slurm].${key}: must be a duration such as "5s" or a number of seconds, got ${JSON.stringify(v)}`);
  }
  if (!(seconds > 0)) throw new ConfigError(`[exec.slurm].${key}: must be more than 0, got ${JSON.stringify(v)}`);
  return seconds * 1000;
}

/** True for a jobspec that names the slurm executor. */
export function wantsSlurm(jobspec: { attributes: { system?: Table } }): boolean {
  const exec = jobspec.attributes.system?.exec;
  return isTable(exec) && exec.name === "slurm";
}

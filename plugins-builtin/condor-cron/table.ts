/**
 * Daemon ClassAd hook ("cron") job tables from an HTCondor configuration (spec §7.1, §7.2):
 * `<P>JOBLIST`, `<P>MAX_JOB_LOAD` and the per-job `<P><Job>_<ITEM>` knobs, typed.
 *
 * As in HTCondor, a job with a bad definition (no EXECUTABLE, unknown MODE, bad PERIOD, bad
 * CONDITION, bad ENV) is skipped — reported in `skipped` with the reason and knob location,
 * never half-configured.
 */
import { formatSource, parseExpr, type CondorConfig, ErrorCode, JobtapError } from "jobtap/plugin";

export type CronPrefix = "STARTD_CRON_" | "SCHEDD_CRON_" | "BENCHMARKS_";
export type CronMode = "Periodic" | "WaitForExit" | "OneShot" | "OnDemand";

/** One configured cron job. */
export interface CronJobConfig {
  name: string;
  executable: string;
  mode: CronMode;
  /** Seconds; required for Periodic (non-zero) and WaitForExit. */
  period?: number;
  /** ARGS; the hook runs with the job name in front of them (argv = name, ...args). */
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** Prepended to every output line before parsing. */
  prefix: string;
  jobLoad: number;
  kill: boolean;
  reconfig: boolean;
  reconfigRerun: boolean;
  /** ClassAd expression over the daemon ad (startd only). */
  condition?: string;
  /** Slot ids allowed to merge this job's output; undefined = all slots. */
  slots?: number[];
  metrics?: { kind: "SUM" | "PEAK"; name: string }[];
  configValProg?: string;
  /** Knobs read and ignored, for the log (a PERIOD of a OneShot job, a bad METRICS item). */
  notes?: string[];
}

/** The jobs of one cron manager. */
export interface CronTable {
  prefix: CronPrefix;
  maxJobLoad: number;
  jobs: CronJobConfig[];
  skipped: { job: string; reason: string }[];
  /** STARTD_CRON_AUTOPUBLISH (startd only). */
  autopublish: "Never" | "Always" | "If_Changed";
  logNonZeroExit: boolean;
}

const MODES: readonly CronMode[] = ["Periodic", "WaitForExit", "OneShot", "OnDemand"];

/** HTCondor's cron booleans: true only when the first character is T or t. */
export function cronBool(value: string | undefined): boolean {
  return value !== undefined && /^t/i.test(value);
}

/** `15s`, `10m`, `1h`, `300` → seconds; undefined when the text is not such a period. */
export function parseCronPeriod(text: string): number | undefined {
  const m = /^(\d+)\s*([smh]?)$/i.exec(text.trim());
  if (!m) return undefined;
  const unit = ({ "": 1, s: 1, m: 60, h: 3600 } as Record<string, number>)[m[2]!.toLowerCase()]!;
  return Number(m[1]) * unit;
}

/** Splits V2 (`"a 'b c'"`) or V1 (whitespace-separated) argument text. */
export function splitCronArgs(text: string): string[] {
  const t = text.trim();
  if (!(t.length >= 2 && t.startsWith('"') && t.endsWith('"'))) return t.split(/\s+/).filter((a) => a !== "");
  const args: string[] = [];
  let current: string | undefined;
  const inner = t.slice(1, -1);
  for (let i = 0; i < inner.length; i++) {
    const ch = inner[i]!;
    if (ch === "'") {
      current ??= "";
      for (i++; i < inner.length; i++) {
        if (inner[i] === "'" && inner[i + 1] === "'") current += inner[i++];
        else if (inner[i] === "'") break;
        else current += inner[i];
      }
    } else if (/\s/.test(ch)) {
      if (current !== undefined) args.push(current);
      current = undefined;
    } else current = (current ?? "") + ch;
  }
  if (current !== undefined) args.push(current);
  return args;
}

/** Parses V1 (`A=1;B=2`) or V2 (`"A=1 B=2"`) environment text; throws on a bad entry. */
export function parseCronEnv(text: string): Record<string, string> {
  const t = text.trim();
  const v2 = t.length >= 2 && t.startsWith('"') && t.endsWith('"');
  const items = v2 ? splitCronArgs(t) : t.split(";").map((s) => s.trim()).filter((s) => s !== "");
  const env: Record<string, string> = {};
  for (const item of items) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new JobtapError(ErrorCode.CONFIG, `"${item}" is not NAME=value`);
    env[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return env;
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}

/** Reads one manager's cron table; `prefix` is the knob prefix (`STARTD_CRON_`, ...). */
export function cronTableFromConfig(config: CondorConfig, prefix: CronPrefix): CronTable {
  const bench = prefix === "BENCHMARKS_";
  const names = config.has(`${prefix}JOBLIST`) ? config.getList(`${prefix}JOBLIST`) : bench ? ["MIPS", "KFLOPS"] : [];
  const table: CronTable = {
    prefix,
    maxJobLoad: clamp(config.getNumber(`${prefix}MAX_JOB_LOAD`, bench ? 1.0 : 0.1), 0.01, 1000),
    jobs: [],
    skipped: [],
    autopublish: autopublish(config.get("STARTD_CRON_AUTOPUBLISH")),
    logNonZeroExit: cronBool(config.get(`${prefix}LOG_NON_ZERO_EXIT`)),
  };
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    const job = readJob(config, prefix, name);
    if (typeof job === "string") table.skipped.push({ job: name, reason: job });
    else table.jobs.push(job);
  }
  return table;
}

function autopublish(value: string | undefined): CronTable["autopublish"] {
  const v = (value ?? "").toLowerCase();
  return v === "always" ? "Always" : v === "if_changed" ? "If_Changed" : "Never";
}

/** One job, or the reason it is skipped. */
function readJob(config: CondorConfig, prefix: CronPrefix, name: string): CronJobConfig | string {
  const knob = (item: string): string => `${prefix}${name}_${item}`;
  const where = (item: string): string => {
    const src = config.source(knob(item));
    return src ? ` (${formatSource(src)})` : "";
  };
  const bench = prefix === "BENCHMARKS_";
  const benchExe = ({ mips: "condor_mips", kflops: "condor_kflops" } as Record<string, string>)[name.toLowerCase()];
  const executable = config.get(knob("EXECUTABLE")) ?? (bench && benchExe ? config.expand(`$(LIBEXEC)/${benchExe}`) : undefined);
  if (executable === undefined) return `${knob("EXECUTABLE")} is not set`;
  const modeText = config.get(knob("MODE")) ?? (bench ? "OnDemand" : "Periodic");
  const mode = MODES.find((m) => m.toLowerCase() === modeText.toLowerCase());
  if (!mode) return `${knob("MODE")} = ${modeText}${where("MODE")} is not Periodic, WaitForExit, OneShot or OnDemand`;
  if (bench && mode !== "OnDemand") return `${knob("MODE")}${where("MODE")}: benchmark jobs must be OnDemand`;
  const job: CronJobConfig = {
    name,
    executable,
    mode,
    args: splitCronArgs(config.get(knob("ARGS")) ?? ""),
    env: {},
    prefix: config.get(knob("PREFIX")) ?? "",
    jobLoad: clamp(config.getNumber(knob("JOB_LOAD"), bench ? 1.0 : 0.01), 0, 100),
    kill: cronBool(config.get(knob("KILL"))),
    reconfig: cronBool(config.get(knob("RECONFIG"))),
    reconfigRerun: !bench && cronBool(config.get(knob("RECONFIG_RERUN"))),
  };
  return addOptional(config, job, knob, where) ?? job;
}

function note(job: CronJobConfig, text: string): void {
  (job.notes ??= []).push(text);
}

/** Fills the optional items; returns a skip reason when one is invalid. */
function addOptional(
  config: CondorConfig,
  job: CronJobConfig,
  knob: (item: string) => string,
  where: (item: string) => string,
): string | undefined {
  const periodText = config.get(knob("PERIOD"));
  if (periodText !== undefined && (job.mode === "OneShot" || job.mode === "OnDemand")) {
    note(job, `${knob("PERIOD")}${where("PERIOD")} is ignored for a ${job.mode} job`);
  } else if (periodText !== undefined) {
    const period = parseCronPeriod(periodText);
    if (period === undefined) return `${knob("PERIOD")} = ${periodText}${where("PERIOD")} is not a period (N, Ns, Nm, Nh)`;
    job.period = period;
  }
  if (job.mode === "Periodic" && !job.period) return `${knob("PERIOD")} must be set and non-zero for a Periodic job`;
  if (job.mode === "WaitForExit" && job.period === undefined) return `${knob("PERIOD")} must be set for a WaitForExit job`;
  const envText = config.get(knob("ENV"));
  try {
    if (envText !== undefined) job.env = parseCronEnv(envText);
  } catch (e) {
    return `${knob("ENV")}${where("ENV")}: ${(e as Error).message}`;
  }
  const cwd = config.get(knob("CWD"));
  if (cwd !== undefined) job.cwd = cwd;
  const condition = config.get(knob("CONDITION"));
  if (condition !== undefined) {
    try {
      parseExpr(condition, true);
    } catch (e) {
      return `${knob("CONDITION")}${where("CONDITION")} does not parse: ${(e as Error).message}`;
    }
    job.condition = condition;
  }
  const slots = config.getList(knob("SLOTS"));
  if (slots.length > 0 && slots.every((s) => /^\d+$/.test(s))) job.slots = slots.map(Number);
  // Each METRICS item on its own, as HTCondor: a bad one is noted and dropped, the rest kept.
  for (const item of config.getList(knob("METRICS"))) {
    const m = /^(SUM|PEAK):(\w+)$/i.exec(item);
    if (m) (job.metrics ??= []).push({ kind: m[1]!.toUpperCase() as "SUM" | "PEAK", name: m[2]! });
    else note(job, `${knob("METRICS")}${where("METRICS")}: item ${JSON.stringify(item)} is not SUM:<Name> or PEAK:<Name>; ignored`);
  }
  const prog = config.get(knob("CONFIG_VAL_PROG"));
  if (prog !== undefined) job.configValProg = prog;
  return undefined;
}

/**
 * perilog configuration: `[job-manager.prolog]`, `[job-manager.epilog]` (command, per-rank,
 * timeout, kill-timeout, cancel-on-exception) and `[job-manager.perilog] log-ignore`.
 * Every error names its TOML path.
 */
import { ErrorCode, JobtapError, parseFSD } from "jobtap/plugin";

/** One of the two commands, as configured. */
export interface PerilogConf {
  command: string[];
  perRank: boolean;
  /** Seconds; 0 means no time limit. */
  timeout: number;
  killTimeout: number;
  cancelOnException: boolean;
}

export interface PerilogConfig {
  prolog: PerilogConf | undefined;
  epilog: PerilogConf | undefined;
  logIgnore: RegExp[];
}

type Table = Record<string, unknown>;

const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v);

function seconds(v: unknown, at: string, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== "string" && typeof v !== "number") throw new JobtapError(ErrorCode.CONFIG, `${at}: must be a duration, got ${JSON.stringify(v)}`);
  const s = parseFSD(v, at);
  return s === Infinity ? 0 : s;
}

function bool(v: unknown, at: string, dflt: boolean): boolean {
  if (v === undefined) return dflt;
  if (typeof v !== "boolean") throw new JobtapError(ErrorCode.CONFIG, `${at}: must be a boolean, got ${JSON.stringify(v)}`);
  return v;
}

function readOne(t: unknown, which: "prolog" | "epilog"): PerilogConf | undefined {
  const where = `[job-manager.${which}]`;
  if (t === undefined) return undefined;
  if (!isTable(t)) throw new JobtapError(ErrorCode.CONFIG, `${where}: must be a table`);
  const cmd = t.command;
  if (cmd === undefined) return undefined;
  if (!Array.isArray(cmd) || cmd.length === 0 || !cmd.every((a) => typeof a === "string")) {
    throw new JobtapError(ErrorCode.CONFIG, `${where}.command: must be a non-empty array of strings`);
  }
  return {
    command: cmd as string[],
    perRank: bool(t["per-rank"], `${where}.per-rank`, false),
    timeout: seconds(t.timeout, `${where}.timeout`, which === "prolog" ? 1800 : 0),
    killTimeout: seconds(t["kill-timeout"], `${where}.kill-timeout`, 60),
    cancelOnException: bool(t["cancel-on-exception"], `${where}.cancel-on-exception`, which === "prolog"),
  };
}

/** Reads the perilog tables from the instance config; throws naming the bad key. */
export function readPerilogConfig(conf: Table): PerilogConfig {
  const jm = conf["job-manager"];
  if (jm !== undefined && !isTable(jm)) throw new JobtapError(ErrorCode.CONFIG, "[job-manager]: must be a table");
  const t = jm ?? {};
  const perilog = t.perilog;
  if (perilog !== undefined && !isTable(perilog)) throw new JobtapError(ErrorCode.CONFIG, "[job-manager.perilog]: must be a table");
  const ignore = perilog?.["log-ignore"] ?? [];
  if (!Array.isArray(ignore) || !ignore.every((r) => typeof r === "string")) {
    throw new JobtapError(ErrorCode.CONFIG, "[job-manager.perilog].log-ignore: must be an array of strings");
  }
  const logIgnore = ignore.map((r, i) => {
    try {
      return new RegExp(r as string);
    } catch (e) {
      throw new JobtapError(ErrorCode.CONFIG, `[job-manager.perilog].log-ignore[${i}]: ${(e as Error).message}`);
    }
  });
  return { prolog: readOne(t.prolog, "prolog"), epilog: readOne(t.epilog, "epilog"), logIgnore };
}

/** The plugin.query form of one command's configuration. */
export function queryConf(c: PerilogConf | undefined): Record<string, unknown> | undefined {
  if (c === undefined) return undefined;
  return {
    command: c.command,
    per_rank: c.perRank,
    cancel_on_exception: c.cancelOnException,
    timeout: c.timeout,
    "kill-timeout": c.killTimeout,
  };
}

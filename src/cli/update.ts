/**
 * `jobtap update [-n] [-v] ID KEY=VALUE...`, like `flux update`: asks the job manager to
 * change jobspec keys of an active job, all or nothing; plugins decide which keys may
 * change (`job.update.<key>`), and a refusal is printed with the plugin's message.
 *
 * Keys are jobspec paths; one not under `attributes.`, `resources.` or `tasks.` gets
 * `attributes.system.` in front (so `queue` is `attributes.system.queue`), and `name` is
 * `attributes.system.job.name`. Values are JSON where they parse, else strings. The
 * duration takes an FSD (`60` is seconds, `10m`, `inf` for unlimited = 0) or an adjustment
 * of the current duration (`+1m`, `-30s`), which needs the job to have a finite one.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import { parseFSD } from "../manager/base/fsd.js";
import type { DaemonClient } from "../server/client.js";
import { optFlag, parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import { jobIdArg } from "./jobid.js";
import type { Subcommand } from "./io.js";
import { jsonOrString } from "./jobspec.js";

const DURATION = "attributes.system.duration";
const TOP = /^(attributes|resources|tasks)\./;

/** A duration given relative to the job's current one. */
export interface DurationAdjustment {
  sign: 1 | -1;
  seconds: number;
}

/** The updates of a command line; `adjust` is set when the duration is `+FSD`/`-FSD`. */
export interface ParsedUpdates {
  updates: Record<string, unknown>;
  adjust?: DurationAdjustment;
}

/** The jobspec path a command-line key stands for. */
export function updateKey(key: string): string {
  if (key === "name") return "attributes.system.job.name";
  if (key === "duration") return DURATION;
  return TOP.test(key) ? key : `attributes.system.${key}`;
}

/** Parses `KEY=VALUE` pairs; a malformed pair or duration is a USAGE error naming it. */
export function parseUpdatePairs(pairs: string[]): ParsedUpdates {
  const out: ParsedUpdates = { updates: {} };
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw usage(`"${pair}" is not KEY=VALUE`);
    const key = updateKey(pair.slice(0, eq));
    if (key in out.updates) throw usage(`key "${key}" given twice`);
    const value = pair.slice(eq + 1);
    if (key !== DURATION) {
      out.updates[key] = jsonOrString(value);
      continue;
    }
    const m = /^([+-])(.*)$/.exec(value.trim());
    if (m) {
      out.adjust = { sign: m[1] === "+" ? 1 : -1, seconds: fsd(m[2] as string, pair) };
      out.updates[key] = undefined;
    } else {
      const seconds = fsd(value, pair);
      out.updates[key] = seconds === Infinity ? 0 : seconds;
    }
  }
  return out;
}

function fsd(text: string, pair: string): number {
  try {
    return parseFSD(text);
  } catch {
    throw usage(`"${pair}": "${text}" is not a duration (e.g. 60, 10m, 1.5h, inf, +1m, -30s)`);
  }
}

/** The new duration from the current one; unlimited (0) cannot be adjusted. */
export function adjustDuration(current: number, adjust: DurationAdjustment, id: string): number {
  if (!(current > 0) || !Number.isFinite(current)) {
    throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `${id}: the job's duration is unlimited; a relative duration update needs a finite one`);
  }
  const next = current + adjust.sign * adjust.seconds;
  if (!Number.isFinite(next)) return 0;
  if (next <= 0) {
    throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `${id}: duration ${current}s ${adjust.sign > 0 ? "+" : "-"} ${adjust.seconds}s is not positive`);
  }
  return next;
}

async function currentDuration(client: DaemonClient, id: string): Promise<number> {
  const { jobspec } = await client.call("info", { id });
  const d = (jobspec.attributes as { system?: { duration?: unknown } } | undefined)?.system?.duration;
  return typeof d === "number" ? d : 0;
}

/** The option table of `jobtap update` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["update [-n] [-v] ID KEY=VALUE..."],
  summary: "Changes jobspec keys of an active job, all or nothing, as flux update (plugins decide which may change).",
  options: [
    { name: "dry-run", short: "n", help: "print the updated jobspec keys instead of sending them" },
    { name: "verbose", short: "v", help: "print what was updated" },
  ],
};

/** Sends the updates (or prints them with `--dry-run`). */
export const update: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC);
  const [idText, ...pairs] = p.positionals;
  if (idText === undefined || pairs.length === 0) throw usage("usage: jobtap update [-n] [-v] ID KEY=VALUE...");
  const id = jobIdArg(idText);
  const parsed = parseUpdatePairs(pairs);
  return withDaemon(io, async (client) => {
    const updates = { ...parsed.updates };
    if (parsed.adjust) updates[DURATION] = adjustDuration(await currentDuration(client, id), parsed.adjust, id);
    if (optFlag(p, "dry-run")) {
      io.stdout(JSON.stringify(updates) + "\n");
      return 0;
    }
    await client.call("update", { id, updates });
    if (optFlag(p, "verbose")) {
      for (const [k, v] of Object.entries(updates)) io.stdout(`${id}: updated ${k} to ${JSON.stringify(v)}\n`);
    }
    return 0;
  });
};

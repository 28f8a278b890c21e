/**
 * `jobtap ads [--machine | --slot N] [--constraint EXPR] [-l | --json]`: the host's ads, as
 * `condor_status` shows them: a table of the slot ads by default (with START and RANK), `-l` the whole ads (`Name = value` lines
 * sorted by name, a blank line between ads), `--json` a JSON array.
 */
import { optFlag, optInt, optString, parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import type { Subcommand } from "./io.js";

/** The option table of `jobtap ads` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["ads [--machine | --slot N] [--constraint EXPR] [-l | --json]"],
  summary: "Prints the host's slot ads as a table, like condor_status, or whole ads.",
  options: [
    { name: "machine", help: "the machine ad instead of the slot ads" },
    { name: "slot", value: "N", help: "only slot N's ad" },
    { name: "constraint", value: "EXPR", help: "only ads where this ClassAd expression is true (MY = the ad)" },
    { name: "long", short: "l", help: "whole ads, Name = value lines sorted by name (condor_status -l)" },
    { name: "json", help: "the ads as a JSON array" },
  ],
};

/** The `condor_status` columns: Name, OpSys, Arch, State, Activity, LoadAv, Mem (MiB), Cpus. */
const COLUMNS: Array<[header: string, attr: string, width: number]> = [
  ["Name", "Name", 24],
  ["OpSys", "OpSys", 8],
  ["Arch", "Arch", 8],
  ["State", "State", 10],
  ["Activity", "Activity", 9],
  ["LoadAv", "LoadAvg", 7],
  ["Mem", "Memory", 8],
  ["Cpus", "Cpus", 5],
  ["Start", "Start", 9],
  ["Rank", "Rank", 6],
];

export const ads: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC);
  if (p.positionals.length > 0) throw usage(`unexpected argument "${p.positionals[0]}"`);
  const slot = optInt(p, "slot");
  const machine = optFlag(p, "machine");
  const constraint = optString(p, "constraint");
  if (machine && slot !== undefined) throw usage("give --machine or --slot N, not both");
  return withDaemon(io, async (client) => {
    const { ads: list } = await client.call("ads", {
      ...(machine ? { machine: true } : {}),
      ...(slot === undefined ? {} : { slot }),
      ...(constraint === undefined ? {} : { constraint }),
    });
    if (optFlag(p, "json")) io.stdout(JSON.stringify(list.map((a) => a.json), null, 2) + "\n");
    else if (optFlag(p, "long") || machine) io.stdout(list.map((a) => a.text).join("\n"));
    else io.stdout(table(list.map((a) => a.json)));
    return 0;
  });
};

function table(rows: Array<Record<string, unknown>>): string {
  const cell = (v: unknown, w: number) => {
    const s = typeof v === "number" && !Number.isInteger(v) ? v.toFixed(3) : v === undefined ? "" : String(v);
    return s.length > w ? s.slice(0, w - 1) + "+" : s.padEnd(w);
  };
  const lines = [COLUMNS.map(([h, , w]) => cell(h, w)).join(" ").trimEnd()];
  for (const r of rows) lines.push(COLUMNS.map(([, a, w]) => cell(r[a], w)).join(" ").trimEnd());
  return lines.join("\n") + "\n";
}

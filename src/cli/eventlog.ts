/**
 * `jobtap eventlog ID [--json] [--follow]`: the job's eventlog. `--json` prints RFC 18 JSON
 * lines; otherwise one readable line per event (time, name, context as key=value).
 * `--follow` keeps printing new events until the job is inactive.
 */
import type { EventEntry } from "../manager/port/records.js";
import { optFlag, parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import { jobIdArg } from "./jobid.js";
import type { Subcommand } from "./io.js";

/** The option table of `jobtap eventlog` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["eventlog ID [--json] [--follow]"],
  summary: "Prints a job's eventlog, one readable line per event (time, name, context).",
  options: [
    { name: "json", help: "print RFC 18 JSON lines" },
    { name: "follow", short: "f", help: "keep printing new events until the job is inactive" },
  ],
};

/** Prints (and with --follow, streams) one job's eventlog. */
export const eventlog: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC);
  if (p.positionals.length !== 1) throw usage("usage: jobtap eventlog ID [--json] [--follow]");
  const id = jobIdArg(p.positionals[0] as string);
  const print = (e: EventEntry) => io.stdout((optFlag(p, "json") ? JSON.stringify(e) : readable(e)) + "\n");
  return withDaemon(io, async (client) => {
    if (optFlag(p, "follow")) {
      await client.stream("eventlog", { id, follow: true }, (e) => print(e as EventEntry));
    } else {
      (await client.call("eventlog", { id })).eventlog.forEach(print);
    }
    return 0;
  });
};

/** `1700000000.123 submit urgency=16 userid=1000`, as `flux job eventlog` prints. */
export function readable(e: EventEntry): string {
  const ctx = Object.entries(e.context ?? {}).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  return [e.timestamp.toFixed(6), e.name, ...ctx].join(" ");
}

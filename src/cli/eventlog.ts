/**
 * `jobtap eventlog ID [--json] [--follow] [--path exec]`: the job's eventlog. `--json` prints
 * RFC 18 JSON lines; otherwise one readable line per event (time, name, context as key=value).
 * `--follow` keeps printing new events until the job is inactive. `--path exec` prints the
 * exec eventlog instead (executor state, as `flux job eventlog -p exec`).
 */
import type { EventEntry } from "../manager/port/records.js";
import { optFlag, optString, parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import { jobIdArg } from "./jobid.js";
import type { Subcommand } from "./io.js";

/** The option table of `jobtap eventlog` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["eventlog ID [--json] [--follow] [--path eventlog|exec]"],
  summary: "Prints a job's eventlog, one readable line per event (time, name, context).",
  options: [
    { name: "json", help: "print RFC 18 JSON lines" },
    { name: "follow", short: "f", help: "keep printing new events until the job is inactive (main eventlog only)" },
    { name: "path", short: "p", value: "PATH", help: "which eventlog: eventlog (the default) or exec (executor state saved for reattach)" },
  ],
};

/** Prints (and with --follow, streams) one job's eventlog. */
export const eventlog: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC);
  if (p.positionals.length !== 1) throw usage("usage: jobtap eventlog ID [--json] [--follow] [--path eventlog|exec]");
  const id = jobIdArg(p.positionals[0] as string);
  const path = optString(p, "path") ?? "eventlog";
  if (path !== "eventlog" && path !== "exec") throw usage(`jobtap eventlog: --path ${JSON.stringify(path)} is not eventlog or exec`);
  if (path === "exec" && optFlag(p, "follow")) throw usage("jobtap eventlog: --follow is for the main eventlog only, not --path exec");
  const print = (e: EventEntry) => io.stdout((optFlag(p, "json") ? JSON.stringify(e) : readable(e)) + "\n");
  return withDaemon(io, async (client) => {
    if (optFlag(p, "follow")) {
      await client.stream("eventlog", { id, follow: true }, (e) => print(e as EventEntry));
    } else {
      (await client.call("eventlog", path === "exec" ? { id, path } : { id })).eventlog.forEach(print);
    }
    return 0;
  });
};

/** `1700000000.123 submit urgency=16 userid=1000`, as `flux job eventlog` prints. */
export function readable(e: EventEntry): string {
  const ctx = Object.entries(e.context ?? {}).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  return [e.timestamp.toFixed(6), e.name, ...ctx].join(" ");
}

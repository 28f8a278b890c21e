/**
 * `jobtap urgency ID N|hold|expedite|default`: sets a job's urgency, as `flux job urgency`
 * does; prints the old value with `-v`.
 */
import { optFlag, parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import { jobIdArg } from "./jobid.js";
import type { Subcommand } from "./io.js";
import { parseUrgency } from "./jobspec.js";

/** The option table of `jobtap urgency` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["urgency [-v] ID N|hold|expedite|default"],
  summary: "Sets a job's urgency (0 holds, 16 is the default, 31 goes first), as flux job urgency.",
  options: [{ name: "verbose", short: "v", help: "print the old and new urgency" }],
};

/** Changes one job's urgency. */
export const urgency: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC);
  if (p.positionals.length !== 2) throw usage("usage: jobtap urgency ID N|hold|expedite|default");
  const id = jobIdArg(p.positionals[0] as string);
  const value = parseUrgency(p.positionals[1] as string);
  return withDaemon(io, async (client) => {
    const { old_urgency } = await client.call("urgency", { id, urgency: value });
    if (optFlag(p, "verbose")) io.stdout(`${id}: urgency ${old_urgency} -> ${value}\n`);
    return 0;
  });
};

/**
 * `jobtap history [SLICE]`: the caller's recent job ids, newest first, over the `.history`
 * builtin's service (open to every user, always the caller's own jobs). SLICE is Python
 * slice notation, as Flux's history service takes it: `[:5]` the five newest, `[-1:]` the
 * oldest still known.
 */
import { parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import type { Subcommand } from "./io.js";
import { callService } from "./plugin.js";

/** The option table of `jobtap history` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["history [SLICE]"],
  summary: "Prints your recent job ids, newest first; SLICE as Python's: [:5] the five newest.",
  options: [],
};

/** Prints one job id per line, newest submission first. */
export const history: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC);
  if (p.positionals.length > 1) throw usage("usage: jobtap history [SLICE]");
  const slice = p.positionals[0];
  return withDaemon(io, async (client) => {
    const { jobs } = (await callService(client, "history", "get", slice === undefined ? {} : { slice })) as { jobs: string[] };
    io.stdout(jobs.map((id) => id + "\n").join(""));
    return 0;
  });
};

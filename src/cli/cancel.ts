/**
 * `jobtap cancel ID... [-m MSG]` or `jobtap cancel --all [--user=USER|all]`: raises a
 * severity-0 `cancel` exception on each job, as `flux cancel` does. `--all` takes your own
 * active jobs; `--user` (only with `--all`) another user's or everyone's, which only the
 * instance owner may cancel (the daemon checks each job).
 */
import { optFlag, optString, parseArgs, usage, type CommandSpec } from "./args.js";
import { activeJobIds, withDaemon } from "./common.js";
import { jobIdArg } from "./jobid.js";
import type { Subcommand } from "./io.js";

/** The option table of `jobtap cancel` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["cancel [-m MESSAGE] ID...", "cancel --all [--user=USER|all] [-m MESSAGE]"],
  summary: "Cancels jobs: raises a cancel exception on each, as flux cancel does.",
  options: [
    { name: "all", help: "cancel all your active jobs (with --user, that user's; --user=all everyone's: owner only)" },
    { name: "user", short: "u", value: "USER", help: "with --all: whose jobs (a name or uid, or \"all\")" },
    { name: "message", short: "m", value: "MESSAGE", help: "the note on the cancel exception" },
  ],
};

/** Cancels the given jobs, or with `--all` every active job of the chosen user(s). */
export const cancel: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC);
  const all = optFlag(p, "all");
  const user = optString(p, "user");
  if (all && p.positionals.length > 0) throw usage("give job IDs or --all, not both");
  if (!all && user !== undefined) throw usage("--user needs --all");
  if (!all && p.positionals.length === 0) throw usage(`usage: jobtap ${SPEC.usage.join(" | ")}`);
  const given = p.positionals.map(jobIdArg);
  const note = optString(p, "message");
  return withDaemon(io, async (client) => {
    const ids = all ? await activeJobIds(client, user) : given;
    if (ids.length > 0) await client.call("cancel", { ids, ...(note === undefined ? {} : { note }) });
    // Said only for --all, where the user did not name the jobs (flux cancel says it too).
    if (all) io.stderr(`canceled ${ids.length} job${ids.length === 1 ? "" : "s"}\n`);
    return 0;
  });
};

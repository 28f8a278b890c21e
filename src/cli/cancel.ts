/**
 * `jobtap cancel ID... [-m MSG]`: raises a severity-0 `cancel` exception on each job, as
 * `flux cancel` does.
 */
import { optString, parseArgs, usage } from "./args.js";
import { withDaemon } from "./common.js";
import { jobIdArg } from "./jobid.js";
import type { Subcommand } from "./io.js";

const OPTIONS = [{ name: "message", short: "m", value: true }];

/** Cancels the given jobs. */
export const cancel: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, OPTIONS);
  if (p.positionals.length === 0) throw usage("usage: jobtap cancel ID... [-m MESSAGE]");
  const ids = p.positionals.map(jobIdArg);
  const note = optString(p, "message");
  return withDaemon(io, async (client) => {
    await client.call("cancel", { ids, ...(note === undefined ? {} : { note }) });
    return 0;
  });
};

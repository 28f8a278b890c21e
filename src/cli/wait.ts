/**
 * `jobtap wait ID...`: waits for each job to become inactive; exits with the largest of
 * their exit statuses (0 when all completed), printing a line for each job that did not.
 */
import { parseArgs, usage } from "./args.js";
import { exitStatusOf, jobIdArg, withDaemon } from "./common.js";
import type { Subcommand } from "./io.js";

/** Waits for jobs to finish and reports how they ended. */
export const wait: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, []);
  if (p.positionals.length === 0) throw usage("usage: jobtap wait ID...");
  const ids = p.positionals.map(jobIdArg);
  return withDaemon(io, async (client) => {
    const views = await Promise.all(ids.map((id) => client.call("wait", { id })));
    let status = 0;
    for (const { job } of views) {
      const s = exitStatusOf(job);
      if (s !== 0) io.stderr(`${job.id}: ${job.result ?? job.state}${job.exception ? ` (${job.exception.type}: ${job.exception.note})` : ""}\n`);
      status = Math.max(status, s);
    }
    return status;
  });
};

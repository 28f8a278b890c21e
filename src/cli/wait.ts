/**
 * `jobtap wait ID...`: waits for each job to become inactive; exits with the largest of
 * their exit statuses (0 when all completed), printing a line for each job that did not.
 */
import { parseArgs, usage } from "./args.js";
import { exitStatusOf, withDaemon } from "./common.js";
import { describeWaitStatus } from "./endstatus.js";
import { jobIdArg } from "./jobid.js";
import type { Subcommand } from "./io.js";
import type { JobView } from "../server/protocol.js";

/** "CANCELED (cancel: no longer needed)", "FAILED (exit 3)", "FAILED (killed by SIGKILL)". */
export function describeEnd(job: JobView): string {
  const what = job.result ?? job.state;
  const ex = job.exception;
  if (ex) return `${what} (${ex.type}${ex.note ? `: ${ex.note}` : ""})`;
  const end = describeWaitStatus(job.waitstatus);
  return end !== undefined ? `${what} (${end})` : what;
}

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
      if (s !== 0) io.stderr(`${job.id}: ${describeEnd(job)}\n`);
      status = Math.max(status, s);
    }
    return status;
  });
};

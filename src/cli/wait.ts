/**
 * `jobtap wait ID...` or `jobtap wait --all`: waits for each job to become inactive; exits
 * with the largest of their exit statuses (0 when all completed), printing a line for each
 * job that did not. `--all` waits for every active job of yours, as `flux job wait --all`.
 */
import { optFlag, parseArgs, usage, type CommandSpec } from "./args.js";
import { activeJobIds, exitStatusOf, withDaemon } from "./common.js";
import { describeWaitStatus } from "./endstatus.js";
import { jobIdArg } from "./jobid.js";
import type { Subcommand } from "./io.js";
import type { JobView } from "../server/protocol.js";

/** The option table of `jobtap wait` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["wait [-v] ID...", "wait --all [-v]"],
  summary: "Waits for jobs to finish; the exit status is the largest of theirs (0: all completed).",
  options: [
    { name: "all", short: "a", help: "wait for all your active jobs; non-zero if any of them did not complete" },
    { name: "verbose", short: "v", help: "say how many jobs are waited for, and how every job ended, not only the failed" },
  ],
};

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
  const p = parseArgs(argv, SPEC);
  const all = optFlag(p, "all");
  if (all && p.positionals.length > 0) throw usage("give job IDs or --all, not both");
  if (!all && p.positionals.length === 0) throw usage("usage: jobtap wait ID... | wait --all");
  const given = p.positionals.map(jobIdArg);
  return withDaemon(io, async (client) => {
    const ids = all ? await activeJobIds(client, undefined) : given;
    const verbose = optFlag(p, "verbose");
    const views = Promise.all(ids.map((id) => client.call("wait", { id })));
    if (verbose) io.stderr(`waiting for ${ids.length} job${ids.length === 1 ? "" : "s"}\n`);
    let status = 0;
    for (const { job } of await views) {
      const s = exitStatusOf(job);
      if (s !== 0 || verbose) io.stderr(`${job.id}: ${describeEnd(job)}\n`);
      status = Math.max(status, s);
    }
    return status;
  });
};

/**
 * `jobtap job-exec-override start ID` / `finish ID STATUS`: drives a job run by the test
 * executor with `attributes.system.exec.test.override` set, as `flux job-exec-override`
 * does (start it; finish it with a wait status). Only the job's owner may.
 */
import { parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import { jobIdArg } from "./jobid.js";
import type { Subcommand } from "./io.js";

const USAGE = "usage: jobtap job-exec-override start ID | finish ID STATUS";

/** The option table of `jobtap job-exec-override` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["job-exec-override start ID", "job-exec-override finish ID STATUS"],
  summary: "Starts, or finishes with a wait status, a test-executor job in override mode (its owner only).",
  options: [],
};

/** Sends one override request. */
export const execOverride: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC);
  const [event, idText, statusText] = p.positionals as [string?, string?, string?];
  if (event === "start" ? p.positionals.length !== 2 : event !== "finish" || p.positionals.length !== 3) throw usage(USAGE);
  const id = jobIdArg(idText!);
  let status = 0;
  if (event === "finish") {
    if (!/^-?\d+$/.test(statusText!)) throw usage(`status "${statusText}": expected an integer wait status`);
    status = Number(statusText);
  }
  return withDaemon(io, async (client) => {
    await client.call("exec-override", { id, event: event!, status });
    return 0;
  });
};

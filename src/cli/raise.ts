/**
 * `jobtap raise ID... [--type T] [--severity S] [-m MSG]`: posts an exception, as
 * `flux job raise` does (type defaults to "cancel", severity to 0).
 */
import { optInt, optString, parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import { jobIdArg } from "./jobid.js";
import type { Subcommand } from "./io.js";

/** The option table of `jobtap raise` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["raise [-t TYPE] [-s SEVERITY] [-m MESSAGE] ID..."],
  summary: "Raises an exception on jobs, as flux job raise does.",
  options: [
    { name: "type", short: "t", value: "TYPE", help: "the exception type (default cancel)" },
    { name: "severity", short: "s", value: "N", help: "0 (fatal: the job ends) to 7 (default 0)" },
    { name: "message", short: "m", value: "MESSAGE", help: "the exception's note" },
  ],
};

/** Raises an exception on each given job. */
export const raise: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC);
  if (p.positionals.length === 0) throw usage("usage: jobtap raise ID... [--type T] [--severity S] [-m MSG]");
  const ids = p.positionals.map(jobIdArg);
  const type = optString(p, "type") ?? "cancel";
  const severity = optInt(p, "severity", 0) as number;
  if (severity < 0 || severity > 7) throw usage(`--severity ${severity}: must be 0..7`);
  if (type === "" || /[\s=]/.test(type)) throw usage(`--type "${type}": must be non-empty, without spaces or "="`);
  const note = optString(p, "message") ?? "";
  return withDaemon(io, async (client) => {
    for (const id of ids) await client.call("raise", { id, type, severity, note });
    return 0;
  });
};

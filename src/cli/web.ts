/**
 * `jobtap web`: prints a one-time login URL for the dashboard the daemon serves on its HTTP
 * listener. The code is asked for over the Unix socket, so it is the calling user's (the
 * uid proof); it works once, within 60 s, and rides in the URL's fragment (`#login=`),
 * which browsers never send to a server, so it is in no access log nor Referer.
 */
import { parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import type { Subcommand } from "./io.js";

/** The option table of `jobtap web` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["web"],
  summary: "Prints a one-time login URL (valid 60 s, single use) for the web dashboard, as you; the browser trades it for a 12-hour session.",
  options: [],
};

/** Prints the login URL. */
export const web: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC);
  if (p.positionals.length > 0) throw usage(`unexpected argument "${p.positionals[0]}"\nusage: jobtap web`);
  return withDaemon(io, async (client) => {
    const { url } = await client.call("web.code", {});
    io.stdout(`${url}\n`);
    return 0;
  });
};

/**
 * `jobtap post-event ID NAME [CONTEXT-JSON]`: posts an event to an active job's eventlog,
 * over the `.post-event` builtin's owner-only service (Flux's job-manager.post-event).
 */
import { parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import { jobIdArg } from "./jobid.js";
import type { Subcommand } from "./io.js";
import { callService, parseJsonArg } from "./plugin.js";

/** The option table of `jobtap post-event` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["post-event ID NAME [CONTEXT-JSON]"],
  summary: "Posts an event to an active job's eventlog (owner only).",
  options: [],
};

/** Posts one event. */
export const postEvent: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC);
  const [idText, name, json, ...extra] = p.positionals;
  if (idText === undefined || name === undefined || extra.length > 0) throw usage("usage: jobtap post-event ID NAME [CONTEXT-JSON]");
  const id = jobIdArg(idText);
  const context = json === undefined ? undefined : parseJsonArg(json, "CONTEXT");
  if (context !== undefined && (typeof context !== "object" || context === null || Array.isArray(context))) {
    throw usage(`CONTEXT must be a JSON object, got ${json}`);
  }
  return withDaemon(io, async (client) => {
    await callService(client, "post-event", "post", { id, name, ...(context === undefined ? {} : { context }) });
    return 0;
  });
};

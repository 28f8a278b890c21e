/**
 * `jobtap post-event ID NAME [CONTEXT-JSON]`: posts an event to an active job's eventlog,
 * over the `.post-event` builtin's owner-only service (Flux's job-manager.post-event).
 */
import { parseArgs, usage } from "./args.js";
import { withDaemon } from "./common.js";
import { jobIdArg } from "./jobid.js";
import type { Subcommand } from "./io.js";
import { callService, parseJsonArg } from "./plugin.js";

/** Posts one event. */
export const postEvent: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, []);
  const [idText, name, json, ...extra] = p.positionals;
  if (idText === undefined || name === undefined || extra.length > 0) throw usage("usage: jobtap post-event ID NAME [CONTEXT-JSON]");
  const id = jobIdArg(idText);
  const context = json === undefined ? undefined : parseJsonArg(json, "post-event: CONTEXT");
  if (context !== undefined && (typeof context !== "object" || context === null || Array.isArray(context))) {
    throw usage(`post-event: CONTEXT must be a JSON object, got ${json}`);
  }
  return withDaemon(io, async (client) => {
    await callService(client, "post-event", "post", { id, name, ...(context === undefined ? {} : { context }) });
    return 0;
  });
};

/**
 * `jobtap job info ID`: the job's view, jobspec (environment included: you are its owner)
 * and R, as one JSON object.
 */
import { parseArgs, usage } from "./args.js";
import { jobIdArg, withDaemon } from "./common.js";
import type { Subcommand } from "./io.js";

/** `job info ID` prints `{job, jobspec, R?}` as JSON. */
export const job: Subcommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub !== "info") throw usage(`job: unknown subcommand "${sub ?? ""}" (known: info)`);
  const p = parseArgs(rest, []);
  if (p.positionals.length !== 1) throw usage("usage: jobtap job info ID");
  const id = jobIdArg(p.positionals[0] as string);
  return withDaemon(io, async (client) => {
    const info = await client.call("info", { id });
    io.stdout(JSON.stringify(info, null, 2) + "\n");
    return 0;
  });
};

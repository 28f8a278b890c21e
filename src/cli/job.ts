/**
 * `jobtap job info ID [KEY]`: the job's view, jobspec (environment included: you are its
 * owner) and R, as one JSON object, or just one of them, as `flux job info` does.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import { parseArgs, usage } from "./args.js";
import { jobIdArg, withDaemon } from "./common.js";
import type { Subcommand } from "./io.js";

const KEYS = ["job", "jobspec", "R"] as const;

/** `job info ID [job|jobspec|R]` prints `{job, jobspec, R?}`, or one of them, as JSON. */
export const job: Subcommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub !== "info") throw usage(`job: unknown subcommand "${sub ?? ""}" (known: info)`);
  const p = parseArgs(rest, []);
  const [idArg, key, extra] = p.positionals;
  if (idArg === undefined || extra !== undefined) throw usage("usage: jobtap job info ID [job|jobspec|R]");
  if (key !== undefined && !(KEYS as readonly string[]).includes(key)) {
    throw usage(`job info: unknown key "${key}" (known: ${KEYS.join(", ")})`);
  }
  const id = jobIdArg(idArg);
  return withDaemon(io, async (client) => {
    const info = await client.call("info", { id });
    const value = key === undefined ? info : info[key as (typeof KEYS)[number]];
    if (value === undefined) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `${id}: no ${key} (the job has no resources yet)`);
    io.stdout(JSON.stringify(value, null, 2) + "\n");
    return 0;
  });
};

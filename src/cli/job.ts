/**
 * `jobtap job info|kill|purge`, as `flux job info`, `flux job kill` and `flux job purge`:
 * - `info ID [KEY]`: the job's view, jobspec (environment included: you are its owner) and
 *   R, as one JSON object, or just one of them; `info --classad ID [--json]`: the job's
 *   ad, printed like `condor_q -l`;
 * - `kill [-s SIG] ID...`: a signal (name or number, default SIGTERM) to running jobs;
 * - `purge [--force] [--age-limit=FSD] [--num-limit=N] [ID...]`: drop inactive jobs.
 */
import { constants } from "node:os";
import { ErrorCode, JobtapError } from "../errors.js";
import { parseFSD } from "../manager/base/fsd.js";
import { optFlag, optInt, optString, parseArgs, usage } from "./args.js";
import { withDaemon } from "./common.js";
import { jobIdArg } from "./jobid.js";
import type { CliIO, Subcommand } from "./io.js";

const KEYS = ["job", "jobspec", "R"] as const;

/** `job info|kill|purge ...`. */
export const job: Subcommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub === "info") return info(rest, io);
  if (sub === "kill") return kill(rest, io);
  if (sub === "purge") return purge(rest, io);
  throw usage(`job: unknown subcommand "${sub ?? ""}" (known: info, kill, purge)`);
};

/** `job info ID [job|jobspec|R]` prints `{job, jobspec, R?}`, or one of them, as JSON. */
async function info(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, [{ name: "classad" }, { name: "json" }]);
  const [idArg, key, extra] = p.positionals;
  if (optFlag(p, "classad")) {
    if (idArg === undefined || key !== undefined) throw usage("usage: jobtap job info --classad ID [--json]");
    const id = jobIdArg(idArg);
    return withDaemon(io, async (client) => {
      const ad = await client.call("jobad", { id });
      io.stdout(optFlag(p, "json") ? JSON.stringify(ad.json, null, 2) + "\n" : ad.text);
      return 0;
    });
  }
  if (idArg === undefined || extra !== undefined) throw usage("usage: jobtap job info ID [job|jobspec|R] | job info --classad ID [--json]");
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
}

/** A signal as a number: `15`, `TERM` or `SIGTERM` (any case); a usage error otherwise. */
export function signalNumber(text: string): number {
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    if (n >= 1 && n <= 64) return n;
  } else {
    const name = text.toUpperCase().startsWith("SIG") ? text.toUpperCase() : `SIG${text.toUpperCase()}`;
    const n = (constants.signals as Record<string, number>)[name];
    if (n !== undefined) return n;
  }
  throw usage(`job kill: invalid signal "${text}" (a name like TERM or SIGUSR1, or a number 1-64)`);
}

/** Sends the signal to each job; every failure is reported and makes the status 1. */
async function kill(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, [{ name: "signal", short: "s", value: true }]);
  if (p.positionals.length === 0) throw usage("usage: jobtap job kill [-s SIG] ID...");
  const signum = signalNumber(optString(p, "signal") ?? "SIGTERM");
  const ids = p.positionals.map(jobIdArg);
  return withDaemon(io, async (client) => {
    let status = 0;
    for (const id of ids) {
      try {
        await client.call("kill", { id, signum });
      } catch (e) {
        io.stderr(`jobtap job kill: ${(e as Error).message}\n`);
        status = 1;
      }
    }
    return status;
  });
}

/** Purges inactive jobs; without --force says how many it would purge, as Flux does. */
async function purge(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, [
    { name: "force", short: "f" },
    { name: "age-limit", value: true },
    { name: "num-limit", value: true },
  ]);
  const age = optString(p, "age-limit");
  const numLimit = optInt(p, "num-limit");
  if (numLimit !== undefined && numLimit < 0) throw usage("job purge: --num-limit must be >= 0");
  let ageLimit: number | undefined;
  if (age !== undefined) {
    try {
      ageLimit = parseFSD(age);
    } catch (e) {
      throw usage(`job purge: --age-limit: ${(e as Error).message}`);
    }
  }
  const ids = p.positionals.map(jobIdArg);
  if (ids.length === 0 && ageLimit === undefined && numLimit === undefined) {
    throw usage("usage: jobtap job purge [--force] [--age-limit=FSD] [--num-limit=N] [ID...]");
  }
  const force = optFlag(p, "force");
  return withDaemon(io, async (client) => {
    const r = await client.call("purge", {
      ...(ids.length > 0 ? { ids } : {}),
      ...(ageLimit !== undefined ? { age_limit: ageLimit } : {}),
      ...(numLimit !== undefined ? { num_limit: numLimit } : {}),
      force,
    });
    if (r.purged) io.stdout(`purged ${r.ids.length} inactive job${r.ids.length === 1 ? "" : "s"}\n`);
    else io.stdout(`use --force to purge ${r.ids.length} inactive job${r.ids.length === 1 ? "" : "s"}\n`);
    return 0;
  });
}

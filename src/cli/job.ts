/**
 * `jobtap job info|kill|purge`, as `flux job info`, `flux job kill` and `flux job purge`:
 * - `info ID [KEY]`: the job's view, jobspec (environment included: you are its owner) and
 *   R, as one JSON object, or just one of them; `info --classad ID [--json]`: the job's
 *   ad, printed like `condor_q -l`;
 * - `kill [-s SIG] ID...`: a signal (name or number, default SIGTERM) to running jobs;
 * - `purge [--force] [--age-limit=FSD] [--num-limit=N] [ID...]`: drop inactive jobs;
 * - `why ID... [--json]`: why each job is not running, or how it ended (why.ts);
 * - `output [-f] ID`: what the job wrote to stdout and stderr; `attach ID` follows it until
 *   the job ends and exits with the job's status, as `flux job attach` does.
 */
import { constants } from "node:os";
import { ErrorCode, JobtapError } from "../errors.js";
import { parseFSD } from "../manager/base/fsd.js";
import { optFlag, optInt, optString, parseArgs, usage, type CommandSpec } from "./args.js";
import { exitStatusOf, withDaemon } from "./common.js";
import { jobIdArg } from "./jobid.js";
import type { CliIO, Subcommand } from "./io.js";

const KEYS = ["job", "jobspec", "R"] as const;

const FOLLOW = { name: "follow", short: "f", help: "keep copying until the job has ended" };

/** The option tables of `jobtap job`'s subcommands (parser and --help). */
export const SPEC = {
  subcommands: {
    info: {
      usage: ["job info ID [job|jobspec|R]", "job info --classad ID [--json]"],
      summary: "prints the job's view, jobspec and R as JSON, or one of them; or its job ad",
      options: [
        { name: "classad", help: "print the job's ClassAd (its job ad) like condor_q -l" },
        { name: "json", help: "with --classad: print the ad as JSON" },
      ],
    },
    kill: {
      usage: ["job kill [-s SIG] ID..."],
      summary: "sends a signal to running jobs",
      options: [{ name: "signal", short: "s", value: "SIG", help: "the signal, a name (TERM, SIGUSR1) or number (default SIGTERM)" }],
    },
    purge: {
      usage: ["job purge [--force] [--age-limit=FSD] [--num-limit=N] [ID...]"],
      summary: "drops inactive jobs (says how many it would without --force)",
      options: [
        { name: "force", short: "f", help: "purge; without it only say how many jobs would be" },
        { name: "age-limit", value: "FSD", help: "purge inactive jobs older than this duration (10m, 7d)" },
        { name: "num-limit", value: "N", help: "purge the oldest inactive jobs beyond the newest N" },
      ],
    },
    output: {
      usage: ["job output [-f] ID"],
      summary: "prints what the job wrote to stdout and stderr (on ours)",
      options: [FOLLOW],
    },
    why: {
      usage: ["job why ID... [--json]"],
      summary: "says why each job is not running (or how it ended), from every layer (docs/why.md)",
      options: [{ name: "json", help: "print the reasons as one JSON array" }],
    },
    attach: {
      usage: ["job attach ID"],
      summary: "copies the job's output until it ends, then exits with its status (flux job attach)",
      options: [],
    },
  } satisfies Record<string, CommandSpec>,
};

const RUN: Record<keyof typeof SPEC.subcommands, (argv: string[], io: CliIO) => Promise<number>> = {
  info: (a, io) => info(a, io),
  kill: (a, io) => kill(a, io),
  purge: (a, io) => purge(a, io),
  output: (a, io) => output(a, io, false),
  attach: (a, io) => output(a, io, true),
  why: (a, io) => import("./why.js").then((m) => m.why(a, io)),
};

/** `job info|kill|purge|output|attach ...`. */
export const job: Subcommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub !== undefined && Object.hasOwn(RUN, sub)) return RUN[sub as keyof typeof RUN](rest, io);
  throw usage(`${sub === undefined ? "missing subcommand" : `unknown subcommand "${sub}"`} (known: ${Object.keys(RUN).join(", ")})`);
};

/** `job output [-f] ID` and `job attach ID`: the job's output; attach returns the job's status. */
async function output(argv: string[], io: CliIO, attach: boolean): Promise<number> {
  const spec = attach ? SPEC.subcommands.attach : SPEC.subcommands.output;
  const p = parseArgs(argv, spec);
  if (p.positionals.length !== 1) throw usage(`usage: jobtap ${spec.usage[0]}`);
  const id = jobIdArg(p.positionals[0] as string);
  return withDaemon(io, async (client) => {
    const { copyOutput } = await import("./output.js");
    await copyOutput(client, io, id, attach || optFlag(p, "follow"));
    return attach ? exitStatusOf((await client.call("wait", { id })).job) : 0;
  });
}

/** `job info ID [job|jobspec|R]` prints `{job, jobspec, R?}`, or one of them, as JSON. */
async function info(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, SPEC.subcommands.info);
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
    throw usage(`info: unknown key "${key}" (known: ${KEYS.join(", ")})`);
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
  throw usage(`invalid signal "${text}" (a name like TERM or SIGUSR1, or a number 1-64)`);
}

/** Sends the signal to each job; every failure is reported and makes the status 1. */
async function kill(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, SPEC.subcommands.kill);
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
  const p = parseArgs(argv, SPEC.subcommands.purge);
  const age = optString(p, "age-limit");
  const numLimit = optInt(p, "num-limit");
  if (numLimit !== undefined && numLimit < 0) throw usage("--num-limit must be >= 0");
  let ageLimit: number | undefined;
  if (age !== undefined) {
    try {
      ageLimit = parseFSD(age);
    } catch (e) {
      throw usage(`--age-limit: ${(e as Error).message}`);
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

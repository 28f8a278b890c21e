/**
 * `jobtap submit [OPTIONS] -- COMMAND...`: builds a jobspec as `flux submit` does, submits
 * it (or its `--cc` copies, in one request), and prints one f58 job id per line.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Jobspec } from "../manager/port/records.js";
import { optFlag, optInt, optList, optString, parseArgs, usage, type CommandSpec, type ParsedArgs } from "./args.js";
import { exitStatusOf, withDaemon } from "./common.js";
import { termSignal } from "./endstatus.js";
import type { DaemonClient } from "../server/client.js";
import type { CliIO, Subcommand } from "./io.js";
import {
  applyEnvRules,
  beginTimeDependency,
  buildJobspec,
  parseDependency,
  parseSetattr,
  parseTimeLimit,
  parseUrgency,
  setAttribute,
  substituteCc,
  type Dependency,
} from "./jobspec.js";

/** submit's option table, for its parser and --help (main.ts also reads it to find a `--socket` among them). */
export const SPEC: CommandSpec = {
  usage: ["submit [OPTIONS] [--] COMMAND..."],
  summary: "Submits a job running COMMAND (options end at COMMAND's first word) and prints its f58 id, as flux submit.",
  options: [
    { name: "ntasks", short: "n", value: "N", help: "the number of tasks (default 1)" },
    { name: "cores-per-task", short: "c", value: "N", help: "cores for each task (default 1)" },
    { name: "gpus-per-task", short: "g", value: "N", help: "GPUs for each task (default 0)" },
    { name: "time-limit", short: "t", value: "DURATION", help: "the job's duration limit, an FSD (60, 10m, 1.5h)" },
    { name: "urgency", value: "N", help: "0 (hold) to 31 (expedite), or hold, expedite, default (16)" },
    { name: "dependency", value: "SCHEME:VALUE", repeat: true, help: "an RFC 26 dependency, e.g. afterok:ID, afterany:ID, afternotok:ID, begin-time:T" },
    { name: "begin-time", value: "T", help: "do not start before T (+DURATION, a timestamp or a date)" },
    { name: "job-name", value: "NAME", help: "the job's name (default: the command's first word)" },
    { name: "queue", short: "q", value: "QUEUE", help: "submit to this named queue" },
    { name: "bank", value: "BANK", help: "charge the job to this bank of the accounting plugin (attributes.system.bank)" },
    { name: "exec", value: "NAME", help: "the executor that runs the job (local, slurm, test, ...)" },
    { name: "setattr", short: "S", value: "KEY=VALUE", repeat: true, help: "set a jobspec attribute (under attributes.system. unless the key starts with user. or system.)" },
    { name: "classad", value: "'NAME=EXPR'", repeat: true, help: "add an attribute to the job's ClassAd (attributes.user.classad)" },
    { name: "slot", value: "N", help: "run in slot N of the host's slot ads (2 or slot2)" },
    { name: "env", value: "RULE", repeat: true, help: "environment rule as flux submit's: VAR=VAL, VAR (copy), -PATTERN (remove)" },
    { name: "cwd", value: "DIR", help: "the job's working directory (default: the current one)" },
    { name: "output", value: "FILE", help: "write the job's stdout to FILE ({{id}} is the job id; default STATEDIR/jobs/ID/stdout)" },
    { name: "error", value: "FILE", help: "write the job's stderr to FILE (default STATEDIR/jobs/ID/stderr)" },
    { name: "log", value: "FILE", help: "write the job's HTCondor event log (user log) to FILE (the ClassAd's UserLog)" },
    { name: "cc", value: "IDSET", help: "submit one copy per id in IDSET (0-9); {cc} in the command is replaced by it" },
    { name: "jobspec", value: "FILE", help: "submit this JSON jobspec file instead of building one from COMMAND" },
    { name: "wait", help: "wait for the job to end; exit with its status" },
    { name: "watch", help: "copy the job's output here while it runs; exit with its status" },
    { name: "progress", help: "show a progress bar (with --wait, also of the jobs ending)" },
    { name: "jps", help: "with --progress: show jobs per second" },
  ],
};

/** Submits one job (or `--cc` copies) and prints the ids; with `--wait`, the job's status. */
export const submit: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC, { stopAtPositional: true });
  const base = await jobspecFrom(p, io);
  const cc = optString(p, "cc");
  const progress = optFlag(p, "progress");
  let batches = cc === undefined ? [{ jobspecs: [base] }] : ccBatches(base, (await import("./idset.js")).parseIdset(cc, "--cc"));
  // A live bar needs several requests to move: split identical copies into chunks.
  if (progress && io.terminal) batches = batches.flatMap(chunked);
  const urgencyArg = optString(p, "urgency");
  const urgency = urgencyArg === undefined ? undefined : parseUrgency(urgencyArg, "--urgency");
  const total = batches.reduce((n, b) => n + (b.count ?? b.jobspecs.length), 0);
  // --progress and --wait load their modules only when asked for (a plain submit starts faster).
  const Bar = progress ? (await import("./progress.js")).ProgressBar : undefined;
  const bar = (what: string) => (Bar ? new Bar(io, total, optFlag(p, "jps"), what) : undefined);
  return withDaemon(io, async (client) => {
    const ids: string[] = [];
    let status = 0;
    let offset = 0;
    const submitted = bar("submitted");
    for (const batch of batches) {
      const reply = await client.call("submit", { ...batch, ...(urgency === undefined ? {} : { urgency }) });
      submitted?.clear();
      io.stdout(reply.ids.map((id) => id + "\n").join(""));
      ids.push(...reply.ids);
      for (const e of reply.errors ?? []) io.stderr(`job ${offset + e.index + 1} of the batch: ${e.message}\n`);
      if (reply.errors?.length) status = 1;
      offset += batch.count ?? batch.jobspecs.length;
      submitted?.advance(batch.count ?? batch.jobspecs.length);
    }
    submitted?.finish();
    if (optFlag(p, "watch")) {
      for (const id of ids) status = Math.max(status, await watch(client, io, id));
      return status;
    }
    if (!optFlag(p, "wait")) return status;
    const finished = bar("done");
    const { describeEnd } = await import("./wait.js");
    for (const id of ids) {
      const { job } = await client.call("wait", { id });
      // A job that could not even run (its command missing, a bad --cwd) says why, and so
      // does one killed by a signal (its exit status, 128+N, would not name it).
      if (job.exception !== undefined || termSignal(job.waitstatus) !== 0) io.stderr(`${job.id}: ${describeEnd(job)}\n`);
      status = Math.max(status, exitStatusOf(job));
      finished?.advance();
    }
    finished?.finish();
    return status;
  });
};

/** Copies per request while a progress bar is shown. */
const PROGRESS_CHUNK = 250;

/** A batch of identical copies split into requests of PROGRESS_CHUNK copies. */
function chunked(b: { jobspecs: Jobspec[]; count?: number }): Array<{ jobspecs: Jobspec[]; count?: number }> {
  if (b.count === undefined || b.count <= PROGRESS_CHUNK) return [b];
  const out = [];
  for (let left = b.count; left > 0; left -= PROGRESS_CHUNK) out.push({ jobspecs: b.jobspecs, count: Math.min(PROGRESS_CHUNK, left) });
  return out;
}

/** Bytes of jobspecs per request when `--cc` copies differ: well under the daemon's cap. */
const BATCH_BYTES = 4 * 1024 * 1024;

/**
 * The requests for `--cc`: copies that do not use `{cc}` are identical and travel as one
 * jobspec with a count; otherwise the copies are split into requests of bounded size.
 */
function ccBatches(base: Jobspec, ccs: number[]): Array<{ jobspecs: Jobspec[]; count?: number }> {
  const text = JSON.stringify(base);
  if (!text.includes("{cc}")) return [{ jobspecs: [base], count: ccs.length }];
  const perBatch = Math.max(1, Math.floor(BATCH_BYTES / (text.length + 16)));
  const batches: Array<{ jobspecs: Jobspec[] }> = [];
  for (let i = 0; i < ccs.length; i += perBatch) {
    batches.push({ jobspecs: ccs.slice(i, i + perBatch).map((cc) => substituteCc(base, cc)) });
  }
  return batches;
}

async function jobspecFrom(p: ParsedArgs, io: CliIO): Promise<Jobspec> {
  const jobspec = baseJobspec(p, io);
  const assignments = optList(p, "classad");
  if (assignments.length > 0) {
    // The ClassAd parser is most of the CLI's start-up cost: loaded only when --classad is used.
    const { parseClassadAssignment } = await import("../manager/ads/jobad.js");
    const classad = assignments.map(parseClassadAssignment);
    const user = (jobspec.attributes.user ??= {});
    const table = { ...(user.classad as Record<string, string> | undefined) };
    // A later assignment to the same name (in any case) replaces the earlier one.
    for (const { name, text } of classad) {
      for (const k of Object.keys(table)) if (k.toLowerCase() === name.toLowerCase()) delete table[k];
      table[name] = text;
    }
    user.classad = table;
  }
  const log = optString(p, "log");
  if (log !== undefined) {
    // HTCondor's `log = FILE`: relative to the submit directory; the daemon writes it (.user-log).
    const user = (jobspec.attributes.user ??= {});
    user.classad = { ...(user.classad as Record<string, string> | undefined), UserLog: JSON.stringify(resolve(io.cwd, log)) };
  }
  const slot = optString(p, "slot");
  if (slot !== undefined) (jobspec.attributes.system ??= {}).slot = parseSlotArg(slot);
  return jobspec;
}

/** `--slot N` (the SlotID) or `--slot slotN`. */
function parseSlotArg(text: string): number {
  const m = /^(?:slot)?(\d+)$/i.exec(text.trim());
  if (!m || Number(m[1]) < 1) throw usage(`--slot: expected a slot number such as 2 or slot2, got "${text}"`);
  return Number(m[1]);
}

function baseJobspec(p: ParsedArgs, io: CliIO): Jobspec {
  const deps = optList(p, "dependency").map(parseDependency);
  const begin = optString(p, "begin-time");
  if (begin !== undefined) deps.push(beginTimeDependency(begin, Date.now() / 1000));
  const file = optString(p, "jobspec");
  if (file === undefined) return commandJobspec(p, io, deps);
  const jobspec = readJobspec(file, p, io);
  const system = (jobspec.attributes.system ??= {});
  if (deps.length > 0) {
    const had = Array.isArray(system.dependencies) ? (system.dependencies as unknown[]) : [];
    system.dependencies = [...had, ...deps];
  }
  const name = optString(p, "job-name");
  if (name !== undefined) system.job = { ...(system.job as object | undefined), name };
  return jobspec;
}

/** `--exec NAME`: the executor that runs the job (`attributes.system.exec.name`), as a string. */
function execSetattr(p: ParsedArgs): [string, unknown][] {
  const name = optString(p, "exec");
  if (name === undefined) return [];
  if (name === "") throw usage("--exec: missing executor name");
  return [["system.exec.name", name]];
}

function commandJobspec(p: ParsedArgs, io: CliIO, dependencies: Dependency[]): Jobspec {
  if (p.positionals.length === 0) throw usage("no COMMAND given (or use --jobspec FILE)");
  const limit = optString(p, "time-limit");
  const path = (name: string): string | undefined => {
    const v = optString(p, name);
    return v === undefined ? undefined : resolve(io.cwd, v);
  };
  return buildJobspec({
    command: p.positionals,
    ntasks: positive(p, "ntasks"),
    coresPerTask: positive(p, "cores-per-task"),
    gpusPerTask: optInt(p, "gpus-per-task", 0) as number,
    duration: limit === undefined ? 0 : parseTimeLimit(limit),
    jobName: optString(p, "job-name"),
    queue: optString(p, "queue"),
    cwd: resolve(io.cwd, optString(p, "cwd") ?? "."),
    umask: process.umask(),
    environment: applyEnvRules(io.env, optList(p, "env")),
    output: path("output"),
    error: path("error"),
    dependencies,
    setattr: [...execSetattr(p), ...optList(p, "bank").map((b): [string, unknown] => ["system.bank", b]), ...optList(p, "setattr").map(parseSetattr)],
  });
}

function positive(p: ParsedArgs, name: string): number {
  const n = optInt(p, name, 1) as number;
  if (n < 1) throw usage(`--${name} must be at least 1, got ${n}`);
  return n;
}

/** `--jobspec FILE` (`-` for stdin is not supported: the file must be a JSON jobspec v1). */
function readJobspec(file: string, p: ParsedArgs, io: CliIO): Jobspec {
  if (p.positionals.length > 0) throw usage("give either --jobspec FILE or a COMMAND, not both");
  const path = resolve(io.cwd, file);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw usage(`--jobspec ${path}: ${(e as Error).message}`);
  }
  let jobspec: unknown;
  try {
    jobspec = JSON.parse(text);
  } catch (e) {
    throw usage(`--jobspec ${path}: not JSON: ${(e as Error).message}`);
  }
  if (typeof jobspec !== "object" || jobspec === null || (jobspec as Jobspec).version !== 1) {
    throw usage(`--jobspec ${path}: not a jobspec v1 object ("version": 1 is missing)`);
  }
  const js = jobspec as Jobspec;
  js.attributes ??= {};
  for (const [key, value] of [...execSetattr(p), ...optList(p, "setattr").map(parseSetattr)]) setAttribute(js, key, value);
  return js;
}

/**
 * `--watch`: copies what the job writes to its stdout and stderr to ours while it runs,
 * then returns its exit status as `--wait` does.
 */
async function watch(client: DaemonClient, io: CliIO, id: string): Promise<number> {
  await (await import("./output.js")).copyOutput(client, io, id, true);
  const { job } = await client.call("wait", { id });
  if (termSignal(job.waitstatus) !== 0) io.stderr(`${job.id}: ${(await import("./wait.js")).describeEnd(job)}\n`);
  return exitStatusOf(job);
}

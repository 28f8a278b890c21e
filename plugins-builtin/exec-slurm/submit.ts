/**
 * A jobspec as an sbatch submission: pure, so every mapping is tested without a cluster.
 *
 *   slots (tasks)             --ntasks (count.total of the task, else one per slot)
 *   cores per slot            --cpus-per-task
 *   gpus per slot             --gpus-per-task
 *   memory per slot           --mem-per-cpu (the slot's memory spread over its cores, MiB)
 *   node vertices             --nodes
 *   duration                  --time (whole minutes, rounded up; none when unlimited)
 *   job name                  --job-name (attributes.system.job.name, else the command's name)
 *   cwd                       --chdir
 *   shell output paths        --output / --error ({{id}} → the jobtap id; relative → cwd)
 *   environment               sbatch's own environment with --export=ALL (exact, any value)
 *   partition/account/qos     from the job's attributes.system.exec.slurm, else [exec.slurm]
 *   extra arguments           [exec.slurm].sbatch-args, then the job's `args`
 *
 * The batch script execs the command (one task) or `srun` it (several tasks), so the job's
 * exit status is the command's. `--comment=jobtap:<id>` lets a restarted jobtap find a job
 * whose Slurm id it never recorded, so nothing is submitted twice.
 */
import type { Jobspec } from "jobtap/plugin";
import { ErrorCode, JobtapError } from "jobtap/plugin";

/** Per-job and site Slurm choices (the job's win over [exec.slurm]). */
export interface SlurmChoices {
  partition?: string;
  account?: string;
  qos?: string;
  /** Extra sbatch arguments, appended as given. */
  args?: string[];
}

/** What to run: `sbatch <args>` with the script on stdin and `env` as its environment. */
export interface SbatchRequest {
  args: string[];
  script: string;
  env: Record<string, string>;
}

/** The resources one jobspec asks for, in Slurm's terms. */
export interface SlurmResources {
  nodes: number;
  ntasks: number;
  cpusPerTask: number;
  gpusPerTask: number;
  /** Memory per slot in bytes (0: not asked). */
  memoryPerTask: number;
}

type Vertex = { type?: unknown; count?: unknown; with?: unknown; unit?: unknown };

const UNIT_BYTES: Record<string, number> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };

/** The comment that marks a Slurm job as this jobtap job's (see the file comment). */
export function jobtapComment(dec: string): string {
  return `jobtap:${dec}`;
}

/** Reads the resource tree: slots, and per slot its cores, gpus and memory. Throws on nonsense. */
export function slurmResources(jobspec: Jobspec): SlurmResources {
  const r = { nodes: 0, slots: 0, cores: 0, gpus: 0, memory: 0 };
  const walk = (list: unknown, mult: number, inSlot: boolean, slotMult: number): void => {
    if (!Array.isArray(list)) return;
    for (const raw of list) {
      const v = (typeof raw === "object" && raw !== null ? raw : {}) as Vertex;
      const n = mult * countOf(v.count);
      if (v.type === "node") r.nodes += n;
      else if (v.type === "slot") r.slots += n;
      // Inside a slot, counts are per slot: divide the outer multiplier back out.
      else if (v.type === "core" && inSlot) r.cores += n / slotMult;
      else if (v.type === "gpu" && inSlot) r.gpus += n / slotMult;
      else if (v.type === "memory" && inSlot) r.memory += (n / slotMult) * (UNIT_BYTES[String(v.unit ?? "B").toUpperCase()] ?? 1);
      walk(v.with, n, inSlot || v.type === "slot", v.type === "slot" ? n : slotMult);
    }
  };
  walk(jobspec.resources, 1, false, 1);
  if (r.slots === 0) throw new JobtapError(ErrorCode.BAD_JOBSPEC, "resources: no slot found");
  const task = jobspec.tasks[0] as { count?: { total?: unknown; per_slot?: unknown } } | undefined;
  const total = task?.count?.total;
  const perSlot = typeof task?.count?.per_slot === "number" ? task.count.per_slot : 1;
  return {
    nodes: r.nodes,
    ntasks: typeof total === "number" ? total : r.slots * perSlot,
    cpusPerTask: Math.max(1, r.cores),
    gpusPerTask: r.gpus,
    memoryPerTask: r.memory,
  };
}

function countOf(c: unknown): number {
  if (typeof c === "number") return c;
  if (typeof c === "object" && c !== null && typeof (c as { min?: unknown }).min === "number") return (c as { min: number }).min;
  return 1;
}

/** Slurm's --time for a duration in seconds: whole minutes, rounded up (0: no limit). */
export function slurmTime(seconds: number): string | undefined {
  if (!(seconds > 0) || !Number.isFinite(seconds)) return undefined;
  return String(Math.ceil(seconds / 60));
}

/** Quotes one word for /bin/sh. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The batch script: exec the command, through srun when there are several tasks. */
export function batchScript(argv: readonly string[], ntasks: number): string {
  const cmd = argv.map(shellQuote).join(" ");
  return `#!/bin/sh\n# submitted by jobtap\nexec ${ntasks > 1 ? "srun " : ""}${cmd}\n`;
}

/**
 * The whole submission of one job. `f58` replaces {{id}} in paths, `dec` (the decimal id,
 * ASCII) goes into the comment; `base` is the environment used when the jobspec carries
 * none. Throws with a message naming the bad jobspec field.
 */
export function sbatchRequest(
  jobspec: Jobspec,
  f58: string,
  dec: string,
  duration: number,
  site: SlurmChoices,
  base: Record<string, string | undefined>,
): SbatchRequest {
  const sys = jobspec.attributes.system ?? {};
  const argv = (jobspec.tasks[0] as { command?: unknown } | undefined)?.command;
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === "string")) {
    throw new JobtapError(ErrorCode.BAD_JOBSPEC, "tasks[0].command: must be a non-empty array of strings");
  }
  const res = slurmResources(jobspec);
  const cwd = typeof sys.cwd === "string" ? sys.cwd : undefined;
  const job = jobChoices(jobspec);
  const args = ["--parsable", `--job-name=${jobName(jobspec, argv as string[])}`, `--comment=${jobtapComment(dec)}`];
  args.push(`--ntasks=${res.ntasks}`, `--cpus-per-task=${res.cpusPerTask}`);
  if (res.nodes > 0) args.push(`--nodes=${res.nodes}`);
  if (res.gpusPerTask > 0) args.push(`--gpus-per-task=${res.gpusPerTask}`);
  if (res.memoryPerTask > 0) args.push(`--mem-per-cpu=${Math.ceil(res.memoryPerTask / res.cpusPerTask / 1024 ** 2)}M`);
  const time = slurmTime(duration);
  if (time !== undefined) args.push(`--time=${time}`);
  if (cwd !== undefined) args.push(`--chdir=${cwd}`);
  for (const [stream, flag] of [["stdout", "--output"], ["stderr", "--error"]] as const) {
    const path = outputPath(jobspec, stream, f58);
    if (path !== undefined) args.push(`${flag}=${path}`);
  }
  const partition = job.partition ?? site.partition;
  const account = job.account ?? site.account;
  const qos = job.qos ?? site.qos;
  if (partition !== undefined) args.push(`--partition=${partition}`);
  if (account !== undefined) args.push(`--account=${account}`);
  if (qos !== undefined) args.push(`--qos=${qos}`);
  args.push(...(site.args ?? []), ...(job.args ?? []), "--export=ALL");
  return { args, script: batchScript(argv as string[], res.ntasks), env: jobEnvironment(jobspec, f58, base) };
}

/** The job's own Slurm choices, `attributes.system.exec.slurm`; throws naming a bad field. */
export function jobChoices(jobspec: Jobspec): SlurmChoices {
  const exec = jobspec.attributes.system?.exec as { slurm?: unknown } | undefined;
  const t = exec?.slurm;
  if (t === undefined) return {};
  const where = "attributes.system.exec.slurm";
  if (typeof t !== "object" || t === null || Array.isArray(t)) throw new JobtapError(ErrorCode.BAD_JOBSPEC, `${where}: must be an object`);
  const out: SlurmChoices = {};
  for (const [key, v] of Object.entries(t)) {
    if (key === "partition" || key === "account" || key === "qos") {
      if (typeof v !== "string" || v === "") throw new JobtapError(ErrorCode.BAD_JOBSPEC, `${where}.${key}: must be a non-empty string`);
      out[key] = v;
    } else if (key === "args") {
      if (!Array.isArray(v) || !v.every((a) => typeof a === "string")) throw new JobtapError(ErrorCode.BAD_JOBSPEC, `${where}.args: must be an array of strings`);
      out.args = v as string[];
    } else {
      throw new JobtapError(ErrorCode.BAD_JOBSPEC, `${where}.${key}: unknown key (expected partition, account, qos, args)`);
    }
  }
  return out;
}

function jobName(jobspec: Jobspec, argv: string[]): string {
  const name = (jobspec.attributes.system?.job as { name?: unknown } | undefined)?.name;
  if (typeof name === "string" && name !== "") return name;
  return argv[0]!.split("/").pop() || "jobtap";
}

function outputPath(jobspec: Jobspec, stream: "stdout" | "stderr", f58: string): string | undefined {
  const shell = jobspec.attributes.system?.shell as { options?: { output?: Record<string, { path?: unknown }> } } | undefined;
  const p = shell?.options?.output?.[stream]?.path;
  if (typeof p !== "string") return undefined;
  // Slurm expands %-patterns in these paths; a literal % must reach it doubled.
  return p.replaceAll("%", "%%").replaceAll("{{id}}", f58);
}

function jobEnvironment(jobspec: Jobspec, f58: string, base: Record<string, string | undefined>): Record<string, string> {
  const env = jobspec.attributes.system?.environment;
  const from = typeof env === "object" && env !== null && !Array.isArray(env) ? (env as Record<string, unknown>) : base;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(from)) if (typeof v === "string") out[k] = v;
  out.JOBTAP_JOB_ID = f58;
  return out;
}

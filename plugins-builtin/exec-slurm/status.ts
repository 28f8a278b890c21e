/**
 * What Slurm says about jobs, read from one squeue (or sacct) call, and what it means for
 * the jobtap job. Pure: parsing and the state table are tested without a cluster.
 */

/** One job's line: `squeue -O JobID:|,State:|,exit_code:|,Reason:|`. */
export interface SlurmJobStatus {
  slurmId: string;
  state: string;
  /** The POSIX wait status (squeue's exit_code; sacct's "code:signal" converted). */
  waitStatus: number;
  reason: string;
}

/** The squeue --Format spec whose lines parseSqueue reads. */
export const SQUEUE_FORMAT = "JobID:|,State:|,exit_code:|,Reason:|";

/** squeue's arguments for one poll of `ids` (every state, so ended jobs are seen too). */
export function squeueArgs(ids: readonly string[]): string[] {
  return ["--noheader", "--states=all", `--jobs=${ids.join(",")}`, `--Format=${SQUEUE_FORMAT}`];
}

/** Parses squeue output; lines that do not fit are ignored (a job step, a warning). */
export function parseSqueue(stdout: string): Map<string, SlurmJobStatus> {
  const out = new Map<string, SlurmJobStatus>();
  for (const line of stdout.split("\n")) {
    const [id, state, exit, reason] = line.trim().split("|");
    if (!id || !/^\d+$/.test(id) || !state) continue;
    const status = Number(exit);
    out.set(id, { slurmId: id, state: state.trim(), waitStatus: Number.isInteger(status) ? status : 0, reason: (reason ?? "").trim() });
  }
  return out;
}

/** sacct's arguments for jobs squeue no longer knows (purged from slurmctld's memory). */
export function sacctArgs(ids: readonly string[]): string[] {
  return ["--noheader", "--parsable2", "--allocations", `--jobs=${ids.join(",")}`, "--format=JobID,State,ExitCode,Reason"];
}

/** Parses sacct output: ExitCode is "code:signal", State may read "CANCELLED by 0". */
export function parseSacct(stdout: string): Map<string, SlurmJobStatus> {
  const out = new Map<string, SlurmJobStatus>();
  for (const line of stdout.split("\n")) {
    const [id, state, exit, reason] = line.trim().split("|");
    if (!id || !/^\d+$/.test(id) || !state) continue;
    const [code, signal] = (exit ?? "0:0").split(":").map(Number);
    const wait = signal ? signal & 0x7f : ((code ?? 0) & 0xff) << 8;
    out.set(id, { slurmId: id, state: state.split(" ")[0]!, waitStatus: wait, reason: reason ?? "" });
  }
  return out;
}

/** squeue's arguments listing the user's jobs with their comments (lookup by comment). */
export function commentLookupArgs(): string[] {
  return ["--noheader", "--states=all", "--me", "--Format=JobID:|,Comment:|"];
}

/** Comment → Slurm id, from commentLookupArgs' output. */
export function parseComments(stdout: string): Map<string, string> {
  const byComment = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const [id, comment] = line.trim().split("|");
    if (id && comment) byComment.set(comment, id);
  }
  return byComment;
}

/**
 * What a Slurm state means here:
 *   waiting  not running yet (or requeued): nothing to report
 *   running  the work has started: `start` (once)
 *   ended    terminal: `finish` with the status if it started, then `release`; `exception`
 *            names the exception raised first (undefined: a normal end)
 */
export type Outcome =
  | { kind: "waiting" }
  | { kind: "running" }
  | { kind: "ended"; exception?: { type: string; note: string } };

const WAITING = new Set(["PENDING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "RESV_DEL_HOLD", "SPECIAL_EXIT", "REVOKED"]);
/** A state in which the job has not started in Slurm (PENDING, requeued, held). */
export function slurmWaiting(state: string): boolean {
  return WAITING.has(state);
}

const RUNNING = new Set(["CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT", "RESIZING"]);

/**
 * The outcome of a status. `killedByUs`: jobtap cancelled it (a jobtap exception already
 * says why), so CANCELLED is not reported again.
 */
export function outcomeOf(s: SlurmJobStatus, slurmId: string, killedByUs: boolean): Outcome {
  if (WAITING.has(s.state)) return { kind: "waiting" };
  if (RUNNING.has(s.state)) return { kind: "running" };
  const ended = (type: string, what: string): Outcome => ({
    kind: "ended",
    exception: { type, note: `Slurm job ${slurmId} ${what}${s.reason && s.reason !== "None" ? ` (${s.reason})` : ""}` },
  });
  switch (s.state) {
    case "COMPLETED":
    case "FAILED":
      return { kind: "ended" };
    case "CANCELLED":
      return killedByUs ? { kind: "ended" } : ended("cancel", "was cancelled on the Slurm side");
    case "TIMEOUT":
      return ended("timeout", "reached its Slurm time limit");
    case "DEADLINE":
      return ended("timeout", "reached its Slurm deadline");
    case "NODE_FAIL":
      return ended("node-fail", "ended: its node failed");
    case "PREEMPTED":
      return ended("preempt", "was preempted");
    case "BOOT_FAIL":
      return ended("exec", "ended: its node failed to boot");
    case "OUT_OF_MEMORY":
      return ended("exec", "ran out of memory");
    default:
      return ended("exec", `ended in Slurm state ${s.state}`);
  }
}

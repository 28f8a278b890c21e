/**
 * .exec-slurm's `job.explain` (issue 36): where a job is on its way through Slurm. Read from
 * the executor's own record, never by asking Slurm again: the queue for sbatch, sbatch
 * running, the lookup of an uncertain submission, and then the Slurm job id with the state
 * and Reason of the last poll (`squeue` already asks for them). A job that ended says
 * Slurm's final state and reason, which the executor saved in its exec eventlog.
 */
import type { JobArgs, PluginContext } from "jobtap/plugin";
import { formatFSD, formatJobId } from "jobtap/plugin";
import { FINAL_REASON_KEY, FINAL_STATE_KEY, SAVED_ID_KEY, type SlurmExecutor } from "./executor.js";
import { LOOKUP_MISSES, type RunView } from "./run.js";
import { slurmWaiting } from "./status.js";
import { jobtapComment } from "./submit.js";

type Figures = Record<string, string | number | boolean | null>;
type Out = { reasons: { layer: "exec" | "end"; code: string; text: string; figures: Figures }[] };

/** The job's Slurm reason, or undefined when it is not a Slurm job (or has none yet). */
export function explainSlurm(p: PluginContext, executor: SlurmExecutor, job: JobArgs): Out | undefined {
  const view = executor.whereIs(job.id);
  if (view !== undefined) return { reasons: [{ layer: "exec", ...onTheWay(view, job, p.clock.now()) }] };
  if (job.state !== "CLEANUP" && job.state !== "INACTIVE") return undefined;
  return ended(p.execSaved(job.id));
}

/** Squeue's Reason worth printing (`None` says nothing). */
function reasonOf(reason: string | undefined): string | null {
  return reason === undefined || reason === "" || reason === "None" ? null : reason;
}

function onTheWay(v: RunView, job: JobArgs, now: number): { code: string; text: string; figures: Figures } {
  switch (v.phase) {
    case "queued":
      return {
        code: "slurm-submit-queue",
        text: `waits to be submitted to Slurm: ${v.ahead} ahead of it, sbatch runs ${v.submitConcurrency} at a time`,
        figures: { ahead: v.ahead, submit_concurrency: v.submitConcurrency },
      };
    case "submitting":
      return { code: "slurm-submitting", text: "being submitted to Slurm (sbatch runs)", figures: {} };
    case "lookup": {
      const comment = jobtapComment(formatJobId(job.id, "dec"));
      const text = `its submission to Slurm is uncertain: looking it up by its comment ${comment} before any resubmit (${v.misses} of ${LOOKUP_MISSES} lookups found nothing)`;
      return { code: "slurm-lookup", text, figures: { comment, misses: v.misses, lookups: LOOKUP_MISSES } };
    }
    case "tracked":
      return tracked(v, now);
  }
}

function tracked(v: RunView, now: number): { code: string; text: string; figures: Figures } {
  const id = v.slurmId ?? null;
  if (v.seen === undefined) return { code: "slurm-job", text: `Slurm job ${id}: not polled yet`, figures: { slurm_jobid: id, slurm_state: null, slurm_reason: null } };
  const { state, at } = v.seen;
  const reason = reasonOf(v.seen.reason);
  const ago = Math.max(0, Math.floor((now - at) / 1000));
  const figures: Figures = { slurm_jobid: id, slurm_state: state, slurm_reason: reason, polled_at: at / 1000, polled_ago_s: ago };
  const polled = `(polled ${formatFSD(ago)} ago)`;
  if (slurmWaiting(state)) {
    return { code: "slurm-pending", text: `Slurm job ${id} is ${state} in Slurm${reason === null ? "" : `, reason ${reason}`} ${polled}`, figures };
  }
  return { code: "slurm-running", text: `runs as Slurm job ${id} (${state}${reason === null ? "" : `, reason ${reason}`}) ${polled}`, figures };
}

function ended(saved: Record<string, unknown>): Out | undefined {
  const state = saved[FINAL_STATE_KEY];
  const id = saved[SAVED_ID_KEY];
  if (typeof state !== "string" || typeof id !== "string") return undefined;
  const reason = reasonOf(typeof saved[FINAL_REASON_KEY] === "string" ? (saved[FINAL_REASON_KEY] as string) : undefined);
  const text = `Slurm job ${id} ended ${state}${reason === null ? "" : `, reason ${reason}`}`;
  return { reasons: [{ layer: "end", code: "slurm-ended", text, figures: { slurm_jobid: id, slurm_state: state, slurm_reason: reason } }] };
}

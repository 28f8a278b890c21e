/**
 * The multi-factor priority (Slurm's priority/multifactor, flux-accounting's weights):
 * priority = Σ weight × factor over fair share, age, urgency, queue and job size, each
 * factor in [0, 1], rounded and clamped into Flux's priority range.
 */
import type { JobArgs } from "jobtap/plugin";
import { jobSizeCounts } from "../common/jobspec.js";
import { PRIORITY_MAX, type AccountingConfig, type Weights } from "./config.js";

export type Factors = Record<keyof Weights, number>;

/** The job's bank as submitted (`attributes.system.bank`), if any. */
export function bankAttr(job: Pick<JobArgs, "jobspec">): unknown {
  return job.jobspec.attributes?.system?.bank;
}

/** The factors of a job, given its association's fair-share factor and the time (ms). */
export function factorsOf(cfg: AccountingConfig, fairShare: number, job: JobArgs, now: number): Factors {
  const age = Math.min(1, Math.max(0, (now - job.t_submit * 1000) / cfg.maxAgeMs));
  const q = job.jobspec.attributes?.system?.queue;
  const queue = typeof q === "string" ? (cfg.queues[q] ?? 0) : 0;
  const jobSize = cfg.weights.jobSize > 0 ? Math.min(1, jobSizeCounts(job.jobspec).ncores / cfg.jobSizeMax) : 0;
  return { fairShare, age, urgency: job.urgency / 31, queue, jobSize };
}

/**
 * The same priority as `combine(factorsOf(...))` without building the factors: this runs
 * for every pending job at each recompute (100,000 jobs in the bench), so factors whose
 * weight is 0 are not computed at all.
 */
export function priorityOf(cfg: AccountingConfig, fairShare: number, job: JobArgs, now: number): number {
  const w = cfg.weights;
  let sum = w.fairShare * fairShare + (w.urgency * job.urgency) / 31;
  if (w.age > 0) sum += w.age * Math.min(1, Math.max(0, (now - job.t_submit * 1000) / cfg.maxAgeMs));
  if ((w.queue > 0 && cfg.anyQueue) || w.jobSize > 0) {
    const f = factorsOf(cfg, fairShare, job, now);
    sum += w.queue * f.queue + w.jobSize * f.jobSize;
  }
  return Math.min(PRIORITY_MAX, Math.max(0, Math.round(sum)));
}

/** Σ weight × factor, rounded, within 0..PRIORITY_MAX. */
export function combine(w: Weights, f: Factors): number {
  const sum = w.fairShare * f.fairShare + w.age * f.age + w.urgency * f.urgency + w.queue * f.queue + w.jobSize * f.jobSize;
  return Math.min(PRIORITY_MAX, Math.max(0, Math.round(sum)));
}

/** One job's priority explained factor by factor (`jobtap plugin query accounting`). */
export function explain(w: Weights, f: Factors): Record<string, unknown> {
  const parts: Record<string, { factor: number; weight: number; value: number }> = {};
  for (const k of Object.keys(w) as (keyof Weights)[]) parts[k] = { factor: f[k], weight: w[k], value: w[k] * f[k] };
  return { priority: combine(w, f), factors: parts };
}

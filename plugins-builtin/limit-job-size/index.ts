/**
 * .limit-job-size: rejects jobs larger or smaller than the configured sizes (spec
 * flux-jobtap §8). Config: `[policy.limits.job-size.max]` / `.min` with `nnodes`, `ncores`,
 * `ngpus`, and the same under `[queues.<q>.policy.limits.job-size]`. -1 is unlimited; a
 * queue's key overrides the general key of the same name (and may set -1 to lift it).
 */
import type { ConfigCheck, JobArgs, PluginContext } from "jobtap/plugin";
import { ErrorCode, isJobtapError } from "jobtap/plugin";
import { checkWith, ConfigError, defaultQueue, limitViews, forQueue, jobQueue, limitsOf, queueTables, tableAt, type Table } from "../common/config.js";
import { jobSizeCounts, type JobSizeCounts } from "../common/jobspec.js";

const KEYS = ["nnodes", "ncores", "ngpus"] as const;
type SizeKey = (typeof KEYS)[number];
/** One bound (max or min): only the keys that are configured. */
type Bound = Partial<Record<SizeKey, number>>;

interface SizeLimits {
  max: Bound;
  min: Bound;
}

interface AllLimits {
  general: SizeLimits;
  queues: Map<string, SizeLimits>;
  /** Queue of jobs that name none (`[policy.jobspec.defaults.system] queue`). */
  defaultQueue: string | undefined;
}

function readBound(limits: Table | undefined, which: "max" | "min", where: string): Bound {
  const t = limits && tableAt(limits, ["job-size", which], where);
  const out: Bound = {};
  if (t === undefined) return out;
  for (const k of KEYS) {
    const v = t[k];
    if (v === undefined) continue;
    const at = `[${where}.job-size.${which}].${k}`;
    if (typeof v !== "number" || !Number.isInteger(v)) throw new ConfigError(`${at}: must be an integer, got ${JSON.stringify(v)}`);
    if (v < -1) throw new ConfigError(`${at}: size must be -1 (unlimited), or >= 0 (got ${v})`);
    out[k] = v;
  }
  return out;
}

function readSizeLimits(t: Table, where: string): SizeLimits {
  const limits = limitsOf(t, where);
  const at = where === "" ? "policy.limits" : `${where}.policy.limits`;
  return { max: readBound(limits, "max", at), min: readBound(limits, "min", at) };
}

/** Reads general and per-queue job-size limits; throws ConfigError naming the TOML path. */
export function readJobSizeLimits(conf: Table): AllLimits {
  const queues = new Map<string, SizeLimits>();
  for (const [name, q] of queueTables(conf)) queues.set(name, readSizeLimits(q, `queues.${name}`));
  return { general: readSizeLimits(conf, ""), queues, defaultQueue: defaultQueue(conf) };
}

function configured(l: AllLimits): boolean {
  const any = (s: SizeLimits) => Object.keys(s.max).length + Object.keys(s.min).length > 0;
  return any(l.general) || [...l.queues.values()].some(any);
}

/** What conf.update would refuse in `[policy.limits]` and each queue's limits. */
export const checkConfig: ConfigCheck = checkWith(readJobSizeLimits, limitViews);

/** Checks one job; returns Flux's message naming the first violated key, or undefined. */
export function checkJobSize(l: AllLimits, job: JobArgs): string | undefined {
  const queue = jobQueue(job.jobspec, l.defaultQueue);
  const q = queue !== undefined ? l.queues.get(queue) : undefined;
  const counts: JobSizeCounts = jobSizeCounts(job.jobspec);
  for (const k of KEYS) {
    const max = q?.max[k] ?? l.general.max[k] ?? -1;
    if (max !== -1 && counts[k] > max) {
      return `requested ${k} (${counts[k]}) exceeds policy limit of ${max}${forQueue(queue)}`;
    }
    const min = q?.min[k] ?? l.general.min[k] ?? -1;
    if (min !== -1 && counts[k] < min) {
      return `requested ${k} (${counts[k]}) is under policy limit of ${min}${forQueue(queue)}`;
    }
  }
  return undefined;
}

/** Registers conf.update (parse limits) and job.validate (check the job's size). */
export default function limitJobSize(p: PluginContext): void {
  let limits: AllLimits | undefined;
  p.on("conf.update", ({ conf }) => {
    try {
      const next = readJobSizeLimits(conf);
      limits = configured(next) ? next : undefined;
    } catch (e) {
      if (isJobtapError(e, ErrorCode.CONFIG)) return p.reject(e.message);
      throw e;
    }
  });
  p.on("job.validate", (job) => {
    if (limits === undefined) return;
    const why = checkJobSize(limits, job);
    return why === undefined ? undefined : p.reject(why);
  });
  // job.explain: each bound that applies to the job, beside the job's count.
  p.on("job.explain", (job) => (limits === undefined ? undefined : explainJobSize(limits, job)));
}

/**
 * One reason per configured bound that applies (max and min of nnodes, ncores, ngpus), or
 * undefined when none does. Sizes are checked at submit only (as Flux's): a job accepted
 * before a bound was tightened stays, and says so.
 */
export function explainJobSize(l: AllLimits, job: JobArgs) {
  const queue = jobQueue(job.jobspec, l.defaultQueue);
  const q = queue !== undefined ? l.queues.get(queue) : undefined;
  const counts: JobSizeCounts = jobSizeCounts(job.jobspec);
  const reasons = [];
  for (const which of ["max", "min"] as const) {
    for (const k of KEYS) {
      const limit = q?.[which][k] ?? l.general[which][k] ?? -1;
      if (limit === -1) continue;
      const within = which === "max" ? counts[k] <= limit : counts[k] >= limit;
      const word = which === "max" ? "maximum" : "minimum";
      const text = within
        ? `${k} ${counts[k]} is within the policy ${word} of ${limit}${forQueue(queue)}`
        : `${k} ${counts[k]} is ${which === "max" ? "over" : "under"} the policy ${word} of ${limit}${forQueue(queue)} (set after the job was accepted; it stays)`;
      const figures = { key: k, bound: which, limit, requested: counts[k], within, queue: queue ?? null };
      reasons.push({ code: within ? "size-limit" : "size-outside-limit", text, figures });
    }
  }
  return reasons.length === 0 ? undefined : { reasons };
}

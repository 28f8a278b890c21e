/**
 * .limit-duration: rejects jobs whose duration exceeds the configured limit (spec
 * flux-jobtap §8). Config: `[policy.limits] duration = "FSD"` and
 * `[queues.<q>.policy.limits] duration = "FSD"`. A limit of "0" (or "inf") is unlimited, so
 * a queue can lift the general limit. When a limit applies, a job with no duration
 * (unlimited) is rejected too.
 */
import type { ConfigCheck, JobArgs, PluginContext } from "jobtap/plugin";
import { ErrorCode, formatFSD, isJobtapError, parseFSD } from "jobtap/plugin";
import { jobDuration } from "../common/jobspec.js";
import { checkWith, ConfigError, defaultQueue, limitViews, forQueue, jobQueue, limitsOf, queueTables, type Table } from "../common/config.js";

/** Parsed limits; `undefined` means "not configured here", 0 means unlimited. */
interface DurationLimits {
  general: number | undefined;
  queues: Map<string, number>;
  /** Queue of jobs that name none (`[policy.jobspec.defaults.system] queue`). */
  defaultQueue: string | undefined;
}

/** Reads one `duration` key: a string FSD; "0" and "inf" mean unlimited (0). */
function readDuration(limits: Table | undefined, where: string): number | undefined {
  const v = limits?.duration;
  if (v === undefined) return undefined;
  if (typeof v !== "string") throw new ConfigError(`[${where}].duration: must be a string (FSD), got ${JSON.stringify(v)}`);
  let s: number;
  try {
    s = parseFSD(v, `[${where}].duration`);
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
  return s === Infinity ? 0 : s;
}

/** Reads `[policy.limits]` and every queue's; throws ConfigError naming the TOML path. */
export function readDurationLimits(conf: Table): DurationLimits {
  const general = readDuration(limitsOf(conf, ""), "policy.limits");
  const queues = new Map<string, number>();
  for (const [name, q] of queueTables(conf)) {
    const where = `queues.${name}`;
    const d = readDuration(limitsOf(q, where), `${where}.policy.limits`);
    if (d !== undefined) queues.set(name, d);
  }
  return { general, queues, defaultQueue: defaultQueue(conf) };
}

/** What conf.update would refuse in `[policy.limits]` and each queue's limits. */
export const checkConfig: ConfigCheck = checkWith(readDurationLimits, limitViews);

/** The limit that applies to a job (0: unlimited, undefined: none configured) and its queue. */
function limitFor(limits: DurationLimits, job: JobArgs): { limit: number | undefined; queue: string | undefined } {
  const queue = jobQueue(job.jobspec, limits.defaultQueue);
  return { limit: (queue !== undefined ? limits.queues.get(queue) : undefined) ?? limits.general, queue };
}

/** Flux's check: a message if the job's duration is over its limit, else undefined. */
export function checkDuration(limits: DurationLimits, job: JobArgs): string | undefined {
  const { limit, queue } = limitFor(limits, job);
  if (limit === undefined || limit === 0) return undefined;
  const duration = jobDuration(job.jobspec);
  if (duration !== 0 && duration <= limit) return undefined;
  const requested = duration === 0 ? "unlimited" : formatFSD(duration);
  return `requested duration (${requested}) exceeds policy limit of ${formatFSD(limit)}${forQueue(queue)}`;
}

/** Registers conf.update (parse and keep the limits) and job.validate (check). */
export default function limitDuration(p: PluginContext): void {
  let limits: DurationLimits = { general: undefined, queues: new Map(), defaultQueue: undefined };
  p.on("conf.update", ({ conf }) => {
    try {
      limits = readDurationLimits(conf);
    } catch (e) {
      if (isJobtapError(e, ErrorCode.CONFIG)) return p.reject(e.message);
      throw e;
    }
  });
  p.on("job.validate", (job) => {
    if (limits.general === undefined && limits.queues.size === 0) return;
    const why = checkDuration(limits, job);
    return why === undefined ? undefined : p.reject(why);
  });
  // job.explain: the limit that applies now and the job's duration beside it.
  p.on("job.explain", (job) => explainDuration(limits, job));
}

/**
 * The duration limit beside the job's, or undefined when no limit applies. The check runs
 * at submit only (as Flux's): a job accepted before the limit was lowered stays, and says so.
 */
export function explainDuration(limits: DurationLimits, job: JobArgs) {
  const { limit, queue } = limitFor(limits, job);
  if (limit === undefined || limit === 0) return undefined;
  const duration = jobDuration(job.jobspec);
  const within = duration !== 0 && duration <= limit;
  const requested = duration === 0 ? "unlimited" : formatFSD(duration);
  const text = within
    ? `duration ${requested} is within the policy limit of ${formatFSD(limit)}${forQueue(queue)}`
    : `duration ${requested} exceeds the policy limit of ${formatFSD(limit)}${forQueue(queue)} (set after the job was accepted; it stays)`;
  const figures = { limit, duration, within, queue: queue ?? null };
  return { reasons: [{ code: within ? "duration-limit" : "duration-over-limit", text, figures }] };
}

/**
 * "Why is my job not running?" (issue 36): one job's answer from every layer — the state
 * machine (why-state.ts), the plugins (`job.explain`, merged in load order by the host),
 * the scheduler (why-sched.ts) and, for a job that ended, its end (why-ended.ts).
 *
 * Nothing here is on a job's path: it runs only when someone asks, reads the manager's
 * state and calls two topics that change nothing (`job.priority.get` without applying its
 * answer, to name the plugin that made the priority unavailable; `job.explain`).
 */
import { ErrorCode, JobtapError } from "../errors.js";
import { formatJobId, type JobId } from "./base/ids.js";
import { loadUserTable } from "./base/users.js";
import type { QueueGate } from "./core/queues.js";
import type { Engine } from "./engine/engine.js";
import type { ActiveJob } from "./engine/job.js";
import { PRIORITY_UNAVAILABLE } from "./port/port.js";
import { REASON_LAYERS, type Explanation, type Reason } from "./port/reasons.js";
import type { Scheduler } from "./scheduler/scheduler.js";
import { endedReasons } from "./why-ended.js";
import { schedulerReasons, type SchedAnalyzer } from "./why-sched.js";
import { managerReason, stateReasons, type StateLookups } from "./why-state.js";

/** What `explainJob` reads. */
export interface WhyDeps {
  readonly engine: Engine;
  readonly scheduler: Scheduler;
  readonly gate: QueueGate;
  /** A known inactive job replayed from the store, else undefined. */
  loadInactive(id: JobId): ActiveJob | undefined;
  /** The state of a job the manager knows, else undefined. */
  stateOf(id: JobId): string | undefined;
  /** The policy code's better-analyze producer, once it exists (why-sched.ts). */
  readonly analyzer?: SchedAnalyzer | undefined;
}

/** Every layer's reasons for one job; throws UNKNOWN_JOB. */
export async function explainJob(d: WhyDeps, id: JobId): Promise<Explanation> {
  const active = d.engine.active.get(id);
  const job = active ?? d.loadInactive(id);
  if (job === undefined) throw new JobtapError(ErrorCode.UNKNOWN_JOB, `unknown job ${formatJobId(id)}`);
  const own: Reason[] = [];
  if (active !== undefined) {
    own.push(...stateReasons(job, whyLookups(d)));
    if (job.core.state === "PRIORITY") own.push(await priorityReason(d, job));
    if (job.core.state === "SCHED" && job.core.urgency > 0) own.push(...schedulerReasons(job, d.scheduler, d.analyzer));
  }
  own.push(...endedReasons(job.core, job.eventlog));
  const plugins = await pluginReasons(d, job);
  return { id: formatJobId(id), state: job.core.state, reasons: mergeReasons(own, plugins) };
}

/** The state producers' lookups over the manager (user names read once, on first need). */
export function whyLookups(d: WhyDeps): StateLookups {
  let users: ReturnType<typeof loadUserTable> | undefined;
  return {
    stateOf: (id) => d.stateOf(id),
    stoppedQueue: (job) => d.gate.stoppedQueueOf(job.core.jobspec),
    userName: (uid) => (users ??= loadUserTable()).name(uid),
  };
}

/** A job in PRIORITY: which plugin made its priority unavailable (asked again, not applied). */
async function priorityReason(d: WhyDeps, job: ActiveJob): Promise<Reason> {
  const port = d.engine.port;
  if (!port.matches("job.priority.get")) return managerReason("priority-wait", "waiting for a priority (no priority plugin answers)");
  const res = await port.callJob("job.priority.get", d.engine.args(job));
  if (res.error !== undefined) {
    return managerReason("priority-error", `priority: ${res.error.message}`, { plugin: res.error.plugin });
  }
  if (res.out.priority === PRIORITY_UNAVAILABLE) {
    const plugin = res.out.unavailableBy ?? "a plugin";
    return managerReason("priority-unavailable", `priority unavailable: plugin ${plugin} returned PRIORITY_UNAVAILABLE`, { plugin });
  }
  return managerReason("priority-wait", "waiting for its priority to be applied", { priority: res.out.priority ?? null });
}

/**
 * The host's own reasons (an isolated plugin restarting that holds the job: the cause,
 * first), then `job.explain` over the plugins (none when nobody listens).
 */
async function pluginReasons(d: WhyDeps, job: ActiveJob): Promise<Reason[]> {
  const port = d.engine.port;
  const host = port.hostReasons?.(d.engine.args(job)) ?? [];
  if (!port.matches("job.explain")) return host;
  const res = await port.callJob("job.explain", d.engine.args(job));
  return [...host, ...((res.out.reasons ?? []) as Reason[])];
}

/**
 * The answer's order: a plugin reason whose key names a manager reason replaces it in its
 * place (the plugin that added a dependency explains it best); then everything sorted by
 * layer, stable, so plugins keep their load order.
 */
export function mergeReasons(own: readonly Reason[], plugins: readonly Reason[]): Reason[] {
  const byKey = new Map<string, Reason>();
  for (const r of plugins) if (r.key !== undefined && !byKey.has(r.key)) byKey.set(r.key, r);
  const used = new Set<Reason>();
  const merged = own.map((r) => {
    const better = r.key === undefined ? undefined : byKey.get(r.key);
    if (better === undefined) return r;
    used.add(better);
    return { ...better, layer: r.layer };
  });
  for (const r of plugins) if (!used.has(r)) merged.push(r);
  const rank = (r: Reason) => REASON_LAYERS.indexOf(r.layer);
  return merged.map((r, i) => ({ r, i })).sort((a, b) => rank(a.r) - rank(b.r) || a.i - b.i).map((x) => x.r);
}

/**
 * .update-queue: named queues from `[queues.<name>]` as far as admission, limits and
 * scheduling need them (spec flux-jobtap §8, §9), plus the `attributes.system.queue`
 * update rule.
 *
 * - Admission (job.create, the first callback at submit): with queues configured, a job must name one (or get
 *   `[policy.jobspec.defaults.system] queue`); an unknown queue or a disabled one is
 *   rejected ("job submission to Q is disabled: reason").
 * - Start/stop: a stopped queue's jobs stay in SCHED with no alloc request, as in Flux (the
 *   manager's mechanism, `p.setQueueStarted`); stopping withdraws pending requests, starting
 *   sends them. The status is persisted and re-applied at conf.update, so a restart keeps a
 *   stopped queue stopped before anything is scheduled.
 * - Services (owner only): `update-queue.enable|disable|start|stop {name?, reason?}` and
 *   `update-queue.status` (open to guests).
 */
import type { ConfigCheck, JobArgs, PluginContext } from "jobtap/plugin";
import { ErrorCode, isJobtapError, withRead } from "jobtap/plugin";
import { checkWith, ConfigError, defaultQueue, jobQueue, queueTables } from "../common/config.js";
import { explainQueue, reasonOf, reconcile, targets, type QueueStatus, type StatusTable } from "./status.js";

const STATE_KEY = "status";

interface QueueConfig {
  names: string[];
  defaultQueue: string | undefined;
  /** Virtual queue → its parent (RFC 33). */
  parents: Map<string, string>;
}

/** Reads the queue names and the default queue; throws ConfigError naming the path. */
export function readQueueConfig(conf: Record<string, unknown>): QueueConfig {
  const tables = queueTables(conf);
  const names = [...tables.keys()];
  const dflt = defaultQueue(conf);
  if (dflt !== undefined && !names.includes(dflt)) {
    throw new ConfigError(`[policy.jobspec.defaults.system].queue: "${dflt}" is not a configured queue`);
  }
  const parents = new Map<string, string>();
  for (const [name, t] of tables) if (typeof t.parent === "string") parents.set(name, t.parent);
  return { names, defaultQueue: dflt, parents };
}

/** `[job-manager] stop-queues-on-restart` (default false); throws ConfigError naming it. */
export function stopQueuesOnRestart(conf: Record<string, unknown>): boolean {
  const jm = conf["job-manager"];
  const v = typeof jm === "object" && jm !== null ? (jm as Record<string, unknown>)["stop-queues-on-restart"] : undefined;
  if (v === undefined) return false;
  if (typeof v !== "boolean") throw new ConfigError(`[job-manager].stop-queues-on-restart: must be true or false, got ${JSON.stringify(v)}`);
  return v;
}

/** Registers admission, queue start/stop, the queue update key and the services. */
/** What conf.update would refuse in `[queues]` and the default queue. */
export const checkConfig: ConfigCheck = checkWith(readQueueConfig);

export default function updateQueue(p: PluginContext): void {
  let cfg: QueueConfig = { names: [], defaultQueue: undefined, parents: new Map() };
  let status: StatusTable = {};
  const save = () => p.state.set(STATE_KEY, status);
  // `[job-manager] stop-queues-on-restart`, and whether a previous run left a status behind
  // (Flux stops queues only when it restores a checkpoint, not on a fresh instance).
  let stopOnRestart = false;
  let restored: boolean | undefined;

  p.on("conf.update", ({ conf }) => {
    let flag: boolean;
    try {
      cfg = readQueueConfig(conf);
      flag = stopQueuesOnRestart(conf);
    } catch (e) {
      if (isJobtapError(e, ErrorCode.CONFIG)) return p.reject(e.message);
      throw e;
    }
    const names = cfg.names;
    return withRead(p.state.get<StatusTable>(STATE_KEY), (saved) => {
      stopOnRestart = flag;
      restored ??= saved !== undefined;
      // No [queues]: one anonymous queue, "", that start/stop/enable/disable act on (Flux's
      // default queue); admission still knows no queue names.
      status = reconcile(saved, names.length === 0 ? [""] : names);
      save();
      applyToManager();
      return undefined;
    });
  });

  // After a restart, with the knob set, every started queue is stopped before anything is
  // scheduled, as Flux's queue context does when it restores its checkpoint.
  p.on("plugin.replay-done", ({ reason }) => {
    if (reason !== "restart" || !stopOnRestart || restored !== true) return;
    for (const s of Object.values(status)) {
      if (s.started) Object.assign(s, { started: false, stopReason: "Automatically stopped due to restart", stoppedAt: p.clock.now() / 1000 });
    }
    save();
    applyToManager();
  });

  // A virtual queue's jobs are scheduled as part of its parent: only when both are started.
  const schedules = (q: string): boolean => {
    const parent = cfg.parents.get(q);
    return status[q]?.started !== false && (parent === undefined || status[parent]?.started !== false);
  };
  // What this plugin told the manager, so a reload or a removal can undo exactly that.
  const stoppedInManager = new Set<string>();
  let defaultInManager: string | undefined;
  const applyToManager = () => {
    if (cfg.defaultQueue !== defaultInManager) p.setDefaultQueue((defaultInManager = cfg.defaultQueue));
    for (const q of [...stoppedInManager]) {
      if (!schedules(q)) continue;
      stoppedInManager.delete(q);
      p.setQueueStarted(q, true);
    }
    for (const q of Object.keys(status)) {
      if (schedules(q) || stoppedInManager.has(q)) continue;
      stoppedInManager.add(q);
      p.setQueueStarted(q, false);
    }
  };
  p.onRemove(() => {
    for (const q of stoppedInManager) p.setQueueStarted(q, true);
    if (defaultInManager !== undefined) p.setDefaultQueue(undefined);
  });

  const queueOf = (job: JobArgs) => jobQueue(job.jobspec, cfg.defaultQueue);

  /** Admission: a message if the job's queue refuses it. */
  const admission = (q: string | undefined): string | undefined => {
    if (cfg.names.length === 0) {
      if (q !== undefined) return `queue "${q}" does not exist (no queues are configured)`;
      const anon = status[""];
      return anon?.enabled === false ? `job submission is disabled${anon.disableReason ? `: ${anon.disableReason}` : ""}` : undefined;
    }
    if (q === undefined) return "no queue specified";
    const s = status[q];
    if (s === undefined) return `queue "${q}" does not exist`;
    if (!s.enabled) return `job submission to ${q} is disabled${s.disableReason ? `: ${s.disableReason}` : ""}`;
    return undefined;
  };

  // Flux checks the queue before any jobtap callback (spec §9); job.create is the first
  // one, so an unknown or disabled queue is named before any limit plugin's message. Not
  // in job.validate: re-validating an update of another key must not trip on a queue that
  // was disabled after submission (a queue change is checked by its own update rule).
  p.on("job.create", (job) => {
    const why = admission(queueOf(job));
    return why === undefined ? undefined : p.reject(why);
  });

  p.on("job.update.attributes.system.queue", (args) => {
    const q = args.value;
    if (args.state === "RUN" || args.state === "CLEANUP") return p.reject("update of queue for running job not supported");
    if (typeof q !== "string") return p.reject(`queue must be a string, got ${JSON.stringify(q)}`);
    if (q === queueOf(args)) return p.reject(`job queue is already set to ${q}`);
    if (status[q] === undefined || cfg.names.length === 0) return p.reject(`queue "${q}" does not exist`);
    if (!status[q].enabled) return p.reject(`queue ${q} is currently disabled`);
    // Not validated: the limits of the new queue apply through job.validate.
    return { feasibility: true };
  });

  const change = (what: string, fn: (s: QueueStatus, reason: string | undefined) => void) =>
    p.serviceRegister(what, (payload) => {
      for (const name of targets(status, payload, what)) fn(status[name]!, reasonOf(payload));
      save();
      applyToManager();
      return {};
    });
  const now = () => p.clock.now() / 1000;
  change("enable", (s) => Object.assign(s, { enabled: true, disableReason: undefined, disabledAt: undefined }));
  change("disable", (s, r) => Object.assign(s, { enabled: false, disableReason: r, disabledAt: s.enabled ? now() : s.disabledAt }));
  change("start", (s) => Object.assign(s, { started: true, stopReason: undefined, stoppedAt: undefined }));
  change("stop", (s, r) => Object.assign(s, { started: false, stopReason: r, stoppedAt: s.started ? now() : s.stoppedAt }));
  p.on("job.explain", (job) => explainQueue(queueOf(job) ?? "", status, cfg.parents));
  p.serviceRegister("status", () => ({ queues: status }), { guests: true });
  p.on("plugin.query", () => ({ queues: status, default: cfg.defaultQueue ?? null }));
}

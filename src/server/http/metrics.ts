/**
 * Prometheus metrics (prom-client) for `/metrics` (docs/api.md, Metrics). Off the hot path:
 * the manager counts jobs, passes and batches in place (metrics-manager.ts), the plugin
 * host's handler timing feeds plain slots kept on its stack entries (metrics-handlers.ts), hook
 * runners report each run (metrics-hooks.ts), and every gauge is computed when Prometheus
 * scrapes. Labels are bounded: never a job id;
 * topics that embed user-chosen words (`job.dependency.<scheme>`, `job.update.<key>`) are
 * folded to their family, and any label taken from configuration is capped in length and in
 * distinct values.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Counter, Gauge, Registry } from "prom-client";
import type { JobManager } from "../../manager/manager.js";
import type { JobtapHost } from "../../plugins/index.js";
import { handlerHistogram } from "./metrics-handlers.js";
import { managerSeries } from "./metrics-manager.js";
import { hookSeries } from "./metrics-hooks.js";
import type { HookRunReport } from "../../hooks/observe.js";

/** A daemon's metrics: the exposition text, and `stop` to detach from the manager and host. */
export interface Metrics {
  readonly contentType: string;
  text(): Promise<string>;
  stop(): void;
}

/** Longest label value taken from configuration (route, cron job, plugin names). */
const MAX_LABEL = 64;
/** Distinct values one such label may take; past it, `other`. */
const MAX_VALUES = 200;

/** Attaches metrics to a manager and its plugin host. */
export function createMetrics(m: JobManager, host: () => JobtapHost | undefined, earlyHooks?: readonly HookRunReport[]): Metrics {
  const registry = new Registry();
  // The event-loop lag, sampled by perf_hooks off the loop (prom-client's default process
  // metrics are left out: three of their gauge names end in _total, which promtool refuses).
  const lag = monitorEventLoopDelay({ resolution: 20 });
  lag.enable();
  new Gauge({
    name: "jobtap_event_loop_lag_seconds",
    help: "event-loop delay since the previous scrape: mean, p50, p99 and max",
    labelNames: ["stat"],
    registers: [registry],
    collect() {
      const ns = 1e-9;
      this.set({ stat: "mean" }, (Number.isNaN(lag.mean) ? 0 : lag.mean) * ns);
      this.set({ stat: "p50" }, lag.percentile(50) * ns);
      this.set({ stat: "p99" }, lag.percentile(99) * ns);
      this.set({ stat: "max" }, lag.max * ns);
      lag.reset();
    },
  });
  const bound = boundedLabels();
  const cellOf = handlerHistogram(registry, bound, topicFamily);
  let untime: (() => void) | undefined;
  const attach = () => {
    const h = host();
    if (h === undefined || untime !== undefined) return;
    untime = h.timeCells(cellOf);
  };
  attach();
  scrapeGauges(registry, m, host, bound);
  managerSeries(registry, m);
  slurmGauge(registry, host);
  const unhook = hookSeries(registry, bound, earlyHooks);
  return {
    contentType: registry.contentType,
    text: () => {
      attach();
      return registry.metrics();
    },
    stop() {
      lag.disable();
      untime?.();
      unhook();
    },
  };
}

/** The gauges computed at scrape time from the manager and the plugins' query answers. */
function scrapeGauges(registry: Registry, m: JobManager, host: () => JobtapHost | undefined, bound: Bound): void {
  new Gauge({
    name: "jobtap_jobs",
    help: "active jobs by state and queue",
    labelNames: ["state", "queue"],
    registers: [registry],
    collect() {
      this.reset();
      for (const j of m.jobs({ states: ["DEPEND", "PRIORITY", "SCHED", "RUN", "CLEANUP"] })) {
        const queue = m.jobspec(j.id).attributes?.system?.queue;
        this.inc({ state: j.state, queue: bound("queue", typeof queue === "string" ? queue : "") });
      }
    },
  });
  new Gauge({
    name: "jobtap_plugin_isolated",
    help: "isolated plugins by state (running, restarting, failed)",
    labelNames: ["plugin", "state"],
    registers: [registry],
    collect() {
      this.reset();
      for (const p of host()?.list({ all: true }) ?? []) if (p.isolated !== undefined) this.set({ plugin: bound("plugin", p.name), state: p.isolated }, 1);
    },
  });
  new Counter({
    name: "jobtap_plugin_restarts_total",
    help: "isolated plugins' worker restarts since each was loaded",
    labelNames: ["plugin"],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of host()?.isolatedRestarts() ?? []) this.inc({ plugin: bound("plugin", r.plugin) }, r.restarts);
    },
  });
  new Gauge({
    name: "jobtap_router_jobs",
    help: "condor-router jobs per route: routed (current), idle and running",
    labelNames: ["route", "kind"],
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await query(host, "condor-router", "routes")) {
        const name = bound("route", String(r.name));
        for (const kind of ["current", "idle", "running"] as const) if (typeof r[kind] === "number") this.set({ route: name, kind: kind === "current" ? "routed" : kind }, r[kind] as number);
      }
    },
  });
  new Gauge({
    name: "jobtap_cron_last_failed",
    help: "1 if a condor-cron job's last run failed (exited non-zero, was killed or could not start)",
    labelNames: ["job"],
    registers: [registry],
    async collect() {
      this.reset();
      for (const j of await query(host, "condor-cron", "jobs")) {
        if (j.last_exit !== null && j.last_exit !== undefined) this.set({ job: bound("job", String(j.name)) }, /^exited with status 0$/.test(String(j.last_exit)) ? 0 : 1);
      }
    },
  });
  new Gauge({
    name: "jobtap_cron_runs",
    help: "condor-cron runs per job since the plugin loaded",
    labelNames: ["job"],
    registers: [registry],
    async collect() {
      this.reset();
      for (const j of await query(host, "condor-cron", "jobs")) if (typeof j.runs === "number") this.set({ job: bound("job", String(j.name)) }, j.runs);
    },
  });
}

/**
 * Slurm's job state names (squeue's long form): the one label of jobtap_slurm_jobs, so the
 * series stay bounded whatever a Slurm version prints (anything else counts as `other`).
 */
const SLURM_STATES = new Set(["PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "RESV_DEL_HOLD", "SPECIAL_EXIT", "REVOKED", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"]);

/** jobtap_slurm_jobs: .exec-slurm's tracked jobs by the Slurm state of their last poll. */
function slurmGauge(registry: Registry, host: () => JobtapHost | undefined): void {
  new Gauge({
    name: "jobtap_slurm_jobs",
    help: "jobs on Slurm (.exec-slurm) by the Slurm state its last poll saw",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      this.reset();
      for (const s of await query(host, ".exec-slurm", "slurm_states")) {
        if (typeof s.jobs === "number") this.inc({ state: SLURM_STATES.has(String(s.state)) ? String(s.state) : "other" }, s.jobs);
      }
    },
  });
}

/** One list from a loaded builtin's query answer; empty if it is not loaded or answers oddly. */
async function query(host: () => JobtapHost | undefined, plugin: string, key: string): Promise<Array<Record<string, unknown>>> {
  const h = host();
  if (h === undefined || !h.list({ all: true }).some((p) => p.name === plugin)) return [];
  try {
    const answer = (await h.query(plugin)) as Record<string, unknown>;
    const list = answer[key];
    return Array.isArray(list) ? (list as Array<Record<string, unknown>>) : [];
  } catch {
    return [];
  }
}

type Bound = (label: string, value: string) => string;

/** Caps a label's value length and its number of distinct values (per label name). */
function boundedLabels(): Bound {
  const seen = new Map<string, Set<string>>();
  return (label, value) => {
    const v = value.length > MAX_LABEL ? value.slice(0, MAX_LABEL) : value;
    let values = seen.get(label);
    if (values === undefined) seen.set(label, (values = new Set()));
    if (values.has(v)) return v;
    if (values.size >= MAX_VALUES) return "other";
    values.add(v);
    return v;
  };
}

/** Topics whose last word is user-chosen are counted under their family. */
function topicFamily(topic: string, bound: Bound): string {
  if (topic.startsWith("job.dependency.")) return "job.dependency.*";
  if (topic.startsWith("job.update.")) return "job.update.*";
  return bound("topic", topic);
}

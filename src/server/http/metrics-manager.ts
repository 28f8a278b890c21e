/**
 * The manager's own series: jobs accepted and retired, scheduling passes, store batches and
 * the restart replay, read at scrape from the counts the manager keeps in place
 * (JobManager.stats).
 */
import type { Registry } from "prom-client";
import type { JobManager } from "../../manager/manager.js";
import { RESULTS } from "../../manager/base/states.js";
import { registerRead, registerTallies } from "./metrics-tally.js";

/** Registers the scheduler, store and replay series of `m`. */
export function managerSeries(registry: Registry, m: JobManager): void {
  const stats = m.stats;
  // The manager counts jobs where they are accepted and retired: no event listener, which
  // would make the engine build a journal record for every event (bench http).
  registerRead(registry, "jobtap_jobs_submitted_total", "jobs accepted since the daemon started", "counter", () => [{ labels: {}, value: stats.jobs.submitted }]);
  registerRead(registry, "jobtap_jobs_inactive_total", "jobs that became inactive since the daemon started, by result", "counter", () =>
    RESULTS.map((result, i) => ({ labels: { result }, value: stats.jobs.inactive[i]! })),
  );
  registerRead(registry, "jobtap_scheduler_passes_total", "scheduling passes run since the daemon started", "counter", () => [{ labels: {}, value: stats.passes.passes }]);
  registerRead(registry, "jobtap_scheduler_jobs_placed_total", "jobs given resources by scheduling passes since the daemon started", "counter", () => [{ labels: {}, value: stats.passes.placed }]);
  registerTallies(registry, "jobtap_scheduler_pass_seconds", "time of one scheduling pass over the queue", () => [{ labels: {}, tally: stats.passes.seconds }]);
  registerTallies(registry, "jobtap_store_batch_seconds", "time from handing a store batch to the store until it is durable", () => [{ labels: {}, tally: stats.batches.seconds }]);
  registerTallies(registry, "jobtap_store_batch_jobs", "jobs with eventlog lines in one store batch", () => [{ labels: {}, tally: stats.batches.jobs }]);
  registerRead(registry, "jobtap_restart_replay_seconds", "time the daemon's start spent replaying the job store (replay and restart callbacks)", "gauge", () => [{ labels: {}, value: m.replaySeconds }]);
}

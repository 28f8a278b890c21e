/**
 * The dashboard's live data, kept only when the HTTP listener is on: the job change feed
 * (events.ts) and the last hour of statistics (stats.ts), fed from the manager's event
 * stream, the plugin host's handler timing (time(): a sample of the calls, no record) and
 * the hook runners' reports.
 */
import { onHookRun, type HookRunReport } from "../../hooks/observe.js";
import type { JobManager } from "../../manager/manager.js";
import type { JournalEntry } from "../../manager/engine/engine.js";
import type { JobtapHost } from "../../plugins/index.js";
import { changeFeed, type ChangeFeed } from "./events.js";
import { DEPTH_STATES, statsRecorder, type StatsView } from "./stats.js";

/** What the `web.events` and `web.stats` handlers read. */
export interface LiveData {
  feed: ChangeFeed;
  stats(): StatsView;
  stop(): void;
}

/**
 * Hook runs that end while the manager is still being created (a cron probe run at plugin
 * load): kept from before the manager exists, handed to startLiveData and createMetrics;
 * the daemon stops it once both have taken them.
 */
export function earlyHookRuns(): { runs: HookRunReport[]; stop: () => void } {
  const runs: HookRunReport[] = [];
  return { runs, stop: onHookRun((r) => runs.push(r)) };
}

/** Starts recording from `m` and the host `host()` returns (with the runs seen before it). */
export function startLiveData(m: JobManager, host: () => JobtapHost | undefined, early?: { runs: readonly HookRunReport[] }): LiveData {
  const depth: Record<string, number> = {};
  for (const j of m.jobs({ states: [...DEPTH_STATES] })) depth[j.state] = (depth[j.state] ?? 0) + 1;
  const rec = statsRecorder(Date.now, depth);
  const onEvent = (j: JournalEntry) => rec.event(j);
  m.on("event", onEvent);
  // The chart shows programs that ran, as before refusals were reported.
  const unhook = onHookRun((r) => r.ran && rec.hook(r.durationMs));
  for (const r of early?.runs ?? []) if (r.ran) rec.hook(r.durationMs);
  let untime: (() => void) | undefined;
  // The host exists once the plugins are loaded; attached again at each read in case it did not yet.
  const attach = () => {
    const h = host();
    // time(), not inspect(): no record is made per handler call (bench http).
    if (h !== undefined && untime === undefined) untime = h.time((_plugin, _topic, ms) => rec.callback(ms));
  };
  attach();
  const feed = changeFeed({ on: (t, fn) => m.on(t, fn), off: (t, fn) => m.off(t, fn), userOf: (id) => m.job(id).userid });
  return {
    feed,
    stats() {
      attach();
      return rec.view();
    },
    stop() {
      m.off("event", onEvent);
      unhook();
      untime?.();
      feed.close();
    },
  };
}

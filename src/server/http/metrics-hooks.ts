/**
 * Hook programs' run times and failures by plugin and hook type, from the hook runners'
 * reports (src/hooks/observe.ts). A run is a process spawn, so one map lookup per report
 * costs nothing beside it. Runs in isolated plugins' worker threads are not seen.
 */
import { Counter, type Registry } from "prom-client";
import { onHookRun, type HookRunReport } from "../../hooks/observe.js";
import { SECONDS_BUCKETS, Tally } from "../../manager/base/tally.js";
import { registerTallies } from "./metrics-tally.js";

type Bound = (label: string, value: string) => string;

/** Registers the hook series, counts `early` (runs before the metrics existed), then listens; returns the stop. */
export function hookSeries(registry: Registry, bound: Bound, early: readonly HookRunReport[] = []): () => void {
  const runs = new Map<string, { labels: { plugin: string; hook: string }; tally: Tally }>();
  const failures = new Counter({ name: "jobtap_hook_failures_total", help: "hook programs refused, not started, exited non-zero, killed or timed out, by plugin and hook type", labelNames: ["plugin", "hook"], registers: [registry] });
  registerTallies(registry, "jobtap_hook_run_seconds", "run time of hook programs that started, by plugin and hook type", () => runs.values());
  const count = (r: HookRunReport) => {
    const labels = { plugin: bound("plugin", r.plugin === "" ? "unknown" : r.plugin), hook: bound("hook", r.hookType === "" ? "other" : r.hookType) };
    if (r.failed) failures.inc(labels);
    if (!r.ran) return;
    const key = `${labels.plugin}\0${labels.hook}`;
    let slot = runs.get(key);
    if (slot === undefined) runs.set(key, (slot = { labels, tally: new Tally(SECONDS_BUCKETS) }));
    slot.tally.observe(r.durationMs / 1000);
  };
  for (const r of early) count(r);
  return onHookRun(count);
}

/**
 * The plugin handler calls (exact), errors (exact) and times (a 1-in-SAMPLE_EVERY sample of
 * each topic's stack calls: src/plugins/timing.ts), kept outside prom-client's
 * per-observation path: the plugin host counts every handler call (bench http: throughput
 * with metrics on against off), so that must not allocate, hash a label object or look
 * anything up. Each (plugin, topic) has a slot, found once per stack entry when the host
 * asks `cellOf` (JobtapHost.timeCells) and then kept on the entry; prom-client formats the
 * slots only when Prometheus scrapes (metrics-tally.ts).
 */
import type { Registry } from "prom-client";
import { SECONDS_BUCKETS, Tally } from "../../manager/base/tally.js";
import type { PluginRecord } from "../../plugins/record.js";
import { SAMPLE_EVERY, type CellOf, type TimeCell } from "../../plugins/timing.js";
import { registerRead, registerTallies } from "./metrics-tally.js";

/** Caps a label value (see metrics.ts boundedLabels). */
type Bound = (label: string, value: string) => string;

/** One (plugin, topic) label pair's calls, errors and sampled times. */
class Slot implements TimeCell {
  readonly tally = new Tally(SECONDS_BUCKETS);
  calls = 0;
  errors = 0;

  constructor(readonly labels: { plugin: string; topic: string }) {}

  count(failed: boolean): void {
    this.calls++;
    if (failed) this.errors++;
  }

  observe(ms: number): void {
    this.tally.observe(ms / 1000);
  }
}

/** Registers the histogram and the error counter; returns the cell provider for JobtapHost.timeCells. */
export function handlerHistogram(registry: Registry, bound: Bound, family: (topic: string, bound: Bound) => string): CellOf {
  // Folded labels share one slot, whatever raw topic reached it.
  const byLabels = new Map<string, Slot>();
  registerRead(registry, "jobtap_plugin_callbacks_total", "plugin handler calls, by plugin and topic", "counter", () => [...byLabels.values()].map((s) => ({ labels: s.labels, value: s.calls })));
  registerTallies(registry, "jobtap_plugin_callback_seconds", `plugin handler time (async handlers until they settle) of a sample of the calls (1 stack call of a topic in ${SAMPLE_EVERY}), by plugin and topic`, () => byLabels.values());
  registerRead(registry, "jobtap_plugin_callback_errors_total", "plugin handler errors and timeouts, by plugin and topic", "counter", () => {
    const out = [];
    // A pair appears once it has failed, as a labelled prom-client counter would.
    for (const s of byLabels.values()) if (s.errors > 0) out.push({ labels: s.labels, value: s.errors });
    return out;
  });
  return (plugin: PluginRecord, topic: string) => {
    const labels = { plugin: bound("plugin", plugin.name), topic: family(topic, bound) };
    const key = `${labels.plugin}\0${labels.topic}`;
    let s = byLabels.get(key);
    if (s === undefined) byLabels.set(key, (s = new Slot(labels)));
    return s;
  };
}

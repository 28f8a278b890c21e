/**
 * The plugin handler-time histogram, kept outside prom-client's per-observation path: the
 * plugin host calls `observe` for every handler call (bench http: throughput with metrics on
 * against off), so it must not allocate or hash a label object. Each (plugin, topic) has a
 * slot (a Tally) found by two map lookups; prom-client formats the slots only when
 * Prometheus scrapes (metrics-tally.ts).
 */
import type { Counter, Registry } from "prom-client";
import { SECONDS_BUCKETS, Tally } from "../../manager/base/tally.js";
import type { PluginRecord } from "../../plugins/record.js";
import { registerTallies } from "./metrics-tally.js";

/** Caps a label value (see metrics.ts boundedLabels). */
type Bound = (label: string, value: string) => string;

/** Raw topics cached per plugin (raw topics may embed user-chosen words). */
const MAX_TOPICS = 1000;

interface Slot {
  labels: { plugin: string; topic: string };
  tally: Tally;
}

/** Registers the histogram and returns the per-call observer for JobtapHost.time. */
export function handlerHistogram(
  registry: Registry,
  errors: Counter<string>,
  bound: Bound,
  family: (topic: string, bound: Bound) => string,
): (plugin: PluginRecord, topic: string, ms: number, failed: boolean) => void {
  const byPlugin = new Map<string, Map<string, Slot>>();
  // Folded labels share one slot, whatever raw topic reached it.
  const byLabels = new Map<string, Slot>();
  const slot = (plugin: string, topic: string): Slot => {
    let byTopic = byPlugin.get(plugin);
    if (byTopic === undefined) byPlugin.set(plugin, (byTopic = new Map()));
    let s = byTopic.get(topic);
    if (s !== undefined) return s;
    const labels = { plugin: bound("plugin", plugin), topic: family(topic, bound) };
    const key = `${labels.plugin}\0${labels.topic}`;
    s = byLabels.get(key);
    if (s === undefined) byLabels.set(key, (s = { labels, tally: new Tally(SECONDS_BUCKETS) }));
    if (byTopic.size < MAX_TOPICS) byTopic.set(topic, s);
    return s;
  };
  registerTallies(registry, "jobtap_plugin_callback_seconds", "plugin handler time (async handlers until they settle), by plugin and topic", () => byLabels.values());
  return (plugin, topic, ms, failed) => {
    const s = slot(plugin.name, topic);
    s.tally.observe(ms / 1000);
    if (failed) errors.inc(s.labels);
  };
}

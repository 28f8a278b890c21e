/**
 * The plugin handler-time histogram, kept outside prom-client's per-observation path: the
 * plugin host calls `observe` for every handler call (bench http: throughput with metrics on
 * against off), so it must not allocate or hash a label object. Each (plugin, topic) has a
 * slot of plain numbers found by two map lookups; prom-client formats the slots only when
 * Prometheus scrapes, through a collector registered under the histogram's name.
 */
import type { Counter, Registry } from "prom-client";
import type { PluginRecord } from "../../plugins/record.js";

/** Caps a label value (see metrics.ts boundedLabels). */
type Bound = (label: string, value: string) => string;

const BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30];
const NAME = "jobtap_plugin_callback_seconds";
/** Raw topics cached per plugin (raw topics may embed user-chosen words). */
const MAX_TOPICS = 1000;

interface Slot {
  labels: { plugin: string; topic: string };
  counts: Float64Array;
  sum: number;
  count: number;
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
    if (s === undefined) byLabels.set(key, (s = { labels, counts: new Float64Array(BUCKETS.length), sum: 0, count: 0 }));
    if (byTopic.size < MAX_TOPICS) byTopic.set(topic, s);
    return s;
  };
  registry.registerMetric({
    name: NAME,
    get: () => ({
      name: NAME,
      help: "plugin handler time (async handlers until they settle), by plugin and topic",
      type: "histogram",
      aggregator: "sum",
      values: [...byLabels.values()].flatMap(exposition),
    }),
  } as never);
  return (plugin, topic, ms, failed) => {
    const s = slot(plugin.name, topic);
    const v = ms / 1000;
    s.sum += v;
    s.count++;
    for (let b = 0; b < BUCKETS.length; b++) {
      if (v <= BUCKETS[b]!) {
        s.counts[b]!++;
        break;
      }
    }
    if (failed) errors.inc(s.labels);
  };
}

/** One slot as cumulative `_bucket` lines, `_sum` and `_count`. */
function exposition(s: Slot): Array<{ metricName: string; labels: Record<string, string | number>; value: number }> {
  const out: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = [];
  let acc = 0;
  BUCKETS.forEach((le, b) => {
    acc += s.counts[b]!;
    out.push({ metricName: `${NAME}_bucket`, labels: { le, ...s.labels }, value: acc });
  });
  out.push({ metricName: `${NAME}_bucket`, labels: { le: "+Inf", ...s.labels }, value: s.count });
  out.push({ metricName: `${NAME}_sum`, labels: s.labels, value: s.sum });
  out.push({ metricName: `${NAME}_count`, labels: s.labels, value: s.count });
  return out;
}

/**
 * Series read from plain numbers kept elsewhere (the manager's Tally counts, the handler
 * slots): registered as custom prom-client metrics whose values are made only when
 * Prometheus scrapes, so whoever counts never calls into prom-client.
 */
import type { Registry } from "prom-client";
import type { Tally } from "../../manager/base/tally.js";

/** One exposition line's worth: prom-client's custom-metric value shape. */
export interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** Registers `name` (counter, gauge or histogram) whose samples `values` gives at scrape. */
export function registerRead(registry: Registry, name: string, help: string, type: "counter" | "gauge" | "histogram", values: () => Sample[]): void {
  registry.registerMetric({
    name,
    get: () => ({ name, help, type, aggregator: "sum", values: values() }),
  } as never);
}

/** A histogram over one or more Tallies, each with its labels. */
export function registerTallies(registry: Registry, name: string, help: string, tallies: () => Iterable<{ labels: Record<string, string>; tally: Tally }>): void {
  registerRead(registry, name, help, "histogram", () => {
    const out: Sample[] = [];
    for (const t of tallies()) tallyLines(name, t.tally, t.labels, out);
    return out;
  });
}

/** One tally as cumulative `_bucket` lines, `_sum` and `_count`, appended to `out`. */
function tallyLines(name: string, t: Tally, labels: Record<string, string>, out: Sample[]): void {
  let acc = 0;
  for (let b = 0; b < t.bounds.length; b++) {
    acc += t.counts[b]!;
    out.push({ metricName: `${name}_bucket`, labels: { le: t.bounds[b]!, ...labels }, value: acc });
  }
  out.push({ metricName: `${name}_bucket`, labels: { le: "+Inf", ...labels }, value: t.count });
  out.push({ metricName: `${name}_sum`, labels, value: t.sum });
  out.push({ metricName: `${name}_count`, labels, value: t.count });
}

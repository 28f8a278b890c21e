/**
 * Issue 37: the per-(plugin, topic) handler call and error counters and time histogram.
 * Every handler call is counted, whichever path the stack call takes (a handler that
 * returns nothing, one that returns OUT, one that throws), through the cell its stack entry
 * keeps; the histogram holds the timed sample, 1 stack call of a topic in SAMPLE_EVERY.
 */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { handlerHistogram } from "../../src/server/http/metrics-handlers.js";
import { SAMPLE_EVERY } from "../../src/plugins/timing.js";
import { fixture, makeHost } from "../plugins/helpers.js";

/** The value of the one sample `series` (name and labels exactly as exposed); undefined if absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const asIs = (_label: string, value: string) => value;

describe("handler-time histogram", () => {
  it("counts every handler call and error exactly, fast path, OUT and errors alike, and times a sample", async () => {
    const { host, mgr } = makeHost();
    await host.load(fixture("order-a.js"), { topic: "job.validate" });
    await host.load(fixture("order-b.js"), { topic: "job.validate", out: {} });
    await host.load(fixture("throws.js"));
    const registry = new Registry();
    host.timeCells(handlerHistogram(registry, asIs, (t) => t));
    const job = mgr.lookup(mgr.add("NEW", 1))!;
    const n = 1000;
    for (let i = 0; i < n; i++) host.callJob("job.validate", job);
    for (let i = 0; i < 7; i++) host.callJob("job.state.priority", job);
    const text = await registry.metrics();
    // The first stack call of a topic is timed, then one in SAMPLE_EVERY.
    const timed = Math.ceil(n / SAMPLE_EVERY);
    expect(timed).toBeLessThan(n);
    for (const plugin of ["order-a.js", "order-b.js", "throws.js"]) {
      const labels = `{plugin="${plugin}",topic="job.validate"}`;
      expect(sample(text, `jobtap_plugin_callbacks_total${labels}`)).toBe(n);
      expect(sample(text, `jobtap_plugin_callback_seconds_count${labels}`)).toBe(timed);
      expect(sample(text, `jobtap_plugin_callback_seconds_bucket{le="+Inf",plugin="${plugin}",topic="job.validate"}`)).toBe(timed);
      expect(sample(text, `jobtap_plugin_callback_seconds_sum${labels}`)).toBeGreaterThanOrEqual(0);
    }
    expect(sample(text, 'jobtap_plugin_callbacks_total{plugin="throws.js",topic="job.state.priority"}')).toBe(7);
    expect(sample(text, 'jobtap_plugin_callback_seconds_count{plugin="throws.js",topic="job.state.priority"}')).toBe(1);
    expect(sample(text, 'jobtap_plugin_callback_errors_total{plugin="throws.js",topic="job.validate"}')).toBe(n);
    expect(sample(text, 'jobtap_plugin_callback_errors_total{plugin="throws.js",topic="job.state.priority"}')).toBe(7);
    // A pair that never failed has no error series.
    expect(text).not.toMatch(/jobtap_plugin_callback_errors_total\{plugin="order-a\.js"/);
  });

  it("stops counting when stopped, and a new provider's cells replace those the entries kept", async () => {
    const { host, mgr } = makeHost();
    await host.load(fixture("order-a.js"), { topic: "job.validate" });
    const job = mgr.lookup(mgr.add("NEW", 1))!;
    const first = new Registry();
    const stop = host.timeCells(handlerHistogram(first, asIs, (t) => t));
    for (let i = 0; i < 5; i++) host.callJob("job.validate", job);
    stop();
    host.callJob("job.validate", job);
    const second = new Registry();
    host.timeCells(handlerHistogram(second, asIs, (t) => t));
    for (let i = 0; i < 3; i++) host.callJob("job.validate", job);
    const series = 'jobtap_plugin_callbacks_total{plugin="order-a.js",topic="job.validate"}';
    expect(sample(await first.metrics(), series)).toBe(5);
    expect(sample(await second.metrics(), series)).toBe(3);
  });
});

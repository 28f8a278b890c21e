/**
 * Charts of the last hour from GET /api/v1/stats (10 s buckets the daemon keeps): throughput,
 * queue depth by state, hook and plugin latency. Each is an inline SVG built with DOM calls.
 */
import { get, type Session } from "./api.js";
import { fill, h, s, when } from "./dom.js";
import { errorPage } from "./ui.js";

export type Series = Map<string, number[]>;

const PALETTE = ["#1f6feb", "#c2410c", "#15803d", "#7e22ce", "#b91c1c", "#0e7490", "#a16207", "#4b5563"];

/** Numeric series from buckets: every numeric field, nested objects flattened as `a.b`. */
export function seriesOf(buckets: Array<Record<string, unknown>>): Series {
  const out: Series = new Map();
  buckets.forEach((b, i) => {
    const walk = (o: Record<string, unknown>, prefix: string) => {
      for (const [k, v] of Object.entries(o)) {
        const name = prefix + k;
        if (typeof v === "number" && !/^(t|time|start|end|ts)$/i.test(k)) {
          if (!out.has(name)) out.set(name, new Array(buckets.length).fill(0));
          (out.get(name) as number[])[i] = v;
        } else if (v && typeof v === "object" && !Array.isArray(v)) walk(v as Record<string, unknown>, `${name}.`);
      }
    };
    walk(b, "");
  });
  return out;
}

/** One line chart: axes, the max value, one polyline per series and a legend. */
export function lineChart(title: string, series: Series, unit: string, from = "−1 h"): HTMLElement {
  const W = 600, H = 180, L = 44, B = 20;
  const max = Math.max(1, ...[...series.values()].flat());
  const n = Math.max(2, ...[...series.values()].map((v) => v.length));
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `${title}: ${[...series.keys()].join(", ")}`, class: "chart" },
    s("line", { x1: L, y1: H - B, x2: W, y2: H - B, stroke: "#555" }), s("line", { x1: L, y1: 0, x2: L, y2: H - B, stroke: "#555" }),
    s("text", { x: 2, y: 12, "font-size": 11, fill: "currentColor" }, fmt(max)), s("text", { x: 2, y: H - B, "font-size": 11, fill: "currentColor" }, "0"),
    s("text", { x: L, y: H - 4, "font-size": 11, fill: "currentColor" }, from), s("text", { x: W - 30, y: H - 4, "font-size": 11, fill: "currentColor" }, "now"));
  let i = 0;
  for (const [, values] of series) {
    const pts = values.map((v, k) => `${(L + (k / (n - 1)) * (W - L)).toFixed(1)},${(H - B - (v / max) * (H - B - 4)).toFixed(1)}`).join(" ");
    svg.append(s("polyline", { points: pts, fill: "none", stroke: PALETTE[i++ % PALETTE.length] as string, "stroke-width": 2 }));
  }
  const legend = h("ul", { class: "legend" }, ...[...series.keys()].map((k, j) => h("li", { "data-color": String(j % PALETTE.length) }, `${k} (max ${fmt(Math.max(0, ...(series.get(k) ?? [])))}${unit})`)));
  return h("figure", { class: "chart-box" }, h("figcaption", {}, title), svg, legend);
}

function fmt(v: number): string {
  return v >= 100 ? String(Math.round(v)) : v.toFixed(v >= 10 ? 1 : 2);
}

function pick(all: Series, test: RegExp): Series {
  return new Map([...all].filter(([k]) => test.test(k)));
}

/** Renders the charts view. */
export function renderCharts(main: HTMLElement, _session: Session): void {
  void get<unknown>("/stats").then((reply) => {
    const r = reply as { buckets?: Array<Record<string, unknown>> };
    const buckets = Array.isArray(r.buckets) ? r.buckets : [];
    const all = seriesOf(buckets);
    // The daemon keeps up to an hour; right after a start it has less, so say where the x axis begins.
    const first = buckets[0]?.t;
    const from = typeof first === "number" ? `since ${when(first).slice(11, 16)}` : "−1 h";
    const through = pick(all, /^(submitted|inactive)$/);
    const depth = pick(all, /^depth\./);
    // The daemon keeps latencies in seconds; milliseconds read better at this scale.
    const latency = new Map([...pick(all, /^(callbacks|hooks)\.p(50|95)$/)].map(([k, v]) => [k.replace("callbacks", "plugin callbacks").replace("hooks", "hook runs"), v.map((x) => x * 1000)]));
    fill(main, h("h1", {}, "Charts: the last hour"),
      lineChart("Throughput (jobs per 10 s)", through, "", from),
      lineChart("Queue depth by state", depth, "", from),
      lineChart("Hook and plugin latency", latency, " ms", from));
  }, (e) => errorPage(main, e, "The charts view"));
}

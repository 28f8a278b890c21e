/**
 * A job's eventlog as a timeline: the states it passed through (RFC 21's events moving the
 * job along DEPEND, PRIORITY, SCHED, RUN, CLEANUP, INACTIVE) and the time spent in each,
 * drawn as one SVG bar and a table, redrawn as events arrive.
 */
import { duration, fill, h, s, table, when } from "./dom.js";

export interface EventEntry {
  timestamp: number;
  name: string;
  context?: Record<string, unknown>;
}

export interface Segment {
  state: string;
  start: number;
  end?: number;
}

/** Which state an event moves the job into, given the state it is in (undefined: none). */
export function nextState(state: string | undefined, e: EventEntry): string | undefined {
  switch (e.name) {
    case "submit": return "DEPEND";
    case "depend": return "PRIORITY";
    case "priority": return state === "PRIORITY" ? "SCHED" : undefined;
    case "alloc": return "RUN";
    case "finish": return "CLEANUP";
    case "exception": return (e.context?.severity ?? 0) === 0 && state !== "CLEANUP" && state !== "INACTIVE" ? "CLEANUP" : undefined;
    case "clean": return "INACTIVE";
    default: return undefined;
  }
}

/** The state segments an eventlog describes, the last one open while the job is active. */
export function segments(events: EventEntry[]): Segment[] {
  const out: Segment[] = [];
  for (const e of events) {
    const cur = out[out.length - 1];
    const to = nextState(cur?.state, e);
    if (!to || to === cur?.state) continue;
    if (cur) cur.end = e.timestamp;
    out.push({ state: to, start: e.timestamp, ...(to === "INACTIVE" ? { end: e.timestamp } : {}) });
  }
  return out;
}

const COLORS: Record<string, string> = { DEPEND: "#6b5ca5", PRIORITY: "#8a6d00", SCHED: "#b35900", RUN: "#1f7a3a", CLEANUP: "#225d9c", INACTIVE: "#555" };

/** Draws the timeline into `el` for the events so far; `now` closes the open segment. */
export function drawTimeline(el: HTMLElement, events: EventEntry[], now: number): void {
  const segs = segments(events).filter((g) => g.state !== "INACTIVE");
  const spent = segs.map((g) => Math.max(0, (g.end ?? now) - g.start));
  const total = spent.reduce((a, b) => a + b, 0) || 1;
  const bar = s("svg", { viewBox: "0 0 1000 24", width: "100%", height: 24, role: "img", "aria-label": "time spent per state", preserveAspectRatio: "none" });
  let x = 0;
  segs.forEach((g, i) => {
    const w = ((spent[i] ?? 0) / total) * 1000;
    bar.append(s("rect", { x, y: 0, width: Math.max(w, 1), height: 24, fill: COLORS[g.state] ?? "#777" }, s("title", {}, `${g.state} ${duration(spent[i] ?? 0)}`)));
    x += w;
  });
  fill(el,
    bar,
    table("Time spent per state", ["State", "Entered", "Time spent"], segs.map((g, i) => [g.state, when(g.start), `${duration(spent[i] ?? 0)}${g.end === undefined ? " (so far)" : ""}`])),
    h("details", {}, h("summary", {}, `Eventlog (${events.length} events)`),
      table("Eventlog", ["Time", "Event", "Context"], events.map((e) => [when(e.timestamp), e.name, e.context ? JSON.stringify(e.context) : ""]))),
  );
}

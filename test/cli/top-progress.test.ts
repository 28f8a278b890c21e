import { describe, expect, it } from "vitest";
import { ProgressBar } from "../../src/cli/progress.js";
import { byPriority, render } from "../../src/cli/top.js";
import type { CliIO } from "../../src/cli/io.js";
import type { JobView } from "../../src/server/protocol.js";

const users = { name: (uid: number) => `u${uid}`, uid: () => undefined };
const view = (id: string, priority: number, state = "SCHED"): JobView => ({
  id, userid: 1, name: "x", state, urgency: 16, priority, t_submit: Number(id.slice(1)), ntasks: 1,
  annotations: null, dependencies: [],
});

describe("top's screen", () => {
  const jobs = Array.from({ length: 30 }, (_, i) => view(`f${i + 1}`, i % 3 === 0 ? 0 : 16, i < 2 ? "RUN" : "SCHED"));

  it("sorts by priority, highest first, then submit order", () => {
    expect(byPriority([view("f3", 0), view("f2", 16), view("f1", 16), view("f4", 99)]).map((j) => j.id)).toEqual(["f4", "f1", "f2", "f3"]);
  });

  it("fits any window: cut to the width, as many jobs as rows allow, then '... N more'", () => {
    for (const [columns, rows] of [[80, 24], [20, 8], [5, 2], [1, 1]] as const) {
      const lines = render(jobs, { columns, rows }, users, 0);
      expect(lines.length).toBeLessThanOrEqual(rows);
      expect(lines.every((l) => l.length <= columns)).toBe(true);
    }
    const lines = render(jobs, { columns: 80, rows: 10 }, users, 0);
    expect(lines[0]).toBe("jobtap top  28 pending  2 running  (q quits, j/k select)");
    expect(lines).toHaveLength(10);
    expect(lines.at(-1)).toBe("... 25 more");
  });

  it("shows the selected job's reason on the second line and marks its row", () => {
    const withReason = jobs.map((j) => (j.id === "f3" ? { ...j, reason: "2 ahead in the queue" } : j));
    const order = byPriority(withReason).map((j) => j.id);
    const lines = render(withReason, { columns: 80, rows: 40 }, users, 0, order.indexOf("f3"));
    expect(lines[1]).toBe("why f3: 2 ahead in the queue");
    expect(lines.filter((l) => l.startsWith(">"))).toEqual([expect.stringContaining("f3")]);
    expect(render(withReason, { columns: 80, rows: 8 }, users, 0, 29).some((l) => l.startsWith(">"))).toBe(true);
  });
});

describe("the progress line", () => {
  const io = (columns: number) => ({ stdout: () => undefined, terminal: { size: () => ({ columns, rows: 5 }) } }) as unknown as CliIO;

  it("shows the count, a bar that fills, and jobs/s; it never passes the width", () => {
    const bar = new ProgressBar(io(60), 1000, true, "submitted");
    bar.advance(500);
    const line = bar.line(60, 2000);
    expect(line).toMatch(/^ 500\/1000 submitted \[#+ +\] 250\.0 job\/s$/);
    expect(line.length).toBe(60);
    for (const w of [30, 12, 3]) expect(bar.line(w, 2000).length).toBeLessThanOrEqual(w);
    expect(new ProgressBar(io(60), 10, false, "done").line(60, 3_725_000)).toMatch(/ 1:02:05$/);
  });
});

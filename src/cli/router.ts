/**
 * `jobtap router q [--json]` and `jobtap router history [--json] [--show-records] [--age DAYS]`:
 * the condor-router plugin's views (docs/condor-router.md).
 *
 * `q` has the shape of `condor_router_q -S`: one line per (status, route, GridResource) of
 * the routed copies in the queue, as `uniq -c` prints it, then each route's limits, counts
 * and throttle. `history` summarises finished copies per route from the job store, the
 * columns of `condor_router_history`: wall-clock hours of completed copies, completed
 * copies, others (removed, failed).
 */
import { optFlag, optString, parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import type { Subcommand } from "./io.js";
import { callService } from "./plugin.js";
import type { JobView } from "../server/protocol.js";

const USAGE = "usage: jobtap router q [--json] | router history [--json] [--show-records] [--age DAYS]";

const JSON_OPTION = { name: "json", help: "the answer as JSON" };

/** The option tables of `jobtap router`'s subcommands (parser and --help). */
export const SPEC = {
  subcommands: {
    q: { usage: ["router q [--json]"], summary: "the routes and the routed jobs, like condor_router_q", options: [JSON_OPTION] },
    history: {
      usage: ["router history [--json] [--show-records] [--age DAYS]"],
      summary: "what each route did, like condor_router_history",
      options: [
        JSON_OPTION,
        { name: "show-records", help: "one line per routed job instead of the per-route summary" },
        { name: "age", value: "DAYS", help: "look back this many days (default 1)" },
      ],
    },
  } satisfies Record<string, CommandSpec>,
};

/** A status line of `q`: count of copies per (status letter, route, GridResource). */
interface StatusRow {
  count: number;
  status: string;
  route: string;
  grid_resource: string;
}

/** One route's line of `condor-router.q` (what `jobtap router q` prints). */
export interface RouteRow {
  name: string;
  grid_resource: string;
  max_jobs: number;
  max_idle_jobs: number;
  current: number;
  running: number;
  idle: number;
  recent_routed: number;
  recent_succeeded: number;
  recent_failed: number;
  throttle: string;
  accepting: boolean;
}

interface Q {
  rows: StatusRow[];
  routes: RouteRow[];
  warnings: string[];
}

/** Dispatches `router q` and `router history`. */
export const router: Subcommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub === "q") {
    const p = parseArgs(rest, SPEC.subcommands.q);
    if (p.positionals.length > 0) throw usage(USAGE);
    return withDaemon(io, async (client) => {
      const q = (await callService(client, "condor-router", "q", {})) as Q;
      io.stdout(optFlag(p, "json") ? JSON.stringify(q) + "\n" : qTable(q));
      return 0;
    });
  }
  if (sub === "history") {
    const p = parseArgs(rest, SPEC.subcommands.history);
    if (p.positionals.length > 0) throw usage(USAGE);
    const ageText = optString(p, "age") ?? "1";
    const age = Number(ageText);
    if (!(age > 0)) throw usage(`--age: "${ageText}" is not a number of days > 0`);
    return withDaemon(io, async (client) => {
      const q = (await callService(client, "condor-router", "q", {})) as Q;
      const end = Date.now() / 1000;
      const start = end - age * 86400;
      const records: HistoryRecord[] = [];
      for (const route of q.routes) {
        const { jobs } = await client.call("list", { states: ["INACTIVE"], constraint: `RouteName =?= ${JSON.stringify(route.name)}` });
        for (const j of jobs as JobView[]) {
          if ((j.t_inactive ?? 0) < start) continue;
          records.push({ id: j.id, route: route.name, status: statusLetter(j), runtime: j.t_run !== undefined && j.t_cleanup !== undefined ? j.t_cleanup - j.t_run : 0 });
        }
      }
      const summary = historySummary(records);
      if (optFlag(p, "json")) io.stdout(JSON.stringify({ start, end, routes: summary, ...(optFlag(p, "show-records") ? { records } : {}) }) + "\n");
      else io.stdout(optFlag(p, "show-records") ? recordsTable(records) : historyTable(summary, start, end));
      return 0;
    });
  }
  throw usage(sub === undefined ? USAGE : `unknown subcommand "${sub}"\n${USAGE}`);
};

/** The `-S` summary, then the per-route table. */
export function qTable(q: Q): string {
  const out = [`${"JOBS".padStart(7)} ST ${"Route".padEnd(20)} GridResource`];
  for (const r of q.rows) out.push(`${String(r.count).padStart(7)}  ${r.status} ${r.route.padEnd(20)} ${r.grid_resource}`.trimEnd());
  out.push("");
  out.push(`${"ROUTE".padEnd(20)} ${"MAXJOBS".padStart(7)} ${"MAXIDLE".padStart(7)} ${"JOBS".padStart(5)} ${"RUN".padStart(5)} ${"IDLE".padStart(5)} ${"ROUTED".padStart(6)} ${"OK".padStart(5)} ${"FAIL".padStart(5)} THROTTLE`);
  for (const r of q.routes) {
    out.push(
      `${r.name.padEnd(20)} ${String(r.max_jobs).padStart(7)} ${String(r.max_idle_jobs).padStart(7)} ${String(r.current).padStart(5)} ` +
        `${String(r.running).padStart(5)} ${String(r.idle).padStart(5)} ${String(r.recent_routed).padStart(6)} ` +
        `${String(r.recent_succeeded).padStart(5)} ${String(r.recent_failed).padStart(5)} ${r.throttle}`,
    );
  }
  for (const w of q.warnings) out.push(`warning: ${w}`);
  return out.join("\n") + "\n";
}

/** One finished copy. */
interface HistoryRecord {
  id: string;
  route: string;
  /** HTCondor's status letter: C completed, X removed. */
  status: string;
  /** Seconds from start to end (0 if it never ran). */
  runtime: number;
}

interface HistoryRow {
  route: string;
  hours: number;
  completed: number;
  aborted: number;
}

function statusLetter(j: JobView): string {
  return j.result === "COMPLETED" ? "C" : "X";
}

/** Per route: rounded wall-clock hours of completed copies, completed and other counts; by hours, descending. */
export function historySummary(records: HistoryRecord[]): HistoryRow[] {
  const rows = new Map<string, HistoryRow & { seconds: number }>();
  for (const r of records) {
    const row = rows.get(r.route) ?? { route: r.route, hours: 0, seconds: 0, completed: 0, aborted: 0 };
    if (r.status === "C") {
      row.completed++;
      row.seconds += r.runtime;
    } else row.aborted++;
    rows.set(r.route, row);
  }
  return [...rows.values()]
    .map(({ seconds, ...row }) => ({ ...row, hours: Math.round(seconds / 3600) }))
    .sort((a, b) => b.hours - a.hours || a.route.localeCompare(b.route));
}

const stamp = (s: number) => new Date(s * 1000).toISOString().slice(0, 16).replace("T", " ");

/** condor_router_history's table: Site, Hours, Jobs Completed, Runs Aborted, and a TOTAL row. */
export function historyTable(rows: HistoryRow[], start: number, end: number): string {
  const line = (a: string, b: string, c: string, d: string) => `${a.padEnd(15)} ${b.padStart(5)} ${c.padStart(7)} ${d.padStart(5)}`;
  const rule = "-".repeat(55);
  const out = [`Routed job history from ${stamp(start)} to ${stamp(end)}`, "", line("Site", "Hours", "Jobs", "Runs"), line("", "", "Completed", "Aborted"), rule];
  for (const r of rows) out.push(line(r.route, String(r.hours), String(r.completed), String(r.aborted)));
  out.push(rule);
  const sum = (k: "hours" | "completed" | "aborted") => rows.reduce((n, r) => n + r[k], 0);
  out.push(line("TOTAL", String(sum("hours")), String(sum("completed")), String(sum("aborted"))));
  return out.join("\n") + "\n";
}

function recordsTable(records: HistoryRecord[]): string {
  const out = [`${"JobID".padEnd(14)} Status ${"Site".padEnd(15)} Runtime`];
  for (const r of records) out.push(`${r.id.padEnd(14)} ${r.status.padEnd(6)} ${r.route.padEnd(15)} ${Math.round(r.runtime)}`);
  return out.join("\n") + "\n";
}

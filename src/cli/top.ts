/**
 * `jobtap top [--interval SECONDS]`: a live view of the queue and the running jobs, like
 * `flux top`. It redraws in place on the alternate screen, every job sorted by priority
 * (highest first, then by id: the order the scheduler serves), and quits on `q` (or
 * Ctrl-C); j/k (or the arrows) select a job, whose first `job why` reason the second line
 * shows. Without a terminal (piped, redirected, ssh without -t) it prints the same view
 * once and exits. A narrow window only shows fewer columns; a terminal that goes away ends
 * it with a message, and the daemon is never affected.
 */
import { PENDING, RUNNING } from "../manager/base/states.js";
import type { JobView } from "../server/protocol.js";
import type { DaemonClient } from "../server/client.js";
import { optString, parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import { formatTable } from "./format.js";
import type { CliIO, Subcommand } from "./io.js";
import { ESC, fit, type Terminal } from "./terminal.js";
import { loadUserTable, type UserTable } from "../manager/base/users.js";

const ACTIVE_STATES = [...PENDING, ...RUNNING].filter((s) => s !== "NEW") as string[];

/** Columns shown at each width: the widest format that fits. */
const FORMATS: Array<[number, string]> = [
  [64, "{id:>12} {user:<8.8} {status:>2} {priority:>10} {runtime:>8} {name}"],
  [40, "{id:>12} {status:>2} {priority:>10} {runtime:>8}"],
  [0, "{id:>12} {status:>2}"],
];

/** Jobs in the order the scheduler serves them: priority, highest first, then id. */
export function byPriority(jobs: JobView[]): JobView[] {
  return [...jobs].sort((a, b) => b.priority - a.priority || a.t_submit - b.t_submit || (a.id < b.id ? -1 : 1));
}

/**
 * The screen's lines for `jobs` at this size: a summary, the selected job's reason (`job
 * why`'s first line; the selection is an index into the priority order, clamped), a header,
 * as many jobs as fit, the selected one marked with `>`.
 */
export function render(jobs: JobView[], size: { columns: number; rows: number }, users: UserTable, now: number, selected = 0): string[] {
  const running = jobs.filter((j) => j.state === "RUN" || j.state === "CLEANUP").length;
  const summary = `jobtap top  ${jobs.length - running} pending  ${running} running  (q quits, j/k select)`;
  const format = FORMATS.find(([min]) => size.columns >= min)![1];
  const sorted = byPriority(jobs);
  const sel = Math.min(Math.max(0, selected), sorted.length - 1);
  const chosen = sorted[sel];
  const why = chosen === undefined ? "" : `why ${chosen.id}: ${chosen.reason ?? (chosen.state === "RUN" || chosen.state === "CLEANUP" ? "running" : "-")}`;
  const room = Math.max(0, size.rows - 4);
  const first = sel >= room - 1 ? sel - room + 2 : 0;
  const shown = sorted.length - first > room ? sorted.slice(first, first + Math.max(0, room - 1)) : sorted.slice(first);
  const table = formatTable(shown, format, { users, now }).replace(/\n$/, "").split("\n");
  const marked = table.map((l, i) => (i === 0 ? `  ${l}` : `${first + i - 1 === sel ? ">" : " "} ${l}`));
  const lines = [summary, why, "", ...marked];
  if (first + shown.length < sorted.length) lines.push(`... ${sorted.length - first - shown.length} more`);
  return lines.slice(0, Math.max(1, size.rows)).map((l) => fit(l, size.columns));
}

async function activeJobs(client: DaemonClient): Promise<JobView[]> {
  return (await client.call("list", { states: ACTIVE_STATES, reasons: true })).jobs;
}

/** The option table of `jobtap top` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["top [-d SECONDS]"],
  summary: "A live view of the queue and the running jobs (q quits); one listing when not on a terminal.",
  options: [{ name: "interval", short: "d", value: "SECONDS", help: "redraw every SECONDS (default 2, at least 0.1)" }],
};

/** Prints the view once (no terminal) or runs the live view until `q` or a hang-up. */
export const top: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC);
  if (p.positionals.length > 0) throw usage(`unexpected argument "${p.positionals[0]}"`);
  const text = optString(p, "interval") ?? "2";
  const interval = Number(text);
  if (!Number.isFinite(interval) || interval < 0.1) throw usage(`--interval must be a number of seconds >= 0.1, got "${text}"`);
  const users = loadUserTable();
  return withDaemon(io, async (client) => {
    if (io.terminal === undefined) {
      const lines = render(await activeJobs(client), { columns: 1000, rows: 1_000_000 }, users, Date.now() / 1000);
      lines[0] = lines[0]!.replace("  (q quits, j/k select)", "");
      io.stdout(lines.join("\n") + "\n");
      return 0;
    }
    return live(client, io, io.terminal, users, interval * 1000);
  });
};

/** The live view: redraw every `intervalMs`, on resize and after each key. */
function live(client: DaemonClient, io: CliIO, term: Terminal, users: UserTable, intervalMs: number): Promise<number> {
  return new Promise<number>((resolve) => {
    let jobs: JobView[] = [];
    let selected = 0;
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const draw = () => {
      selected = Math.min(selected, Math.max(0, jobs.length - 1));
      const lines = render(jobs, term.size(), users, Date.now() / 1000, selected);
      io.stdout(ESC.home + lines.map((l) => l + "\x1b[K").join("\r\n") + ESC.clearBelow);
    };
    const finish = (status: number, message?: string, gone = false) => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      for (const off of offs) off();
      // A terminal that went away has no screen to restore (writing would fail with EIO).
      if (!gone) {
        io.stdout(ESC.showCursor + ESC.mainScreen);
        if (message) io.stderr(`jobtap top: ${message}\n`);
      }
      resolve(status);
    };
    const refresh = async () => {
      try {
        jobs = await activeJobs(client);
      } catch (e) {
        finish(1, `lost the daemon: ${(e as Error).message}`);
        return;
      }
      if (done) return;
      draw();
      timer = setTimeout(() => void refresh(), intervalMs);
    };
    const offs = [
      term.onKey((k) => {
        if (k === "q" || k === "Q" || k === "\x03") return finish(0);
        // j/k and the arrow keys move the selection whose reason the second line shows.
        if (k === "j" || k === "\x1b[B") selected++;
        else if (k === "k" || k === "\x1b[A") selected = Math.max(0, selected - 1);
        else return;
        draw();
      }),
      term.onResize(draw),
      term.onHangup(() => finish(1, "the terminal went away", true)),
    ];
    io.stdout(ESC.altScreen + ESC.hideCursor);
    void refresh();
  });
}

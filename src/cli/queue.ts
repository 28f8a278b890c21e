/**
 * `jobtap queue list|status|start|stop|enable|disable [QUEUE] [-m REASON]`, like `flux
 * queue`, over the `.update-queue` builtin's services: `status` is open to every user, the
 * changes are owner-only. As in Flux, with no `[queues]` configured the changes act on the
 * one anonymous (default) queue; with named queues they need a QUEUE or `--all`.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import type { DaemonClient } from "../server/client.js";
import { optFlag, optString, parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import type { Subcommand } from "./io.js";
import { callService } from "./plugin.js";

const USAGE = "usage: jobtap queue list | status [QUEUE] | start|stop|enable|disable [-a | QUEUE] [-m REASON]";
const PLUGIN = "update-queue";
const CHANGES = ["start", "stop", "enable", "disable"];

const REASON = { name: "message", short: "m", value: "REASON", help: "why (shown by queue status, and to submitters of a disabled queue)" };
const ALL = { name: "all", short: "a", help: "every named queue" };
const change = (verb: string, summary: string, reason: boolean): CommandSpec => ({
  usage: [`queue ${verb} [-a | QUEUE]${reason ? " [-m REASON]" : ""}`],
  summary: `${summary}: the default queue when no [queues] are configured, else QUEUE or --all (owner only)`,
  options: reason ? [ALL, REASON] : [ALL],
});

/** The option tables of `jobtap queue`'s subcommands (parser and --help). */
export const SPEC = {
  subcommands: {
    list: { usage: ["queue list"], summary: "the configured queues, enabled (EN) and started (ST); the default starred", options: [] },
    status: { usage: ["queue status [QUEUE]"], summary: "whether each queue (or QUEUE) takes submissions and schedules", options: [] },
    start: change("start", "schedules the queue's jobs again", false),
    stop: change("stop", "stops scheduling the queue's jobs (pending jobs stay queued)", true),
    enable: change("enable", "accepts submissions to the queue again", false),
    disable: change("disable", "refuses submissions to the queue", true),
  } satisfies Record<string, CommandSpec>,
};

interface QueueStatus {
  enabled: boolean;
  started: boolean;
  disableReason?: string;
  stopReason?: string;
}

/** Dispatches the `queue` subcommands. */
export const queue: Subcommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub === undefined) throw usage(USAGE);
  if (sub !== "list" && sub !== "status" && !CHANGES.includes(sub)) throw usage(`unknown subcommand "${sub}"\n${USAGE}`);
  const p = parseArgs(rest, SPEC.subcommands[sub as keyof typeof SPEC.subcommands]);
  const [name, ...extra] = p.positionals;
  if (extra.length > 0 || (sub === "list" && name !== undefined)) throw usage(USAGE);
  return withDaemon(io, async (client) => {
    const queues = await statusTable(client);
    const anonymous = Object.keys(queues).join() === "";
    if (name !== undefined && (anonymous || queues[name] === undefined)) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, unknownQueue(name, queues));
    if (sub === "list") io.stdout(listTable(queues, await defaultQueue(client)));
    else if (sub === "status") io.stdout(statusLines(queues, name));
    else {
      // As flux queue: with named queues, a change names its queue or says --all.
      if (name !== undefined && optFlag(p, "all")) throw usage("give a QUEUE or --all, not both");
      if (!anonymous && name === undefined && !optFlag(p, "all")) throw usage(`named queues are configured: give a QUEUE or --all`);
      const reason = optString(p, "message");
      await callService(client, PLUGIN, sub, { ...(name === undefined ? {} : { name }), ...(reason === undefined ? {} : { reason }) });
    }
    return 0;
  });
};

/** The status of every configured queue, or of the anonymous queue `""` when none is. */
async function statusTable(client: DaemonClient): Promise<Record<string, QueueStatus>> {
  const { queues } = (await callService(client, PLUGIN, "status", {})) as { queues: Record<string, QueueStatus> };
  return queues;
}

function unknownQueue(name: string, queues: Record<string, QueueStatus>): string {
  const names = Object.keys(queues).filter((n) => n !== "");
  return names.length === 0 ? `unknown queue "${name}" (no named queues are configured: add [queues.NAME] tables to the daemon's config)` : `unknown queue "${name}" (configured: ${names.join(", ")})`;
}

async function defaultQueue(client: DaemonClient): Promise<string | undefined> {
  const q = (await client.call("plugin.query", { name: `.${PLUGIN}` })) as { default?: unknown };
  return typeof q.default === "string" ? q.default : undefined;
}

const mark = (b: boolean) => (b ? "✔" : "✗");

/** `QUEUE EN ST` with the default queue starred, as `flux queue list` marks it. */
function listTable(queues: Record<string, QueueStatus>, dflt: string | undefined): string {
  const names = Object.keys(queues).map((n) => (n === "" ? "default" : n === dflt ? `${n}*` : n));
  const width = Math.max(5, ...names.map((n) => n.length));
  const rows = Object.values(queues).map((s, i) => `${(names[i] as string).padEnd(width)}  ${mark(s.enabled)}  ${mark(s.started)}`);
  return [`${"QUEUE".padEnd(width)}  EN ST`, ...rows].join("\n") + "\n";
}

/** Two lines per queue, as `flux queue status` prints them. */
function statusLines(queues: Record<string, QueueStatus>, only: string | undefined): string {
  const lines: string[] = [];
  for (const [n, s] of Object.entries(queues)) {
    if (only !== undefined && n !== only) continue;
    // The anonymous queue's lines have no name, as flux queue status prints them.
    const label = n === "" ? "" : `${n}: `;
    lines.push(`${label}Job submission is ${s.enabled ? "enabled" : "disabled"}${!s.enabled && s.disableReason ? `: ${s.disableReason}` : ""}`);
    lines.push(`${label}Scheduling is ${s.started ? "started" : "stopped"}${!s.started && s.stopReason ? `: ${s.stopReason}` : ""}`);
  }
  return lines.join("\n") + "\n";
}


/**
 * `jobtap queue list|status|start|stop|enable|disable [QUEUE] [-m REASON]`, like `flux
 * queue`, over the `.update-queue` builtin's services: `status` is open to every user, the
 * changes are owner-only. Without QUEUE a change applies to every configured queue.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import type { DaemonClient } from "../server/client.js";
import { optString, parseArgs, usage } from "./args.js";
import { withDaemon } from "./common.js";
import type { Subcommand } from "./io.js";
import { callService } from "./plugin.js";

const USAGE = "usage: jobtap queue list | status [QUEUE] | start|stop|enable|disable [QUEUE] [-m REASON]";
const PLUGIN = "update-queue";
const CHANGES = ["start", "stop", "enable", "disable"];

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
  if (sub !== "list" && sub !== "status" && !CHANGES.includes(sub)) throw usage(`queue: unknown subcommand "${sub}"\n${USAGE}`);
  const p = parseArgs(rest, CHANGES.includes(sub) ? [{ name: "message", short: "m", value: true }] : []);
  const [name, ...extra] = p.positionals;
  if (extra.length > 0 || (sub === "list" && name !== undefined)) throw usage(USAGE);
  return withDaemon(io, async (client) => {
    const queues = await statusTable(client);
    if (name !== undefined && queues[name] === undefined) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `unknown queue "${name}" (configured: ${Object.keys(queues).join(", ")})`);
    if (sub === "list") io.stdout(listTable(queues, await defaultQueue(client)));
    else if (sub === "status") io.stdout(statusLines(queues, name));
    else {
      const reason = optString(p, "message");
      await callService(client, PLUGIN, sub, { ...(name === undefined ? {} : { name }), ...(reason === undefined ? {} : { reason }) });
    }
    return 0;
  });
};

/** The status of every configured queue; none configured is an error saying how to add one. */
async function statusTable(client: DaemonClient): Promise<Record<string, QueueStatus>> {
  const { queues } = (await callService(client, PLUGIN, "status", {})) as { queues: Record<string, QueueStatus> };
  if (Object.keys(queues).length === 0) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, "no queues are configured (add [queues.NAME] tables to the daemon's config)");
  return queues;
}

async function defaultQueue(client: DaemonClient): Promise<string | undefined> {
  const q = (await client.call("plugin.query", { name: `.${PLUGIN}` })) as { default?: unknown };
  return typeof q.default === "string" ? q.default : undefined;
}

const mark = (b: boolean) => (b ? "✔" : "✗");

/** `QUEUE EN ST` with the default queue starred, as `flux queue list` marks it. */
function listTable(queues: Record<string, QueueStatus>, dflt: string | undefined): string {
  const names = Object.keys(queues).map((n) => (n === dflt ? `${n}*` : n));
  const width = Math.max(5, ...names.map((n) => n.length));
  const rows = Object.values(queues).map((s, i) => `${(names[i] as string).padEnd(width)}  ${mark(s.enabled)}  ${mark(s.started)}`);
  return [`${"QUEUE".padEnd(width)}  EN ST`, ...rows].join("\n") + "\n";
}

/** Two lines per queue, as `flux queue status` prints them. */
function statusLines(queues: Record<string, QueueStatus>, only: string | undefined): string {
  const lines: string[] = [];
  for (const [n, s] of Object.entries(queues)) {
    if (only !== undefined && n !== only) continue;
    lines.push(`${n}: Job submission is ${s.enabled ? "enabled" : "disabled"}${!s.enabled && s.disableReason ? `: ${s.disableReason}` : ""}`);
    lines.push(`${n}: Scheduling is ${s.started ? "started" : "stopped"}${!s.started && s.stopReason ? `: ${s.stopReason}` : ""}`);
  }
  return lines.join("\n") + "\n";
}


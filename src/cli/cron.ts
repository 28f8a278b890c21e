/**
 * `jobtap cron list [--json]`: the condor-cron plugin's jobs (docs/condor-cron.md) — for each
 * job its manager, mode, period, state, last run and exit, next run and last output size —
 * over the plugin's `list` service. Times are printed in UTC; `--json` prints the service's
 * answer as it is (times in seconds since the epoch).
 */
import { optFlag, parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import type { Subcommand } from "./io.js";
import { callService } from "./plugin.js";

const USAGE = "usage: jobtap cron list [--json]";

/** The option table of `jobtap cron list` (parser and --help). */
export const SPEC = {
  subcommands: {
    list: {
      usage: ["cron list [--json]"],
      summary: "the condor-cron plugin's jobs: mode, period, state, last run and exit, next run",
      options: [{ name: "json", help: "the plugin's list service's answer as JSON (times in epoch seconds)" }],
    },
  } satisfies Record<string, CommandSpec>,
};

interface Row {
  manager: string;
  name: string;
  mode: string;
  period: number | null;
  state: string;
  last_run: number | null;
  last_exit: string | null;
  next_run: number | null;
  last_output_bytes: number;
}

interface Listing {
  jobs: Row[];
  skipped: { manager: string; job: string; reason: string }[];
}

/** Dispatches `cron list`. */
export const cron: Subcommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub !== "list") throw usage(sub === undefined ? USAGE : `unknown subcommand "${sub}"\n${USAGE}`);
  const p = parseArgs(rest, SPEC.subcommands.list);
  if (p.positionals.length > 0) throw usage(USAGE);
  return withDaemon(io, async (client) => {
    const listing = (await callService(client, "condor-cron", "list", {})) as Listing;
    io.stdout(optFlag(p, "json") ? JSON.stringify(listing) + "\n" : cronTable(listing));
    return 0;
  });
};

const time = (s: number | null) => (s === null ? "-" : new Date(s * 1000).toISOString().replace(/\.\d+Z$/, "Z"));

/** One line per job under a header; skipped jobs after, one line each. */
export function cronTable(listing: Listing): string {
  const head = ["MANAGER", "NAME", "MODE", "PERIOD", "STATE", "LAST-RUN", "LAST-EXIT", "NEXT-RUN", "OUTPUT"];
  const rows = listing.jobs.map((j) => [
    j.manager,
    j.name,
    j.mode,
    j.period === null ? "-" : `${j.period}s`,
    j.state,
    time(j.last_run),
    j.last_exit ?? "-",
    time(j.next_run),
    `${j.last_output_bytes}B`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ");
  const out = [line(head), ...rows.map(line)];
  for (const s of listing.skipped) out.push(`skipped: ${s.manager} cron job ${s.job}: ${s.reason}`);
  return out.join("\n") + "\n";
}

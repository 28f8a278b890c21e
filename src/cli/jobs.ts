/**
 * `jobtap jobs [-a] [-A] [--filter=STATES] [--user U] [--constraint EXPR] [-c N] [--json] [-o FORMAT] [-n]`:
 * the queue, like `flux jobs`. Default: your active jobs, at most 1000 (`-c 0` for all); `-a` adds inactive
 * ones, `-A` every user's. `--json` prints the documented array of job objects (docs/cli.md).
 */
import { ACTIVE, PENDING, RESULTS, RUNNING, STATES } from "../manager/base/states.js";
import { optFlag, optInt, optString, parseArgs, usage, type CommandSpec } from "./args.js";
import { currentUserid, withDaemon } from "./common.js";
import { DEFAULT_FORMAT, formatTable, wantsReasons, type FormatEnv } from "./format.js";
import type { CliIO, Subcommand } from "./io.js";
import type { JobView } from "../server/protocol.js";
import { loadUserTable } from "../manager/base/users.js";

/** How many jobs a listing shows when `--count` is not given, as `flux jobs`. */
export const DEFAULT_COUNT = 1000;

/** The option table of `jobtap jobs` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["jobs [-a] [-A] [-f STATES] [-u USER] [--constraint EXPR] [-c N] [--json | -o FORMAT] [-n]"],
  summary: "Lists jobs, like flux jobs: by default your active jobs, at most 1000.",
  options: [
    { name: "all", short: "a", help: "list inactive jobs too (same as --filter=active,inactive)" },
    { name: "filter", short: "f", value: "STATES", help: "list jobs in these states or results, comma-separated (pending, running, active, inactive, DEPEND ... CLEANUP, COMPLETED, FAILED, CANCELED, TIMEOUT)" },
    { name: "user", short: "u", value: "USER", help: "list this user's jobs (a name or uid; \"all\" for everyone's)" },
    { name: "all-users", short: "A", help: "list every user's jobs (same as --user=all)" },
    { name: "constraint", value: "EXPR", help: "list only jobs whose job ad matches this ClassAd expression" },
    { name: "count", short: "c", value: "N", help: `list at most N jobs (default ${DEFAULT_COUNT}; 0 lists all)` },
    { name: "json", help: "print the jobs as one JSON array (docs/cli.md)" },
    { name: "format", short: "o", value: "FORMAT", help: "the table's columns, as a flux jobs format string ({id} {name} ...)" },
    { name: "no-header", short: "n", help: "leave out the header line" },
  ],
};

/** States and results a `--filter` list selects; an unknown word is a USAGE error. */
export function parseStateFilter(text: string): { states: string[]; results: string[] } {
  const states = new Set<string>();
  const results = new Set<string>();
  for (const raw of text.split(",")) {
    const word = raw.trim().toUpperCase();
    if (word === "") continue;
    if (word === "PENDING") PENDING.forEach((s) => states.add(s));
    else if (word === "RUNNING") RUNNING.forEach((s) => states.add(s));
    else if (word === "ACTIVE") ACTIVE.forEach((s) => states.add(s));
    else if ((STATES as readonly string[]).includes(word)) states.add(word);
    else if ((RESULTS as readonly string[]).includes(word)) results.add(word);
    else throw usage(`--filter: unknown state or result "${raw}"`);
  }
  return { states: [...states], results: [...results] };
}

/** Lists jobs as a table or as JSON. */
export const jobs: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC);
  if (p.positionals.length > 0) throw usage(`unexpected argument "${p.positionals[0]}"`);
  const users = loadUserTable();
  const filterText = optString(p, "filter") ?? (optFlag(p, "all") ? "active,inactive" : "active");
  const filter = parseStateFilter(filterText);
  const user = optString(p, "user") ?? (optFlag(p, "all-users") ? "all" : String(currentUserid()));
  const userid = user === "all" ? undefined : users.uid(user);
  if (user !== "all" && userid === undefined) throw usage(`--user: no such user "${user}"`);
  const count = optInt(p, "count", DEFAULT_COUNT) as number;
  if (count < 0) throw usage(`--count: must be 0 (no limit) or more, got ${count}`);
  const limit = count === 0 ? undefined : count;
  const format = optString(p, "format") ?? DEFAULT_FORMAT;
  const constraint = optString(p, "constraint");
  return withDaemon(io, async (client) => {
    const req = {
      states: filter.states,
      results: filter.results,
      ...(userid === undefined ? {} : { userid }),
      ...(limit === undefined ? {} : { limit }),
      ...(constraint === undefined ? {} : { constraint }),
      // The INFO and REASON columns show a pending job's first reason (computed by the daemon).
      ...(!optFlag(p, "json") && wantsReasons(format) ? { reasons: true } : {}),
    };
    // Streamed: rows are printed a chunk at a time as the daemon sends them, so a listing
    // of 100,000 jobs never sits whole in either process. --json passes the daemon's JSON
    // text through as it came (the same text JSON.stringify gives; no parse and re-encode).
    if (optFlag(p, "json")) {
      const out = jsonArrayWriter(io);
      const rows = chunked<string>((c) => out.rows(c));
      await client.streamText("list", { ...req, stream: true }, rows.push);
      rows.flush();
      out.end();
      return 0;
    }
    const out = tableWriter(io, format, { users, now: Date.now() / 1000 }, !optFlag(p, "no-header"));
    const rows = chunked<JobView>((c) => out.rows(c));
    await client.stream("list", { ...req, stream: true }, (line) => rows.push(line as JobView));
    rows.flush();
    out.end();
    return 0;
  });
};

/** Rows printed per write while a listing streams in. */
const PRINT_CHUNK = 512;

interface ListingWriter<Row> {
  rows(jobs: Row[]): void;
  end(): void;
}

/** The table, header first (printed even when no job is listed). */
function tableWriter(io: CliIO, format: string, env: FormatEnv, header: boolean): ListingWriter<JobView> {
  let headerDue = header;
  const print = (jobs: JobView[]) => {
    io.stdout(formatTable(jobs, format, env, headerDue));
    headerDue = false;
  };
  return {
    rows: (jobs) => {
      if (jobs.length > 0) print(jobs);
    },
    end: () => {
      if (headerDue) print([]);
    },
  };
}

/** One JSON array, as `JSON.stringify(list)` prints it, written as the rows (JSON texts) arrive. */
function jsonArrayWriter(io: CliIO): ListingWriter<string> {
  let opened = false;
  return {
    rows: (jobs) => {
      if (jobs.length === 0) return;
      io.stdout((opened ? "," : "[") + jobs.join(","));
      opened = true;
    },
    end: () => io.stdout(opened ? "]\n" : "[]\n"),
  };
}

/** Collects streamed rows and hands them to `write` PRINT_CHUNK at a time; `flush` writes the rest. */
function chunked<T>(write: (rows: T[]) => void): { push: (row: T) => void; flush: () => void } {
  let chunk: T[] = [];
  return {
    push: (row) => {
      chunk.push(row);
      if (chunk.length >= PRINT_CHUNK) {
        write(chunk);
        chunk = [];
      }
    },
    flush: () => write(chunk),
  };
}

/**
 * The `jobtap` command: global options, the subcommand table, and the one place where
 * `process` is adapted to CliIO and errors become messages and exit statuses.
 */
import { ErrorCode, isJobtapError } from "../errors.js";
import { parseArgs, takeGlobalOption, usage } from "./args.js";
import type { CliIO, Subcommand } from "./io.js";

type Loader = () => Promise<Subcommand>;

/** One subcommand: its one-line summary, its usage (printed by `--help`), its loader. */
interface SubcommandEntry {
  summary: string;
  /** Usage lines, without the leading "usage: ". A command without one gets a default
   *  built from its name and summary, so `--help` works on every command. */
  usage?: string;
  /** The command prints its own, richer help for `--help` (submit). */
  ownHelp?: true;
  load: Loader;
}

/**
 * Subcommands load lazily so a quick `jobtap jobs` never pulls in the job manager. classad
 * and condor are written by their own areas (src/cli/classad.ts, src/cli/condor.ts).
 */
const SUBCOMMANDS: Record<string, SubcommandEntry> = {
  submit: { summary: "submit a job", ownHelp: true, load: async () => (await import("./submit.js")).submit },
  jobs: {
    summary: "list jobs",
    usage: "jobtap jobs [-a] [-A] [--filter=STATES] [--user U] [--json] [-o FORMAT] [-n] [--count N]",
    load: async () => (await import("./jobs.js")).jobs,
  },
  job: {
    summary: "job info | kill | purge",
    usage: [
      "jobtap job info ID [job|jobspec|R]",
      "jobtap job kill [-s SIG] ID...",
      "jobtap job purge [--force] [--age-limit=FSD] [--num-limit=N] [ID...]",
    ].join("\n"),
    load: async () => (await import("./job.js")).job,
  },
  top: {
    summary: "a live view of the queue and the running jobs",
    usage: "jobtap top [--interval SECONDS]   (q quits; one listing when not on a terminal)",
    load: async () => (await import("./top.js")).top,
  },
  eventlog: {
    summary: "print a job's eventlog",
    usage: "jobtap eventlog ID [--json] [--follow]",
    load: async () => (await import("./eventlog.js")).eventlog,
  },
  wait: { summary: "wait for jobs to finish", usage: "jobtap wait ID...", load: async () => (await import("./wait.js")).wait },
  cancel: { summary: "cancel jobs", usage: "jobtap cancel ID... [-m MESSAGE]", load: async () => (await import("./cancel.js")).cancel },
  urgency: {
    summary: "change a job's urgency",
    usage: "jobtap urgency ID N|hold|expedite|default",
    load: async () => (await import("./urgency.js")).urgency,
  },
  update: {
    summary: "update jobspec keys of a job",
    usage: "jobtap update [-n] [-v] ID KEY=VALUE...",
    load: async () => (await import("./update.js")).update,
  },
  raise: {
    summary: "raise an exception on jobs",
    usage: "jobtap raise ID... [--type T] [--severity S] [-m MSG]",
    load: async () => (await import("./raise.js")).raise,
  },
  plugin: {
    summary: "list/load/remove/query plugins",
    usage: [
      "jobtap plugin list [--all] [--json]",
      "jobtap plugin load [-r NAME|GLOB|all] [--isolate] PATH|NAME [KEY=VAL...]   (owner only)",
      "jobtap plugin remove NAME|GLOB|all                             (owner only)",
      "jobtap plugin query NAME",
      "jobtap plugin call NAME METHOD [JSON]",
    ].join("\n"),
    load: async () => (await import("./plugin.js")).plugin,
  },
  queue: {
    summary: "queue list|status|start|stop|enable|disable",
    usage: "jobtap queue list | status [QUEUE] | start|stop|enable|disable [QUEUE] [-m REASON]",
    load: async () => (await import("./queue.js")).queue,
  },
  cron: {
    summary: "the condor-cron plugin's jobs (mode, period, last and next run)",
    usage: "jobtap cron list [--json]",
    load: async () => (await import("./cron.js")).cron,
  },
  router: {
    summary: "the condor-router plugin's routes and routed jobs (like condor_router_q, condor_router_history)",
    usage: "jobtap router q [--json] | router history [--json] [--show-records] [--age DAYS]",
    load: async () => (await import("./router.js")).router,
  },
  ads: { summary: "machine and slot ads (like condor_status)", load: async () => (await import("./ads.js")).ads },
  history: { summary: "your recent job ids, newest first", usage: "jobtap history [SLICE]", load: async () => (await import("./history.js")).history },
  "job-exec-override": {
    summary: "start or finish a test-executor job in override mode",
    usage: "jobtap job-exec-override start ID | finish ID STATUS",
    load: async () => (await import("./exec-override.js")).execOverride,
  },
  "post-event": {
    summary: "post an event to a job (owner)",
    usage: "jobtap post-event ID NAME [CONTEXT-JSON]",
    load: async () => (await import("./post-event.js")).postEvent,
  },
  config: {
    summary: "config check FILE | config reload",
    usage: "jobtap config check FILE\njobtap config reload   (owner only)",
    load: async () => (await import("./config.js")).config,
  },
  daemon: {
    summary: "run the daemon in the foreground",
    usage: "jobtap daemon [--config FILE] [--statedir DIR] [--socket PATH] [--log-file FILE]",
    load: async () => (await import("./daemon.js")).daemon,
  },
  classad: {
    summary: "ClassAd tools (classad eval ...)",
    usage: [
      "jobtap classad eval [--ad FILE|-] [--target FILE|-] [--old|--new] EXPR...",
      'jobtap classad eval --jsonl [--old|--new]   (one {"ad","target","expr"} per stdin line)',
    ].join("\n"),
    load: async () => (await import("./classad.js")).classad },
  condor: {
    summary: "HTCondor config and transform tools",
    usage: [
      "jobtap condor transform --rules FILE [--ad FILE|-] [--config FILE]",
      "jobtap condor transform --config FILE --route NAME [--ad FILE|-]",
      "jobtap condor config FILE [NAME...]",
      "jobtap condor routes FILE",
    ].join("\n"),
    load: async () => (await import("./condor.js")).condor },
};

/** The top-level help text. */
export function helpText(): string {
  const lines = Object.entries(SUBCOMMANDS).map(([name, s]) => `  ${name.padEnd(10)} ${s.summary}`);
  return `usage: jobtap [--socket PATH] COMMAND [ARGS...]\n       jobtap --version\n\ncommands:\n${lines.join("\n")}\n\n\`jobtap COMMAND --help\` describes one command.\n`;
}

/**
 * `jobtap COMMAND [SUB] --help` (or `-h`) anywhere before a `--`: the command's usage.
 * submit prints its own help: its arguments end in the job's own command line, where a
 * `--help` belongs to the job.
 */
function wantsHelp(entry: SubcommandEntry, args: string[]): boolean {
  if (entry.ownHelp) return false;
  for (const a of args) {
    if (a === "--") return false;
    if (a === "--help" || a === "-h") return true;
  }
  return false;
}

function commandHelp(name: string, entry: SubcommandEntry): string {
  const lines = (entry.usage ?? `${name} [ARGS...]`).split("\n");
  const text = lines.map((l, i) => (i === 0 ? "usage: " : "       ") + l).join("\n");
  return `${text}\n\n${name}: ${entry.summary}\n`;
}

const GLOBAL_OPTIONS = [{ name: "socket", value: true }, { name: "help", short: "h" }, { name: "version", short: "V" }];

/**
 * Runs one jobtap command line (without the program name) and returns the exit status:
 * 0 on success, 2 for usage errors, 1 for every other failure (message on stderr).
 */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  let name = "jobtap";
  try {
    const p = parseArgs(argv, GLOBAL_OPTIONS, { stopAtPositional: true });
    const [sub, ...args] = p.positionals;
    if (p.options.version === true) {
      io.stdout(`jobtap ${(await import("../version.js")).packageVersion()}\n`);
      return 0;
    }
    if (p.options.help === true || sub === undefined || sub === "help") {
      io.stdout(helpText());
      return sub === undefined && p.options.help !== true ? 2 : 0;
    }
    const entry = SUBCOMMANDS[sub];
    if (!entry) throw usage(`unknown command "${sub}" (try: jobtap --help)`);
    name = `jobtap ${sub}`;
    if (wantsHelp(entry, args)) {
      io.stdout(commandHelp(name, entry));
      return 0;
    }
    const { value, rest } = await socketAfterCommand(sub, args);
    const socket = value ?? p.options.socket;
    // Object.create keeps io's getters (a lazy stdin) instead of calling them as a spread would.
    const subIo: CliIO = typeof socket === "string" ? Object.assign(Object.create(io) as CliIO, { env: { ...io.env, JOBTAP_SOCKET: socket } }) : io;
    return await (await entry.load())(rest, subIo);
  } catch (e) {
    return reportError(name, e, io);
  }
}

/** Commands with their own `--socket` (daemon) or no daemon at all keep their arguments. */
const OWN_SOCKET = new Set(["daemon", "classad", "condor"]);

/** `jobtap COMMAND ... --socket PATH`: the global option, accepted after the command too. */
async function socketAfterCommand(sub: string, rest: string[]): Promise<{ value?: string; rest: string[] }> {
  if (OWN_SOCKET.has(sub)) return { rest };
  const stopAt = sub === "submit" ? (await import("./submit.js")).SUBMIT_OPTIONS : undefined;
  return takeGlobalOption(rest, "socket", stopAt);
}

function reportError(name: string, e: unknown, io: CliIO): number {
  if (isJobtapError(e)) {
    io.stderr(`${name}: ${e.message}\n`);
    return e.code === ErrorCode.USAGE ? 2 : 1;
  }
  io.stderr(`${name}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  return 1;
}

/** Status on a closed stdout: what a shell reports for a command killed by SIGPIPE. */
const BROKEN_PIPE_STATUS = 141;

/** The process adapter: what bin/jobtap calls. */
export async function main(): Promise<void> {
  // `jobtap jobs | head`: the reader went away; stop quietly instead of an EPIPE stack trace.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") throw e;
    process.exit(BROKEN_PIPE_STATUS);
  });
  const io: CliIO = {
    // Opened when a command reads it: making process.stdin costs a start-up a few ms.
    get stdin() {
      return process.stdin;
    },
    stdout: (t) => void process.stdout.write(t),
    stderr: (t) => void process.stderr.write(t),
    env: process.env,
    cwd: process.cwd(),
  };
  // Only a terminal has anything to offer (terminal.ts): piped output skips loading it.
  const terminal = process.stdout.isTTY ? (await import("./terminal.js")).processTerminal() : undefined;
  if (terminal) io.terminal = terminal;
  const status = await runCli(process.argv.slice(2), io);
  process.exitCode = status;
}

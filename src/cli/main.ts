/**
 * The `jobtap` command: global options, the subcommand table, and the one place where
 * `process` is adapted to CliIO and errors become messages and exit statuses.
 */
import { ErrorCode, isJobtapError } from "../errors.js";
import { parseArgs, takeGlobalOption, usage, type CommandSpec } from "./args.js";
import { renderHelp, renderSpec, subcommandSpec, type CommandHelp } from "./help.js";
import type { CliIO, Subcommand } from "./io.js";

/** A loaded command: what runs it and the option table(s) its parser and `--help` share. */
interface Command {
  run: Subcommand;
  help: CommandHelp;
}

/** One subcommand: its one-line summary (the command list) and its loader. */
interface SubcommandEntry {
  summary: string;
  load: () => Promise<Command>;
}

/**
 * Subcommands load lazily so a quick `jobtap jobs` never pulls in the job manager; each
 * module exports its runner and its option table(s) (`SPEC`).
 */
export const SUBCOMMANDS: Record<string, SubcommandEntry> = {
  submit: { summary: "submit a job", load: () => import("./submit.js").then((m) => ({ run: m.submit, help: m.SPEC })) },
  jobs: { summary: "list jobs", load: () => import("./jobs.js").then((m) => ({ run: m.jobs, help: m.SPEC })) },
  job: { summary: "job info | why | kill | purge | output | attach", load: () => import("./job.js").then((m) => ({ run: m.job, help: m.SPEC })) },
  why: { summary: "why jobs are not running (job why)", load: () => import("./why.js").then((m) => ({ run: m.why, help: m.SPEC })) },
  top: { summary: "a live view of the queue and the running jobs", load: () => import("./top.js").then((m) => ({ run: m.top, help: m.SPEC })) },
  eventlog: { summary: "print a job's eventlog", load: () => import("./eventlog.js").then((m) => ({ run: m.eventlog, help: m.SPEC })) },
  wait: { summary: "wait for jobs to finish", load: () => import("./wait.js").then((m) => ({ run: m.wait, help: m.SPEC })) },
  cancel: { summary: "cancel jobs", load: () => import("./cancel.js").then((m) => ({ run: m.cancel, help: m.SPEC })) },
  urgency: { summary: "change a job's urgency", load: () => import("./urgency.js").then((m) => ({ run: m.urgency, help: m.SPEC })) },
  update: { summary: "update jobspec keys of a job", load: () => import("./update.js").then((m) => ({ run: m.update, help: m.SPEC })) },
  raise: { summary: "raise an exception on jobs", load: () => import("./raise.js").then((m) => ({ run: m.raise, help: m.SPEC })) },
  plugin: { summary: "list/load/remove/query plugins", load: () => import("./plugin.js").then((m) => ({ run: m.plugin, help: m.SPEC })) },
  queue: { summary: "queue list|status|start|stop|enable|disable", load: () => import("./queue.js").then((m) => ({ run: m.queue, help: m.SPEC })) },
  account: { summary: "fair-share banks, users, shares, usage and limits (the accounting plugin)", load: () => import("./account.js").then((m) => ({ run: m.account, help: m.SPEC })) },
  cron: {
    summary: "the condor-cron plugin's jobs (mode, period, last and next run)",
    load: () => import("./cron.js").then((m) => ({ run: m.cron, help: m.SPEC })),
  },
  router: {
    summary: "the condor-router plugin's routes and routed jobs (like condor_router_q, condor_router_history)",
    load: () => import("./router.js").then((m) => ({ run: m.router, help: m.SPEC })),
  },
  token: { summary: "bearer tokens for the HTTP API: create | list | revoke", load: () => import("./token.js").then((m) => ({ run: m.token, help: m.SPEC })) },
  web: { summary: "a one-time login URL for the web dashboard", load: () => import("./web.js").then((m) => ({ run: m.web, help: m.SPEC })) },
  ads: { summary: "machine and slot ads (like condor_status)", load: () => import("./ads.js").then((m) => ({ run: m.ads, help: m.SPEC })) },
  history: { summary: "your recent job ids, newest first", load: () => import("./history.js").then((m) => ({ run: m.history, help: m.SPEC })) },
  "job-exec-override": {
    summary: "start or finish a test-executor job in override mode",
    load: () => import("./exec-override.js").then((m) => ({ run: m.execOverride, help: m.SPEC })),
  },
  "post-event": { summary: "post an event to a job (owner)", load: () => import("./post-event.js").then((m) => ({ run: m.postEvent, help: m.SPEC })) },
  config: { summary: "config check FILE | config reload", load: () => import("./config.js").then((m) => ({ run: m.config, help: m.SPEC })) },
  daemon: { summary: "run the daemon in the foreground", load: () => import("./daemon.js").then((m) => ({ run: m.daemon, help: m.SPEC })) },
  classad: { summary: "ClassAd tools (classad eval ...)", load: () => import("./classad.js").then((m) => ({ run: m.classad, help: m.SPEC })) },
  condor: { summary: "HTCondor config and transform tools", load: () => import("./condor.js").then((m) => ({ run: m.condor, help: m.SPEC })) },
  version: { summary: "print jobtap's version", load: async () => ({ run: printVersion, help: VERSION_SPEC }) },
};

const VERSION_SPEC: CommandSpec = { usage: ["version", "--version"], summary: "Prints jobtap's version.", options: [] };

/** `jobtap version` (and `jobtap --version`), as `flux version` prints its own. */
const printVersion: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, VERSION_SPEC);
  if (p.positionals.length > 0) throw usage(`unexpected argument "${p.positionals[0]}"`);
  io.stdout(`jobtap ${(await import("../version.js")).packageVersion()}\n`);
  return 0;
};

/** The top-level help text. */
export function helpText(): string {
  const lines = Object.entries(SUBCOMMANDS).map(([name, s]) => `  ${name.padEnd(10)} ${s.summary}`);
  return `usage: jobtap [--socket PATH] COMMAND [ARGS...]\n       jobtap --version\n\ncommands:\n${lines.join("\n")}\n\n\`jobtap COMMAND --help\` describes one command and its options.\n`;
}

/**
 * `jobtap COMMAND [SUB] --help` (or `-h`) anywhere before a `--` (for submit, before its
 * command line starts: a `--help` there belongs to the job).
 */
function wantsHelp(name: string, args: string[]): boolean {
  for (const a of args) {
    if (a === "--") return false;
    if (a === "--help" || a === "-h") return true;
    if (name === "submit" && !a.startsWith("-")) return false;
  }
  return false;
}

/** The help of `jobtap NAME [SUB]`: the subcommand's alone when SUB names one. */
function commandHelp(name: string, entry: SubcommandEntry, help: CommandHelp, sub: string | undefined): string {
  const one = subcommandSpec(help, sub);
  return one ? renderSpec(one) : renderHelp(`jobtap ${name}`, entry.summary, help);
}

const GLOBAL_OPTIONS: CommandSpec = {
  usage: ["[--socket PATH] COMMAND [ARGS...]"],
  summary: "jobtap",
  options: [
    { name: "socket", value: "PATH", help: "the daemon's socket (default: $JOBTAP_SOCKET, else the statedir's)" },
    { name: "help", short: "h", help: "list the commands" },
    { name: "version", short: "V", help: "print jobtap's version" },
  ],
};

/**
 * Runs one jobtap command line (without the program name) and returns the exit status:
 * 0 on success, 2 for usage errors, 1 for every other failure (message on stderr).
 */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  let name = "jobtap";
  try {
    const p = parseArgs(argv, GLOBAL_OPTIONS, { stopAtPositional: true });
    const [sub, ...args] = p.positionals;
    if (p.options.version === true) return await printVersion([], io);
    if (p.options.help === true || sub === undefined || sub === "help") {
      io.stdout(helpText());
      return sub === undefined && p.options.help !== true ? 2 : 0;
    }
    const entry = SUBCOMMANDS[sub];
    if (!entry) throw usage(`unknown command "${sub}" (try: jobtap --help)`);
    name = `jobtap ${sub}`;
    if (wantsHelp(sub, args)) {
      io.stdout(commandHelp(sub, entry, (await entry.load()).help, args[0]));
      return 0;
    }
    const { value, rest } = await socketAfterCommand(sub, args);
    const socket = value ?? p.options.socket;
    // Object.create keeps io's getters (a lazy stdin) instead of calling them as a spread would.
    const subIo: CliIO = typeof socket === "string" ? Object.assign(Object.create(io) as CliIO, { env: { ...io.env, JOBTAP_SOCKET: socket } }) : io;
    return await (await entry.load()).run(rest, subIo);
  } catch (e) {
    return reportError(name, e, io);
  }
}

/** Commands with their own `--socket` (daemon) or no daemon at all keep their arguments. */
const OWN_SOCKET = new Set(["daemon", "classad", "condor"]);

/** `jobtap COMMAND ... --socket PATH`: the global option, accepted after the command too. */
async function socketAfterCommand(sub: string, rest: string[]): Promise<{ value?: string; rest: string[] }> {
  if (OWN_SOCKET.has(sub)) return { rest };
  const stopAt = sub === "submit" ? (await import("./submit.js")).SPEC.options : undefined;
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

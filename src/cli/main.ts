/**
 * The `jobtap` command: global options, the subcommand table, and the one place where
 * `process` is adapted to CliIO and errors become messages and exit statuses.
 */
import { ErrorCode, isJobtapError } from "../errors.js";
import { parseArgs, takeGlobalOption, usage } from "./args.js";
import type { CliIO, Subcommand } from "./io.js";

type Loader = () => Promise<Subcommand>;

/**
 * Subcommands load lazily so a quick `jobtap jobs` never pulls in the job manager. classad
 * and condor are written by their own areas (src/cli/classad.ts, src/cli/condor.ts).
 */
const SUBCOMMANDS: Record<string, { summary: string; load: Loader }> = {
  submit: { summary: "submit a job", load: async () => (await import("./submit.js")).submit },
  jobs: { summary: "list jobs", load: async () => (await import("./jobs.js")).jobs },
  job: { summary: "job info ID", load: async () => (await import("./job.js")).job },
  eventlog: { summary: "print a job's eventlog", load: async () => (await import("./eventlog.js")).eventlog },
  wait: { summary: "wait for jobs to finish", load: async () => (await import("./wait.js")).wait },
  cancel: { summary: "cancel jobs", load: async () => (await import("./cancel.js")).cancel },
  urgency: { summary: "change a job's urgency", load: async () => (await import("./urgency.js")).urgency },
  update: { summary: "update jobspec keys of a job", load: async () => (await import("./update.js")).update },
  raise: { summary: "raise an exception on jobs", load: async () => (await import("./raise.js")).raise },
  plugin: { summary: "list/load/remove/query plugins", load: async () => (await import("./plugin.js")).plugin },
  queue: { summary: "queue list|status|start|stop|enable|disable", load: async () => (await import("./queue.js")).queue },
  history: { summary: "your recent job ids, newest first", load: async () => (await import("./history.js")).history },
  "post-event": { summary: "post an event to a job (owner)", load: async () => (await import("./post-event.js")).postEvent },
  config: { summary: "config check FILE | config reload", load: async () => (await import("./config.js")).config },
  daemon: { summary: "run the daemon in the foreground", load: async () => (await import("./daemon.js")).daemon },
  classad: { summary: "ClassAd tools (classad eval ...)", load: async () => (await import("./classad.js")).classad },
  condor: { summary: "HTCondor config and transform tools", load: async () => (await import("./condor.js")).condor },
};

/** The top-level help text. */
export function helpText(): string {
  const lines = Object.entries(SUBCOMMANDS).map(([name, s]) => `  ${name.padEnd(10)} ${s.summary}`);
  return `usage: jobtap [--socket PATH] COMMAND [ARGS...]\n\ncommands:\n${lines.join("\n")}\n`;
}

const GLOBAL_OPTIONS = [{ name: "socket", value: true }, { name: "help", short: "h" }];

/**
 * Runs one jobtap command line (without the program name) and returns the exit status:
 * 0 on success, 2 for usage errors, 1 for every other failure (message on stderr).
 */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  let name = "jobtap";
  try {
    const p = parseArgs(argv, GLOBAL_OPTIONS, { stopAtPositional: true });
    const [sub, ...args] = p.positionals;
    if (p.options.help === true || sub === undefined || sub === "help") {
      io.stdout(helpText());
      return sub === undefined && p.options.help !== true ? 2 : 0;
    }
    const entry = SUBCOMMANDS[sub];
    if (!entry) throw usage(`unknown command "${sub}" (try: jobtap --help)`);
    name = `jobtap ${sub}`;
    const { value, rest } = await socketAfterCommand(sub, args);
    const socket = value ?? p.options.socket;
    const subIo = typeof socket === "string" ? { ...io, env: { ...io.env, JOBTAP_SOCKET: socket } } : io;
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
    stdin: process.stdin,
    stdout: (t) => void process.stdout.write(t),
    stderr: (t) => void process.stderr.write(t),
    env: process.env,
    cwd: process.cwd(),
  };
  const status = await runCli(process.argv.slice(2), io);
  process.exitCode = status;
}

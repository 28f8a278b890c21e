/**
 * `jobtap daemon [--config FILE] [--statedir DIR] [--socket PATH]`: runs the daemon in the
 * foreground, logging to stderr, until SIGTERM or SIGINT (see src/server/daemon.ts).
 */
import { resolve } from "node:path";
import { runDaemonUntilSignal } from "../server/daemon.js";
import { optString, parseArgs, usage, type CommandSpec } from "./args.js";
import { defaultStatedir } from "./common.js";
import type { Subcommand } from "./io.js";

/** The option table of `jobtap daemon` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["daemon [--config FILE] [--statedir DIR] [--socket PATH]"],
  summary: "Runs the daemon in the foreground, logging to stderr, until SIGTERM or SIGINT (Ctrl-C).",
  options: [
    { name: "config", value: "FILE", help: "the TOML configuration (docs/configuration.md); default: the embedded defaults" },
    { name: "statedir", value: "DIR", help: "where jobs, output and the socket live (default $JOBTAP_STATEDIR, else ~/.local/state/jobtap)" },
    { name: "socket", value: "PATH", help: "the socket to listen on (default STATEDIR/jobtap.sock)" },
  ],
};

/** Runs the daemon; returns its exit status after a clean shutdown. */
export const daemon: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC);
  if (p.positionals.length > 0) throw usage(`unexpected argument "${p.positionals[0]}"`);
  const at = (v: string | undefined) => (v === undefined ? undefined : resolve(io.cwd, v));
  const statedir = at(optString(p, "statedir")) ?? defaultStatedir(io.env);
  const configPath = at(optString(p, "config"));
  // `jobtap --socket PATH daemon` reaches here as $JOBTAP_SOCKET; the daemon's own option wins.
  const socketPath = at(optString(p, "socket")) ?? at(io.env.JOBTAP_SOCKET || undefined);
  try {
    return await runDaemonUntilSignal({
      statedir,
      env: io.env,
      log: (line) => io.stderr(line + "\n"),
      ...(configPath === undefined ? {} : { configPath }),
      ...(socketPath === undefined ? {} : { socketPath }),
    });
  } catch {
    // startDaemon has logged why it could not start; the exit status says the rest.
    return 1;
  }
};

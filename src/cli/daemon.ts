/**
 * `jobtap daemon [--config FILE] [--statedir DIR] [--socket PATH] [--log-file FILE]`: runs
 * the daemon in the foreground, logging to stderr (or FILE), until SIGTERM or SIGINT (see
 * src/server/daemon.ts).
 */
import { resolve } from "node:path";
import { runDaemonUntilSignal } from "../server/daemon.js";
import { optString, parseArgs, usage, type CommandSpec } from "./args.js";
import { defaultStatedir } from "./common.js";
import { openLogFile } from "./log-file.js";
import type { Subcommand } from "./io.js";

/** The option table of `jobtap daemon` (parser and --help). */
export const SPEC: CommandSpec = {
  usage: ["daemon [--config FILE] [--statedir DIR] [--socket PATH] [--log-file FILE]"],
  summary: "Runs the daemon in the foreground, logging to stderr, until SIGTERM or SIGINT (Ctrl-C).",
  options: [
    { name: "config", value: "FILE", help: "the TOML configuration (docs/configuration.md); default: the embedded defaults" },
    { name: "statedir", value: "DIR", help: "where jobs, output and the socket live (default $JOBTAP_STATEDIR, else ~/.local/state/jobtap)" },
    { name: "socket", value: "PATH", help: "the socket to listen on (default STATEDIR/jobtap.sock)" },
    { name: "log-file", value: "FILE", help: "append the log to FILE (created 0600; reopened on SIGHUP) instead of stderr" },
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
  const logPath = at(optString(p, "log-file"));
  const file = logPath === undefined ? undefined : openLogFile(logPath);
  // Registered before the daemon's own SIGHUP (reload) listener, so the reload's outcome is
  // already logged to the reopened file; a failed reopen keeps the old file and says why.
  const reopen = () => {
    try {
      file?.reopen();
    } catch (e) {
      file?.write(`${new Date().toISOString()} jobtap[${process.pid}] error: ${(e as Error).message}`);
    }
  };
  if (file) process.on("SIGHUP", reopen);
  try {
    return await runDaemonUntilSignal({
      statedir,
      env: io.env,
      log: file ? (line) => file.write(line) : (line) => io.stderr(line + "\n"),
      ...(configPath === undefined ? {} : { configPath }),
      ...(socketPath === undefined ? {} : { socketPath }),
    });
  } catch {
    // startDaemon has logged why it could not start; the exit status says the rest.
    return 1;
  } finally {
    if (file) {
      process.off("SIGHUP", reopen);
      file.close();
    }
  }
};

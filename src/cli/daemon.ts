/**
 * `jobtap daemon [--config FILE] [--statedir DIR] [--socket PATH] [--log-file FILE]`: runs
 * the daemon in the foreground, logging to stderr (or FILE), until SIGTERM or SIGINT (see
 * src/server/daemon.ts).
 */
import { resolve } from "node:path";
import { runDaemonUntilSignal } from "../server/daemon.js";
import { optString, parseArgs, usage } from "./args.js";
import { defaultStatedir } from "./common.js";
import { openLogFile } from "./log-file.js";
import type { Subcommand } from "./io.js";

const OPTIONS = [
  { name: "config", value: true },
  { name: "statedir", value: true },
  { name: "socket", value: true },
  { name: "log-file", value: true },
];

/** Runs the daemon; returns its exit status after a clean shutdown. */
export const daemon: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, OPTIONS);
  if (p.positionals.length > 0) throw usage(`daemon: unexpected argument "${p.positionals[0]}"`);
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

/**
 * `jobtap config check FILE`: checks a TOML file exactly as `jobtap daemon --config FILE`
 * would and prints every problem with its TOML path (exit 1), or "FILE: ok" (exit 0).
 * `jobtap config reload`: asks the daemon to re-read its `--config` file (as SIGHUP does).
 */
import { resolve } from "node:path";
import { checkConfigFile } from "../server/config.js";
import { parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import type { Subcommand } from "./io.js";

/** The option tables of `jobtap config`'s subcommands (parser and --help). */
export const SPEC = {
  subcommands: {
    check: { usage: ["config check FILE"], summary: "checks a TOML file as `jobtap daemon --config FILE` would", options: [] },
    reload: { usage: ["config reload"], summary: "asks the daemon to re-read its --config file, as SIGHUP does (owner only)", options: [] },
  } satisfies Record<string, CommandSpec>,
};

/** Validates a configuration file without starting anything, or reloads the daemon's. */
export const config: Subcommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub === "reload") return reload(rest, io);
  if (sub !== "check") throw usage(`${sub === undefined ? "missing subcommand" : `unknown subcommand "${sub}"`} (known: check, reload)`);
  const p = parseArgs(rest, SPEC.subcommands.check);
  if (p.positionals.length !== 1) throw usage("usage: jobtap config check FILE");
  const path = resolve(io.cwd, p.positionals[0] as string);
  const { errors } = checkConfigFile(path, io.env);
  if (errors.length === 0) {
    io.stdout(`${path}: ok\n`);
    return 0;
  }
  // A TOML syntax error already starts with the file name (path:line:col).
  for (const e of errors) io.stderr(e.message.startsWith(`${path}:`) ? `${e.message}\n` : `${path}: ${e.message}\n`);
  return 1;
};

/** `config reload`: prints what was re-read; a refused reload is an error with its reason. */
const reload: Subcommand = async (argv, io) => {
  const p = parseArgs(argv, SPEC.subcommands.reload);
  if (p.positionals.length > 0) throw usage("usage: jobtap config reload");
  return withDaemon(io, async (client) => {
    const r = await client.call("config.reload", {});
    io.stdout(`${r.source}: reloaded${r.plugins_reapplied ? " (plugin list re-applied)" : ""}\n`);
    return 0;
  });
};

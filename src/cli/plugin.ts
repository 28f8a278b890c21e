/**
 * `jobtap plugin list|load|remove|query`, as `flux jobtap` does:
 * - `list [--all] [--json]`: names in load order; `--all` includes dot-named builtins;
 * - `load [--remove=NAME|GLOB|all] PATH|NAME [KEY=VAL...]`: dotted keys build a nested
 *   conf, values JSON-decoded; `--remove` removes first (as `flux jobtap load --remove`);
 * - `remove NAME|GLOB|all`;
 * - `query NAME`: the plugin's `plugin.query` JSON;
 * - `call NAME METHOD [JSON]`: a plugin service, as the calling user (owner-only unless the
 *   plugin opened it to guests).
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { optFlag, optString, parseArgs, usage } from "./args.js";
import { withDaemon } from "./common.js";
import type { DaemonClient } from "../server/client.js";
import type { PluginView } from "../server/protocol.js";
import { formatTrace, type TraceRecord } from "../plugins/trace.js";
import type { CliIO, Subcommand } from "./io.js";
import { jsonOrString } from "./jobspec.js";

const USAGE = "usage: jobtap plugin list [--all] [--json] | load [-r NAME] [--isolate] PATH|NAME [KEY=VAL...] | remove NAME|GLOB|all | query NAME | call NAME METHOD [JSON] | trace [--plugin NAME] [--topic GLOB] [--job ID] [--json]";

/** `a.b=1 c=x` → `{a: {b: 1}, c: "x"}`; a key set twice, or both leaf and table, is an error. */
export function confFromPairs(pairs: string[]): Record<string, unknown> {
  const conf: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw usage(`plugin load: "${pair}" is not KEY=VALUE`);
    const keys = pair.slice(0, eq).split(".");
    if (keys.some((k) => k === "")) throw usage(`plugin load: "${pair}" has an empty key part`);
    let node = conf;
    for (const k of keys.slice(0, -1)) {
      const next = node[k];
      if (next === undefined) node[k] = {};
      else if (typeof next !== "object" || next === null || Array.isArray(next)) {
        throw usage(`plugin load: "${pair}": "${k}" is already a value, not a table`);
      }
      node = node[k] as Record<string, unknown>;
    }
    const leaf = keys[keys.length - 1] as string;
    if (leaf in node) throw usage(`plugin load: key "${pair.slice(0, eq)}" given twice`);
    node[leaf] = jsonOrString(pair.slice(eq + 1));
  }
  return conf;
}

/**
 * The daemon resolves names in its own search path and cwd, so a file the user points at
 * (a path with "/", or a file that exists here) is made absolute first. Dot-names stay.
 */
function pluginPathArg(arg: string, io: CliIO): string {
  if (arg.startsWith(".") && !arg.includes("/")) return arg;
  if (arg.includes("/") || existsSync(resolve(io.cwd, arg))) return resolve(io.cwd, arg);
  return arg;
}

/** Dispatches the `plugin` subcommands. */
export const plugin: Subcommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  switch (sub) {
    case "list":
      return list(rest, io);
    case "load":
      return load(rest, io);
    case "remove":
      return remove(rest, io);
    case "query":
      return query(rest, io);
    case "call":
      return call(rest, io);
    case "trace":
      return trace(rest, io);
    default:
      throw usage(sub === undefined ? USAGE : `plugin: unknown subcommand "${sub}"\n${USAGE}`);
  }
};

async function list(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, [{ name: "all", short: "a" }, { name: "json" }]);
  if (p.positionals.length > 0) throw usage("usage: jobtap plugin list [--all] [--json]");
  return withDaemon(io, async (client) => {
    const { plugins } = await client.call("plugin.list", { all: optFlag(p, "all") });
    if (optFlag(p, "json")) io.stdout(JSON.stringify(plugins) + "\n");
    else io.stdout(plugins.map((pl) => `${pl.name}${isolation(pl)}\n`).join(""));
    return 0;
  });
}

/** After an isolated plugin's name: `  (isolated)`, or why the restart policy unloaded it. */
function isolation(pl: PluginView): string {
  if (pl.isolated === undefined) return "";
  if (pl.isolated === "failed") return `  (isolated, failed: ${pl.reason ?? "unknown"})`;
  return pl.isolated === "running" ? "  (isolated)" : `  (isolated, ${pl.isolated})`;
}

async function load(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, [{ name: "remove", short: "r", value: true }, { name: "isolate" }]);
  const [target, ...pairs] = p.positionals;
  if (target === undefined) throw usage("usage: jobtap plugin load [--remove=NAME|GLOB|all] [--isolate] PATH|NAME [KEY=VAL...]");
  const conf = confFromPairs(pairs);
  const remove = optString(p, "remove");
  return withDaemon(io, async (client) => {
    const req = {
      path: pluginPathArg(target, io),
      ...(pairs.length > 0 ? { conf } : {}),
      ...(remove === undefined ? {} : { remove }),
      ...(optFlag(p, "isolate") ? { isolate: true } : {}),
    };
    await client.call("plugin.load", req);
    return 0;
  });
}

async function remove(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, []);
  if (p.positionals.length !== 1) throw usage("usage: jobtap plugin remove NAME|GLOB|all");
  return withDaemon(io, async (client) => {
    await client.call("plugin.remove", { name: p.positionals[0] as string });
    return 0;
  });
}

async function query(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, []);
  if (p.positionals.length !== 1) throw usage("usage: jobtap plugin query NAME");
  return withDaemon(io, async (client) => {
    const out = await client.call("plugin.query", { name: p.positionals[0] as string });
    io.stdout(JSON.stringify(out, null, 2) + "\n");
    return 0;
  });
}

/** Prints the daemon's plugin trace until interrupted (or the daemon goes away). */
async function trace(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, [{ name: "plugin", value: true }, { name: "topic", value: true }, { name: "job", value: true }, { name: "json" }]);
  if (p.positionals.length > 0) throw usage("usage: jobtap plugin trace [--plugin NAME] [--topic GLOB] [--job ID] [--json]");
  const json = optFlag(p, "json");
  const req = {
    ...(optString(p, "plugin") === undefined ? {} : { plugin: optString(p, "plugin") as string }),
    ...(optString(p, "topic") === undefined ? {} : { topic: optString(p, "topic") as string }),
    ...(optString(p, "job") === undefined ? {} : { job: optString(p, "job") as string }),
  };
  return withDaemon(io, async (client) => {
    await client.stream("plugin.trace", req, (line) => {
      const r = line as TraceRecord | { kind: "start" };
      if (r.kind === "start") return;
      io.stdout((json ? JSON.stringify(r) : formatTrace(r)) + "\n");
    });
    return 0;
  });
}

async function call(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, []);
  const [name, method, json, ...extra] = p.positionals;
  if (name === undefined || method === undefined || extra.length > 0) throw usage("usage: jobtap plugin call NAME METHOD [JSON]");
  const payload = json === undefined ? {} : parseJsonArg(json, "plugin call: JSON payload");
  return withDaemon(io, async (client) => {
    const out = await callService(client, name, method, payload);
    io.stdout(JSON.stringify(out ?? {}, null, 2) + "\n");
    return 0;
  });
}

/** Parses a JSON argument; a USAGE error names `what` and the parser's complaint. */
export function parseJsonArg(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw usage(`${what} is not JSON: ${(e as Error).message}`);
  }
}

/** Calls `<plugin>.<method>` on the daemon as the current user. */
export function callService(client: DaemonClient, plugin: string, method: string, payload: unknown): Promise<unknown> {
  return client.call("plugin.call", { plugin, method, payload });
}

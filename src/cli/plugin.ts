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
import { optFlag, optString, parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import type { DaemonClient } from "../server/client.js";
import type { PluginView } from "../server/protocol.js";
import { formatTrace, type TraceRecord } from "../plugins/trace.js";
import type { CliIO, Subcommand } from "./io.js";
import { jsonOrString } from "./jobspec.js";

const USAGE = "usage: jobtap plugin list [--all] [--json] | load [-r NAME] [--isolate] PATH|NAME [KEY=VAL...] | remove NAME|GLOB|all | query NAME | call NAME METHOD [JSON] | trace [--plugin NAME] [--topic GLOB] [--job ID] [--json]";

/** The option tables of `jobtap plugin`'s subcommands (parser and --help). */
export const SPEC = {
  subcommands: {
    list: {
      usage: ["plugin list [--all] [--json]"],
      summary: "the loaded plugins' names in load order",
      options: [
        { name: "all", short: "a", help: "include the dot-named builtins" },
        { name: "json", help: "one JSON array of plugin records" },
      ],
    },
    load: {
      usage: ["plugin load [-r NAME|GLOB|all] [--isolate] PATH|NAME [KEY=VAL...]"],
      summary: "loads a plugin; KEY=VAL pairs (dotted keys nest, values JSON where they parse) are its conf (owner only)",
      options: [
        { name: "remove", short: "r", value: "NAME|GLOB|all", help: "first remove these plugins, as flux jobtap load --remove" },
        { name: "isolate", help: "run the plugin in its own worker thread (docs/plugins.md)" },
      ],
    },
    remove: { usage: ["plugin remove NAME|GLOB|all"], summary: "removes plugins (owner only)", options: [] },
    query: { usage: ["plugin query NAME"], summary: "prints the plugin's plugin.query answer as JSON", options: [] },
    call: { usage: ["plugin call NAME METHOD [JSON]"], summary: "calls a plugin's service as you (owner only unless the plugin opened it)", options: [] },
    trace: {
      usage: ["plugin trace [--plugin NAME] [--topic GLOB] [--job ID] [--json]"],
      summary: "prints the daemon's plugin calls as they happen, until interrupted",
      options: [
        { name: "plugin", value: "NAME", help: "only this plugin's calls" },
        { name: "topic", value: "GLOB", help: "only topics matching GLOB (job.state.*)" },
        { name: "job", value: "ID", help: "only calls about this job" },
        { name: "json", help: "one JSON trace record per line" },
      ],
    },
  } satisfies Record<string, CommandSpec>,
};

/** `a.b=1 c=x` → `{a: {b: 1}, c: "x"}`; a key set twice, or both leaf and table, is an error. */
export function confFromPairs(pairs: string[]): Record<string, unknown> {
  const conf: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw usage(`"${pair}" is not KEY=VALUE`);
    const keys = pair.slice(0, eq).split(".");
    if (keys.some((k) => k === "")) throw usage(`"${pair}" has an empty key part`);
    let node = conf;
    for (const k of keys.slice(0, -1)) {
      const next = node[k];
      if (next === undefined) node[k] = {};
      else if (typeof next !== "object" || next === null || Array.isArray(next)) {
        throw usage(`"${pair}": "${k}" is already a value, not a table`);
      }
      node = node[k] as Record<string, unknown>;
    }
    const leaf = keys[keys.length - 1] as string;
    if (leaf in node) throw usage(`key "${pair.slice(0, eq)}" given twice`);
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
      throw usage(sub === undefined ? USAGE : `unknown subcommand "${sub}"\n${USAGE}`);
  }
};

async function list(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, SPEC.subcommands.list);
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
  const p = parseArgs(argv, SPEC.subcommands.load);
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
  const p = parseArgs(argv, SPEC.subcommands.remove);
  if (p.positionals.length !== 1) throw usage("usage: jobtap plugin remove NAME|GLOB|all");
  return withDaemon(io, async (client) => {
    await client.call("plugin.remove", { name: p.positionals[0] as string });
    return 0;
  });
}

async function query(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, SPEC.subcommands.query);
  if (p.positionals.length !== 1) throw usage("usage: jobtap plugin query NAME");
  return withDaemon(io, async (client) => {
    const out = await client.call("plugin.query", { name: p.positionals[0] as string });
    io.stdout(JSON.stringify(out, null, 2) + "\n");
    return 0;
  });
}

/** Prints the daemon's plugin trace until interrupted (or the daemon goes away). */
async function trace(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, SPEC.subcommands.trace);
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
  const p = parseArgs(argv, SPEC.subcommands.call);
  const [name, method, json, ...extra] = p.positionals;
  if (name === undefined || method === undefined || extra.length > 0) throw usage("usage: jobtap plugin call NAME METHOD [JSON]");
  const payload = json === undefined ? {} : parseJsonArg(json, "the JSON payload");
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

/**
 * `jobtap token create|list|revoke`: bearer tokens for the daemon's HTTP listener
 * (docs/api.md). Done over the Unix socket, so the daemon knows who asks from the uid proof:
 * a user manages its own tokens, the instance owner anyone's. `create` prints the token
 * once; the daemon keeps only its hash.
 */
import { parseFSD } from "../manager/base/fsd.js";
import { loadUserTable } from "../manager/base/users.js";
import type { TokenView } from "../server/http/tokens.js";
import { optFlag, optString, parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import type { Subcommand } from "./io.js";

const USAGE = "usage: jobtap token create [--user NAME] [--scope read|submit|admin] [--ttl DURATION] | list [--json] | revoke ID";

/** The option tables of `jobtap token`'s subcommands (parser and --help). */
export const SPEC = {
  subcommands: {
    create: {
      usage: ["token create [--user NAME] [--scope read|submit|admin] [--ttl DURATION]"],
      summary: "prints a new bearer token once (the daemon stores only its hash)",
      options: [
        { name: "user", short: "u", value: "NAME", help: "whose token (default: yours; another user's: owner only)" },
        { name: "scope", short: "s", value: "SCOPE", help: "read (GET only), submit (default: read, submit and change own jobs) or admin (plugins, queues)" },
        { name: "ttl", short: "t", value: "DURATION", help: 'how long it is valid, such as "30d" or "12h" (default: until revoked)' },
      ],
    },
    list: { usage: ["token list [--json]"], summary: "your tokens (the owner's: everyone's), never their secrets", options: [{ name: "json", help: "as JSON" }] },
    revoke: { usage: ["token revoke ID"], summary: "revokes a token: requests with it get 401 from now on", options: [] },
  } satisfies Record<string, CommandSpec>,
};

/** Dispatches the `token` subcommands. */
export const token: Subcommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub !== "create" && sub !== "list" && sub !== "revoke") throw usage(sub === undefined ? USAGE : `unknown subcommand "${sub}"\n${USAGE}`);
  const p = parseArgs(rest, SPEC.subcommands[sub]);
  if (sub === "revoke" ? p.positionals.length !== 1 : p.positionals.length !== 0) throw usage(USAGE);
  const users = loadUserTable();
  return withDaemon(io, async (client) => {
    if (sub === "create") {
      const name = optString(p, "user");
      const userid = name === undefined ? undefined : users.uid(name);
      if (name !== undefined && userid === undefined) throw usage(`--user: no such user "${name}"`);
      const scope = optString(p, "scope");
      if (scope !== undefined && scope !== "read" && scope !== "submit" && scope !== "admin") throw usage(`--scope must be read, submit or admin, got "${scope}"`);
      const ttlText = optString(p, "ttl");
      const ttl = ttlText === undefined ? undefined : Math.round(parseFSD(ttlText, "--ttl"));
      const r = await client.call("token.create", { ...(userid === undefined ? {} : { userid }), ...(scope === undefined ? {} : { scope }), ...(ttl === undefined ? {} : { ttl }) });
      io.stdout(`${r.token}\n`);
    } else if (sub === "list") {
      const { tokens } = await client.call("token.list", {});
      io.stdout(optFlag(p, "json") ? JSON.stringify(tokens, null, 2) + "\n" : table(tokens, users.name));
    } else {
      const { info } = await client.call("token.revoke", { id: p.positionals[0] as string });
      io.stdout(`${info.id}: revoked\n`);
    }
    return 0;
  });
};

function table(tokens: TokenView[], name: (uid: number) => string): string {
  const when = (t: number | undefined) => (t === undefined ? "-" : new Date(t * 1000).toISOString().replace(/\.\d+Z$/, "Z"));
  const rows = tokens.map((t) => [t.id, name(t.userid), t.kind ?? "token", t.scope, when(t.created), when(t.expires), t.revoked === undefined ? (t.expires !== undefined && t.expires * 1000 <= Date.now() ? "expired" : "valid") : "revoked"]);
  const all = [["ID", "USER", "KIND", "SCOPE", "CREATED", "EXPIRES", "STATUS"], ...rows];
  const widths = all[0]!.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  return all.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")).join("\n") + "\n";
}

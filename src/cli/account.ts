/**
 * `jobtap account ...` over the `accounting` plugin's services (docs/accounting.md), as
 * `jobtap queue` is over `.update-queue`'s: the changes are owner-only (the daemon refuses
 * others), `show`, `usage` and `export` are open to every user. USER is a name or a uid.
 * `--json` prints the service's answer as it is.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import TOML from "@iarna/toml";
import { ErrorCode, JobtapError } from "../errors.js";
import { optFlag, optString, parseArgs, usage, type CommandSpec } from "./args.js";
import { withDaemon } from "./common.js";
import type { CliIO, Subcommand } from "./io.js";
import { callService } from "./plugin.js";
import { atLine, exportCsv, importCsv, type CsvImport } from "./account-csv.js";
import { loadUserTable, type UserTable } from "../manager/base/users.js";

export const ACCOUNT_USAGE = [
  "jobtap account add-bank NAME [--parent BANK] [--shares N] [LIMITS]      (owner only)",
  "jobtap account edit-bank NAME [--parent BANK] [--shares N] [LIMITS]     (owner only)",
  "jobtap account delete-bank NAME                                         (owner only)",
  "jobtap account add-user USER --bank BANK [--shares N] [LIMITS]          (owner only)",
  "jobtap account edit-user USER [--bank BANK] [--shares N] [--default] [LIMITS]  (owner only)",
  "jobtap account delete-user USER [--bank BANK]                           (owner only)",
  "jobtap account show | usage USER [--json]",
  "jobtap account export [--format toml|csv] [--json]",
  "jobtap account import FILE.toml|FILE.csv [--format toml|csv]            (owner only)",
  "jobtap account recompute                                                (owner only)",
  "LIMITS: --max-running-jobs N --max-active-jobs N --max-cores N (-1: no limit)",
].join("\n");

const PLUGIN = "accounting";
const JSON_OPT = { name: "json", help: "print the service's answer as JSON" };
const LIMIT_OPTS = [
  { name: "max-running-jobs", value: "N", help: "limit: running jobs at once (-1: no limit); over it a job waits in DEPEND" },
  { name: "max-active-jobs", value: "N", help: "limit: active jobs (-1: no limit); over it a submission is rejected" },
  { name: "max-cores", value: "N", help: "limit: cores in use at once (-1: no limit); over it a job waits in DEPEND" },
];
/** The limit options' names, as the service payload keys them. */
const LIMITS = LIMIT_OPTS.map((o) => o.name);
const SHARES = { name: "shares", value: "N", help: "shares (a positive integer)" };
const FORMAT = { name: "format", value: "FORMAT", help: "toml or csv (import: by default from the file's extension, .csv or else toml)" };
const PARENT = { name: "parent", value: "BANK", help: "the bank's parent in the bank tree" };
const sub = (usageLine: string, summary: string, options: CommandSpec["options"]): CommandSpec => ({
  usage: [usageLine],
  summary,
  options: [...options, JSON_OPT],
});

/** The option tables of `jobtap account`'s subcommands (parser and --help). */
export const SPEC = {
  subcommands: {
    "add-bank": sub("account add-bank NAME [--parent BANK] [--shares N] [LIMITS]", "adds a bank (owner only)", [PARENT, SHARES, ...LIMIT_OPTS]),
    "edit-bank": sub("account edit-bank NAME [--parent BANK] [--shares N] [LIMITS]", "changes a bank's parent, shares or limits (owner only)", [PARENT, SHARES, ...LIMIT_OPTS]),
    "delete-bank": sub("account delete-bank NAME", "deletes an empty bank (owner only)", []),
    "add-user": sub("account add-user USER --bank BANK [--shares N] [LIMITS]", "adds USER to BANK (owner only)", [
      { name: "bank", value: "BANK", help: "the bank the user is added to (required)" },
      SHARES,
      ...LIMIT_OPTS,
    ]),
    "edit-user": sub("account edit-user USER [--bank BANK] [--shares N] [--default] [LIMITS]", "changes a user's association (owner only)", [
      { name: "bank", value: "BANK", help: "which of the user's banks (default: the user's default bank)" },
      SHARES,
      { name: "default", help: "make BANK the user's default bank" },
      ...LIMIT_OPTS,
    ]),
    "delete-user": sub("account delete-user USER [--bank BANK]", "removes a user's association (owner only)", [
      { name: "bank", value: "BANK", help: "which of the user's banks (default: the user's default bank)" },
    ]),
    show: sub("account show", "the bank tree with shares, usage, fair-share factors, counts and limits", []),
    usage: sub("account usage USER", "a user's associations and decayed usage", []),
    export: sub("account export [--format toml|csv]", "prints the associations as TOML or CSV (for import)", [FORMAT]),
    import: sub("account import [--format toml|csv] FILE", "replaces the associations with those of FILE (owner only)", [FORMAT]),
    recompute: sub("account recompute", "recomputes the fair-share factors and reprioritizes now (owner only)", []),
  } satisfies Record<string, CommandSpec>,
};

type Req = Record<string, unknown>;

/** An integer option, named in the error. */
function intOpt(p: ReturnType<typeof parseArgs>, name: string): number | undefined {
  const v = optString(p, name);
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v)) throw usage(`--${name}: "${v}" is not an integer`);
  return Number(v);
}

/** The service payload of a change: name/uid, parent, bank, shares, limits, default. */
function changeOf(p: ReturnType<typeof parseArgs>, users: UserTable, sub: string, target: string): Req {
  const limits: Req = {};
  for (const l of LIMITS) if (intOpt(p, l) !== undefined) limits[l] = intOpt(p, l);
  const out: Req = {};
  if (sub.endsWith("-bank")) out.name = target;
  else {
    const uid = users.uid(target);
    if (uid === undefined) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `unknown user "${target}" (not in /etc/passwd, not a uid)`);
    out.uid = uid;
  }
  for (const k of ["parent", "bank"]) if (optString(p, k) !== undefined) out[k] = optString(p, k);
  if (intOpt(p, "shares") !== undefined) out.shares = intOpt(p, "shares");
  if (optFlag(p, "default")) out.default = true;
  if (Object.keys(limits).length) out.limits = limits;
  return out;
}

const CHANGES = ["add-bank", "edit-bank", "delete-bank", "add-user", "edit-user", "delete-user"];

/** Dispatches the `account` subcommands. */
export const account: Subcommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub === undefined) throw usage(`missing subcommand\nusage:\n${ACCOUNT_USAGE}`);
  if (!Object.hasOwn(SPEC.subcommands, sub)) throw usage(`unknown subcommand "${sub}"\nusage:\n${ACCOUNT_USAGE}`);
  const p = parseArgs(rest, SPEC.subcommands[sub as keyof typeof SPEC.subcommands]);
  const json = optFlag(p, "json");
  const [arg, ...extra] = p.positionals;
  if (extra.length > 0) throw usage(`${sub}: unexpected argument "${extra[0]}"`);
  const users = loadUserTable();
  const needArg = CHANGES.includes(sub) || sub === "usage" || sub === "import";
  if (needArg && arg === undefined) throw usage(`${sub}: missing ${sub.endsWith("-bank") ? "NAME" : sub === "import" ? "FILE" : "USER"}`);
  if (!needArg && arg !== undefined) throw usage(`${sub}: unexpected argument "${arg}"`);
  if (sub === "add-user" && optString(p, "bank") === undefined) throw usage("add-user: --bank BANK is required");
  const format = formatOf(p, sub, arg, json);
  const path = sub === "import" ? resolve(io.cwd, arg as string) : "";
  const csv: CsvImport | undefined = sub === "import" && format === "csv" ? importCsv(readText(path), arg as string, users) : undefined;
  const payload = CHANGES.includes(sub) ? changeOf(p, users, sub, arg as string)
    : sub === "usage" ? { uid: changeOf(p, users, sub, arg as string).uid }
    : sub === "import" ? (csv?.payload ?? importFile(path))
    : {};
  return withDaemon(io, async (client) => {
    let out: Req;
    try {
      out = (await callService(client, PLUGIN, sub, payload)) as Req;
    } catch (e) {
      throw csv ? atLine(e, arg as string, csv) : e;
    }
    if (json) io.stdout(JSON.stringify(out, null, 2) + "\n");
    else if (sub === "export" && format === "csv") io.stdout(exportCsv(out, users));
    else print(io, sub, out, users);
    return 0;
  });
};

/** `--format` of export and import; import's default comes from the file's extension. */
function formatOf(p: ReturnType<typeof parseArgs>, sub: string, arg: string | undefined, json: boolean): "toml" | "csv" {
  const f = optString(p, "format");
  if (f !== undefined && sub !== "export" && sub !== "import") throw usage(`${sub}: --format applies to export and import only`);
  if (f !== undefined && f !== "toml" && f !== "csv") throw usage(`--format: must be toml or csv, got "${f}"`);
  if (f !== undefined && json) throw usage(`${sub}: --format and --json do not go together`);
  return (f ?? (sub === "import" && arg?.toLowerCase().endsWith(".csv") ? "csv" : "toml")) as "toml" | "csv";
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `${path}: ${(e as Error).message}`);
  }
}

/** Reads an export (TOML): `[[banks]]` and `[[users]]` tables; users by name or uid. */
function importFile(path: string): Req {
  const text = readText(path);
  let doc: Req;
  try {
    doc = TOML.parse(text) as Req;
  } catch (e) {
    throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `${path}: ${(e as Error).message.split("\n")[0]}`);
  }
  const users = loadUserTable();
  const list = Array.isArray(doc.users) ? (doc.users as Req[]) : [];
  return {
    banks: doc.banks ?? [],
    users: list.map((u, i) => {
      const uid = typeof u.user === "string" ? users.uid(u.user) : u.uid;
      if (uid === undefined) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `${path}: users[${i}].user: unknown user "${String(u.user)}"`);
      const { user: _, ...rest } = u;
      return { ...rest, uid };
    }),
  };
}

function print(io: CliIO, sub: string, out: Req, users: UserTable): void {
  if (sub === "show") io.stdout(showTable(out.rows as Req[], users));
  else if (sub === "usage") io.stdout(usageTable(out, users));
  else if (sub === "export") io.stdout(exportToml(out, users));
}

const num = (v: unknown, digits = 0) => (typeof v === "number" ? v.toFixed(digits) : "");
const limitText = (l: Req) => LIMITS.map((k, i) => (l[["maxRunningJobs", "maxActiveJobs", "maxCores"][i]!] === undefined ? "" : `${k}=${l[["maxRunningJobs", "maxActiveJobs", "maxCores"][i]!]}`)).filter(Boolean).join(",") || "-";

/** The tree, like `sshare -l`: indented names, shares, normalized shares, usage, factor, counts. */
function showTable(rows: Req[], users: UserTable): string {
  const head = ["ACCOUNT", "SHARES", "NORM", "USAGE", "FAIRSHARE", "RUN", "ACTIVE", "LIMITS"];
  const lines = rows.map((r) => [
    "  ".repeat(r.depth as number) + (r.type === "bank" ? String(r.name) : `${users.name(r.uid as number)}${r.default ? "" : " (non-default)"}`),
    String(r.shares),
    num(r.normShares, 4),
    num(r.usage),
    r.type === "user" ? num(r.fairShare, 4) : "",
    String(r.running),
    String(r.active),
    limitText(r.limits as Req),
  ]);
  if (lines.length === 0) return "no banks (add the root bank with: jobtap account add-bank NAME)\n";
  const w = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  return [head, ...lines].map((l) => l.map((c, i) => (i === 0 || i === l.length - 1 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join("  ").trimEnd()).join("\n") + "\n";
}

function usageTable(out: Req, users: UserTable): string {
  const lines = [`user ${users.name(out.uid as number)} (uid ${String(out.uid)})`];
  for (const a of out.associations as Req[]) {
    lines.push(`  bank ${String(a.bank)}${a.default ? " (default)" : ""}: shares ${String(a.shares)}, core-seconds ${num(a.coreSeconds)}, gpu-seconds ${num(a.gpuSeconds)}, fair-share ${num(a.fairShare, 4)}, running ${String(a.running)} (${String(a.cores)} cores), active ${String(a.active)}, limits ${limitText(a.limits as Req)}`);
  }
  return lines.join("\n") + "\n";
}

/** The export as TOML that `import` reads back: users by name where one is known. */
function exportToml(out: Req, users: UserTable): string {
  const named = (out.users as Req[]).map(({ uid, ...rest }) => {
    const name = users.name(uid as number);
    return name === String(uid) ? { uid, ...rest } : { user: name, ...rest };
  });
  return TOML.stringify({ banks: out.banks, users: named } as never);
}

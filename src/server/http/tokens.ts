/**
 * Bearer tokens for the HTTP listener: `jobtap token create` prints a token once; the
 * daemon keeps only its SHA-256 (in `<statedir>/tokens.json`, mode 0600, like the store),
 * so a leaked statedir backup cannot be replayed as a token. A token names its user (the
 * requester of every call it makes), a scope, and optionally an expiry.
 *
 * A token reads `jtk_<id>_<secret>`: the id (public, shown by `token list`, used by
 * `token revoke`) finds the record, then the secret's hash is compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ErrorCode, JobtapError } from "../../errors.js";

/** What a token may do on top of its user's rights (docs/api.md, "Scopes"). */
export const SCOPES = ["read", "submit", "admin"] as const;
export type Scope = (typeof SCOPES)[number];

/** A token as `token list` shows it (never the secret nor its hash). */
export interface TokenView {
  id: string;
  userid: number;
  scope: Scope;
  /** Seconds since the epoch. */
  created: number;
  /** Seconds since the epoch; absent: never expires. */
  expires?: number;
  /** Seconds since the epoch, once revoked. */
  revoked?: number;
  /** `session`: made by a dashboard login (`jobtap web`); absent: `token create`'s. */
  kind?: "session";
}

interface TokenRecord extends TokenView {
  sha256: string;
}

/** The tokens of one daemon, persisted in its statedir. */
export interface TokenStore {
  /** Creates a token; the secret is in the returned text only. */
  create(userid: number, scope: Scope, ttlSeconds: number | undefined, kind?: "session"): { token: string; view: TokenView };
  /** Every token (of `userid` only, when given), newest last. */
  list(userid?: number): TokenView[];
  /** Marks a token revoked; throws NOT_FOUND for an unknown id. */
  revoke(id: string): TokenView;
  /** The live record a bearer text stands for, or why not (for the 401's message). */
  check(bearer: string): { token: TokenView } | { refused: string };
}

const TOKEN_PATTERN = /^jtk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const FILE = "tokens.json";

/** Opens (or starts) the token file in `statedir`; `now` gives seconds since the epoch. */
export function openTokenStore(statedir: string, now: () => number = () => Date.now() / 1000): TokenStore {
  const path = join(statedir, FILE);
  const records = new Map<string, TokenRecord>(load(path).map((r) => [r.id, r]));
  const save = () => {
    const tmp = `${path}.tmp`;
    writeFileSync(tmp, JSON.stringify([...records.values()], null, 1) + "\n", { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, path);
  };
  return {
    create(userid, scope, ttlSeconds, kind) {
      const id = randomBytes(8).toString("hex");
      const secret = randomBytes(32).toString("base64url");
      const token = `jtk_${id}_${secret}`;
      const created = Math.floor(now());
      const rec: TokenRecord = { id, userid, scope, created, sha256: hash(token), ...(ttlSeconds === undefined ? {} : { expires: created + ttlSeconds }), ...(kind === undefined ? {} : { kind }) };
      records.set(id, rec);
      save();
      return { token, view: viewOf(rec) };
    },
    list: (userid) => [...records.values()].filter((r) => userid === undefined || r.userid === userid).map(viewOf),
    revoke(id) {
      const rec = records.get(id);
      if (rec === undefined) throw new JobtapError(ErrorCode.NOT_FOUND, `token revoke: no token with id ${JSON.stringify(id)} (\`jobtap token list\` shows them)`);
      rec.revoked ??= Math.floor(now());
      save();
      return viewOf(rec);
    },
    check(bearer) {
      const m = TOKEN_PATTERN.exec(bearer);
      const rec = m ? records.get(m[1] as string) : undefined;
      if (rec === undefined || !sameHash(rec.sha256, hash(bearer))) return { refused: "unknown bearer token" };
      if (rec.revoked !== undefined) return { refused: `token ${rec.id} was revoked` };
      if (rec.expires !== undefined && now() >= rec.expires) return { refused: `token ${rec.id} expired at ${new Date(rec.expires * 1000).toISOString()}` };
      return { token: viewOf(rec) };
    },
  };
}

function load(path: string): TokenRecord[] {
  if (!existsSync(path)) return [];
  try {
    const v = JSON.parse(readFileSync(path, "utf8")) as unknown;
    if (!Array.isArray(v)) throw new Error("not a JSON array");
    return v as TokenRecord[];
  } catch (e) {
    // Refuse to start rather than silently forget (and so unrevoke) tokens.
    throw new JobtapError(ErrorCode.CONFIG, `${path}: unreadable token file (${(e as Error).message}); fix or remove it`, { path });
  }
}

function hash(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

function viewOf(r: TokenRecord): TokenView {
  const { sha256: _, ...view } = r;
  return view;
}

/** True if `s` is a scope name. */
export function isScope(s: unknown): s is Scope {
  return typeof s === "string" && (SCOPES as readonly string[]).includes(s);
}

/** Whether a token of scope `has` may make a call that needs `needs`. */
export function scopeAllows(has: Scope, needs: Scope): boolean {
  return SCOPES.indexOf(has) >= SCOPES.indexOf(needs);
}

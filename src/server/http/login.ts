/**
 * One-time dashboard login codes (`jobtap web`): the daemon hands one to a user proven over
 * the Unix socket, the browser trades it once at `POST /api/v1/login` for a session token.
 * Codes live in memory only (a restart forgets them: `jobtap web` again), are 128 random
 * bits, last 60 s and are kept as their SHA-256, so a heap dump shows no usable code.
 */
import { createHash, randomBytes } from "node:crypto";

/** How long a code may wait to be used. */
export const CODE_TTL_MS = 60_000;
/** Codes waiting at most: more than any real use, few enough that a loop cannot eat memory. */
const MAX_CODES = 1000;

/** The codes of one daemon. */
export interface LoginCodes {
  /** A fresh code for `userid` and when it expires (ms since the epoch). */
  issue(userid: number): { code: string; expires: number };
  /** The user a live code was for (and the code is spent), or undefined. */
  redeem(code: string): number | undefined;
}

/** A code store; `now` gives milliseconds since the epoch. */
export function loginCodes(now: () => number = Date.now): LoginCodes {
  const codes = new Map<string, { userid: number; expires: number }>();
  const prune = () => {
    const t = now();
    for (const [k, v] of codes) if (v.expires <= t) codes.delete(k);
    // Oldest first: Map keeps insertion order.
    while (codes.size >= MAX_CODES) codes.delete(codes.keys().next().value as string);
  };
  return {
    issue(userid) {
      prune();
      const code = randomBytes(16).toString("base64url");
      const expires = now() + CODE_TTL_MS;
      codes.set(hash(code), { userid, expires });
      return { code, expires };
    },
    redeem(code) {
      if (typeof code !== "string" || code.length > 64) return undefined;
      const key = hash(code);
      const entry = codes.get(key);
      // Spent whether or not it was still live: a code is tried once.
      codes.delete(key);
      if (entry === undefined || entry.expires <= now()) return undefined;
      return entry.userid;
    },
  };
}

function hash(code: string): string {
  return createHash("sha256").update(code).digest("hex");
}

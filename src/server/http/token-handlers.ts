/**
 * The `token.*` methods (`jobtap token create|list|revoke`). They are served on the Unix
 * socket only, so the uid proof (auth.ts) says who asks: a user creates, lists and revokes
 * its own tokens; the instance owner anyone's.
 */
import { ErrorCode, JobtapError } from "../../errors.js";
import type { Caller } from "../auth.js";
import type { CallContext, Handler } from "../server.js";
import { isScope, type TokenStore } from "./tokens.js";

/** The longest a token may live: ten years, in seconds. */
const MAX_TTL = 10 * 365 * 86400;

/** The three token handlers over `tokens`. */
export function tokenHandlers(tokens: TokenStore): { "token.create": Handler<"token.create">; "token.list": Handler<"token.list">; "token.revoke": Handler<"token.revoke"> } {
  return {
    "token.create": (req, ctx) => {
      const c = caller(ctx);
      const userid = req.userid ?? c.userid;
      if (!Number.isSafeInteger(userid) || userid < 0) bad("userid must be a uid (an integer >= 0)");
      if (userid !== c.userid && !c.owner) denied(c, `token create: only the instance owner may create tokens for another user (you are uid ${c.userid}, asked for uid ${userid})`);
      const scope = req.scope ?? "submit";
      if (!isScope(scope)) bad(`scope must be "read", "submit" or "admin", got ${JSON.stringify(scope)}`);
      const ttl = req.ttl;
      if (ttl !== undefined && (!Number.isSafeInteger(ttl) || ttl < 1 || ttl > MAX_TTL)) bad(`ttl must be 1..${MAX_TTL} seconds`);
      const { token, view } = tokens.create(userid, scope, ttl);
      return { token, info: view };
    },
    "token.list": (_req, ctx) => {
      const c = caller(ctx);
      return { tokens: tokens.list(c.owner ? undefined : c.userid) };
    },
    "token.revoke": (req, ctx) => {
      const c = caller(ctx);
      if (typeof req.id !== "string") bad("id must be a string");
      const mine = tokens.list(c.owner ? undefined : c.userid).some((t) => t.id === req.id);
      // Someone else's token id reads as unknown: ids are not for probing.
      if (!mine) throw new JobtapError(ErrorCode.NOT_FOUND, `token revoke: no token of yours with id ${JSON.stringify(req.id)} (\`jobtap token list\` shows them)`);
      return { info: tokens.revoke(req.id) };
    },
  };
}

function caller(ctx: CallContext): Caller {
  if (ctx.caller === undefined) throw new JobtapError(ErrorCode.NOT_AUTHENTICATED, "not authenticated");
  return ctx.caller;
}

function bad(why: string): never {
  throw new JobtapError(ErrorCode.PROTOCOL, `token create: ${why}`);
}

function denied(c: Caller, message: string): never {
  throw new JobtapError(ErrorCode.PERMISSION_DENIED, message, { userid: c.userid });
}

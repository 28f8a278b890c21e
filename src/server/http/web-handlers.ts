/**
 * The dashboard's login methods. `web.code` is asked over the Unix socket (`jobtap web`),
 * so the uid proof says whose code it is; `web.login` is the one route the HTTP listener
 * serves without a token (the code is the credential); `web.whoami` tells the page who its
 * token stands for. Session tokens are ordinary hashed tokens of kind `session`.
 */
import { ErrorCode, JobtapError } from "../../errors.js";
import { loadUserTable } from "../../manager/base/users.js";
import type { Caller } from "../auth.js";
import type { CallContext, Handler } from "../server.js";
import type { LiveData } from "./live.js";
import type { LoginCodes } from "./login.js";
import type { TokenStore } from "./tokens.js";

/** A session's lifetime: a working day. */
export const SESSION_TTL_S = 12 * 3600;

/** What the login handlers need from the daemon. */
export interface WebDeps {
  codes: LoginCodes;
  tokens: TokenStore;
  owner: number;
  /** The dashboard's base URL, or undefined when `[daemon] http` is off. */
  url(): string | undefined;
  /** The live feed and statistics (kept only with the HTTP listener). */
  live(): LiveData | undefined;
}

type WebHandlers = { [M in "web.code" | "web.login" | "web.whoami" | "web.events" | "web.stats"]: Handler<M> };

/** The dashboard's handlers over `d`. */
export function webHandlers(d: WebDeps): WebHandlers {
  return {
    "web.code": (_req, ctx) => {
      const c = caller(ctx);
      const url = d.url();
      if (url === undefined) throw new JobtapError(ErrorCode.CONFIG, "web: the daemon has no HTTP listener: set [daemon] http (such as \"127.0.0.1:9311\") and restart it (docs/api.md)");
      const { code, expires } = d.codes.issue(c.userid);
      return { url: `${url}/#login=${code}`, expires: expires / 1000 };
    },
    "web.login": (req) => {
      const userid = d.codes.redeem(req.code);
      if (userid === undefined) throw new JobtapError(ErrorCode.NOT_AUTHENTICATED, "login: this code is unknown, used or expired (codes work once, for 60 s: run `jobtap web` again)");
      const owner = userid === d.owner;
      // The owner's session may do what the owner may; anyone else's what its user may.
      const { token, view } = d.tokens.create(userid, owner ? "admin" : "submit", SESSION_TTL_S, "session");
      return { token, user: userName(userid), userid, owner, scope: view.scope, expires: view.expires as number };
    },
    "web.whoami": (_req, ctx) => {
      const c = caller(ctx);
      return { user: userName(c.userid), userid: c.userid, owner: c.owner, scope: c.scope ?? "admin" };
    },
    "web.events": async (req, ctx) => {
      caller(ctx);
      if (req.since !== undefined && typeof req.since !== "string") throw new JobtapError(ErrorCode.PROTOCOL, "events: since must be a cursor string");
      const stop = live(d).feed.follow(req.since, (m) => ctx.writeLine(m));
      try {
        await new Promise<void>((resolve) => {
          if (ctx.signal.aborted) resolve();
          ctx.signal.addEventListener("abort", () => resolve(), { once: true });
        });
      } finally {
        stop();
      }
    },
    "web.stats": (_req, ctx) => {
      caller(ctx);
      return live(d).stats();
    },
  };
}

function live(d: WebDeps): LiveData {
  const l = d.live();
  if (l === undefined) throw new JobtapError(ErrorCode.CONFIG, "the live feed and statistics are kept only with the HTTP listener: set [daemon] http");
  return l;
}

function userName(uid: number): string {
  return loadUserTable().name(uid);
}

function caller(ctx: CallContext): Caller {
  if (ctx.caller === undefined) throw new JobtapError(ErrorCode.NOT_AUTHENTICATED, "not authenticated");
  return ctx.caller;
}

/**
 * One request on the HTTP listener: `/metrics`, `/api/v1/openapi.json`, or a REST route
 * (routes.ts). Order: path checked → bearer token → rate → scope → body → the service
 * handler with the token's user as the caller (so the socket's owner/guest rules apply
 * unchanged). Every refusal is JSON `{error: {code, message}}` and is decided from the
 * headers before the body is read.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ErrorCode, JobtapError, type JobtapErrorData } from "../../errors.js";
import type { Caller } from "../auth.js";
import { parseParams, readBody } from "../body.js";
import { HTTP_STATUS, toErrorData, type CallContext, type Handler, type Handlers } from "../server.js";
import type { RateLimiter } from "./ratelimit.js";
import { matchRoute, type Route } from "./routes.js";
import type { StaticSite } from "./static.js";
import { scopeAllows, type Scope, type TokenStore } from "./tokens.js";

/** The REST prefix. */
export const REST_PREFIX = "/api/v1";

/** What the request handler needs from the listener. */
export interface RestDeps {
  handlers: Handlers;
  tokens: TokenStore;
  limiter: RateLimiter;
  owner: number;
  maxBytes: number;
  metricsPublic: boolean;
  /** The Prometheus exposition, when metrics are on. */
  metrics?: { contentType: string; text(): Promise<string> };
  openapi: () => unknown;
  /** The dashboard's files (static.ts), served on every path outside /api and /metrics. */
  site: StaticSite;
}

const EXTRA_STATUS: Partial<Record<string, number>> = {
  [ErrorCode.NOT_FOUND]: 404,
  [ErrorCode.RATE_LIMITED]: 429,
  [ErrorCode.JOB_REJECTED]: 400,
  [ErrorCode.UNKNOWN_SLOT]: 400,
  [ErrorCode.CLASSAD_SYNTAX]: 400,
  [ErrorCode.LIMIT_EXCEEDED]: 429,
  [ErrorCode.MANAGER_CLOSED]: 503,
};

function statusOf(code: string): number {
  return HTTP_STATUS[code] ?? EXTRA_STATUS[code] ?? 500;
}

/** Serves one request; never throws (a failure becomes a JSON error reply). */
export async function serveRest(req: IncomingMessage, res: ServerResponse, d: RestDeps, signal: AbortSignal): Promise<void> {
  try {
    await dispatch(req, res, d, signal);
  } catch (e) {
    const data = toErrorData(e);
    refuse(req, res, statusOf(data.code), data);
  }
}

async function dispatch(req: IncomingMessage, res: ServerResponse, d: RestDeps, signal: AbortSignal): Promise<void> {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const segments = pathSegments(q < 0 ? url : url.slice(0, q));
  const query = new URLSearchParams(q < 0 ? "" : url.slice(q + 1));
  const verb = req.method ?? "GET";
  if (segments[0] !== "api" && segments.join("/") !== "metrics" && (verb === "GET" || verb === "HEAD")) {
    req.resume();
    d.site.serve(req, res, staticPath(q < 0 ? url : url.slice(0, q)));
    return;
  }
  if (segments.join("/") === "metrics" && d.metrics !== undefined) {
    if (verb !== "GET") throw notFound(verb, url, ["GET"]);
    if (!d.metricsPublic) authenticate(req, d, "read");
    const text = await d.metrics.text();
    res.writeHead(200, { "content-type": d.metrics.contentType, "content-length": Buffer.byteLength(text) });
    res.end(text);
    return;
  }
  const rest = REST_PREFIX.split("/").slice(1);
  if (!rest.every((s, i) => segments[i] === s)) throw notFound(verb, url);
  const tail = segments.slice(rest.length);
  if (tail.join("/") === "openapi.json" && verb === "GET") {
    authenticate(req, d, "read");
    sendJson(res, 200, d.openapi());
    return;
  }
  const match = matchRoute(verb, tail);
  if (match === undefined) throw notFound(verb, url);
  if ("verbs" in match) throw notFound(verb, url, match.verbs);
  const caller = match.route.public === true ? anonymous(req, d) : authenticate(req, d, match.route.scope);
  const body = await readJsonBody(req, match.route, d.maxBytes);
  const request = match.route.build({ params: match.params, query, body });
  const sse = match.route.sse === "always" || (match.route.sse === true && (request as { follow?: boolean }).follow === true);
  await call(match.route, request, res, d.handlers, { signal, caller, sse });
}

/**
 * The path's segments, decoded; `.` and `..` segments (raw or %-encoded) and empty ones are
 * refused rather than resolved, so no id or name can walk out of its place.
 */
function pathSegments(path: string): string[] {
  const raw = path.split("/").slice(1);
  return raw.map((s) => {
    let v: string;
    try {
      v = decodeURIComponent(s);
    } catch {
      throw new JobtapError(ErrorCode.PROTOCOL, `path segment ${JSON.stringify(s)} is not valid percent-encoding`);
    }
    if (v === "." || v === ".." || v.includes("/") || v.includes("\0")) throw new JobtapError(ErrorCode.PROTOCOL, `path segment ${JSON.stringify(v)} refused (no ".", "..", "/" or NUL in a path segment)`);
    return v;
  }).filter((v, i, all) => v !== "" || i < all.length - 1);
}

function notFound(verb: string, url: string, verbs?: string[]): JobtapError {
  const path = url.split("?")[0] as string;
  const hint = verbs === undefined ? ` (routes: ${REST_PREFIX}/openapi.json lists them)` : ` (it takes ${verbs.join(", ")})`;
  return new JobtapError(ErrorCode.NOT_FOUND, `no such route: ${verb} ${path.slice(0, 200)}${hint}`);
}

/** The static table's key for a path: decoded when it can be (it is only ever looked up). */
function staticPath(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * A route served without a token (the login): rate-limited by the client's address, and
 * the caller is nobody (the handler proves who it is for from its own credential).
 */
function anonymous(req: IncomingMessage, d: RestDeps): undefined {
  const key = `addr:${req.socket.remoteAddress ?? "?"}`;
  const wait = d.limiter.take(key);
  if (wait > 0) throw new JobtapError(ErrorCode.RATE_LIMITED, `too many requests from ${req.socket.remoteAddress ?? "this address"} ([daemon] http-rate-limit); retry in ${wait}s`, { retry_after: wait });
  return undefined;
}

/** The caller a bearer token stands for, rate-limited and held to `scope`; throws 401/429/403. */
function authenticate(req: IncomingMessage, d: RestDeps, scope: Scope): Caller {
  const m = /^Bearer\s+(\S+)$/.exec(req.headers.authorization ?? "");
  if (!m) throw new JobtapError(ErrorCode.NOT_AUTHENTICATED, "a bearer token is required (authorization: Bearer TOKEN; `jobtap token create` makes one)");
  const checked = d.tokens.check(m[1] as string);
  if ("refused" in checked) throw new JobtapError(ErrorCode.NOT_AUTHENTICATED, checked.refused);
  const token = checked.token;
  const wait = d.limiter.take(token.id);
  if (wait > 0) throw new JobtapError(ErrorCode.RATE_LIMITED, `token ${token.id} is over its request rate ([daemon] http-rate-limit); retry in ${wait}s`, { retry_after: wait });
  if (!scopeAllows(token.scope, scope)) {
    throw new JobtapError(ErrorCode.PERMISSION_DENIED, `token ${token.id} has scope "${token.scope}"; this call needs "${scope}"`, { scope: token.scope, needs: scope });
  }
  return { userid: token.userid, owner: token.userid === d.owner, scope: token.scope };
}

/** The request body as the route's schema allows: JSON, an object, only its known fields. */
async function readJsonBody(req: IncomingMessage, route: Route, maxBytes: number): Promise<Record<string, unknown>> {
  const what = `${route.verb} ${REST_PREFIX}${route.path}`;
  if (route.body === undefined) {
    req.resume();
    return {};
  }
  const text = await readBody(req, maxBytes);
  if (typeof text !== "string") {
    throw new JobtapError(text.status === 413 ? ErrorCode.LIMIT_EXCEEDED : ErrorCode.PROTOCOL, `${what}: ${text.message}`, { status: text.status, limit: "[daemon] max-request-size" });
  }
  const parsed = parseParams(what, text);
  if ("error" in parsed) throw new JobtapError(parsed.error.code, parsed.error.message);
  const body = parsed.value as Record<string, unknown>;
  const known = Object.keys(route.body.properties ?? {});
  for (const key of Object.keys(body)) {
    if (!known.includes(key)) throw new JobtapError(ErrorCode.PROTOCOL, `${what}: unknown field ${JSON.stringify(key)} (expected ${known.join(", ") || "none"})`);
  }
  for (const key of route.body.required ?? []) {
    if (body[key] === undefined) throw new JobtapError(ErrorCode.PROTOCOL, `${what}: missing field ${JSON.stringify(key)}`);
  }
  return body;
}

interface CallOptions {
  signal: AbortSignal;
  caller: Caller | undefined;
  /** The handler streams (eventlog follow): its lines go out as SSE `data:` events. */
  sse: boolean;
}

/** Runs the route's handler; a streaming handler's lines become SSE events when asked. */
async function call(route: Route, request: unknown, res: ServerResponse, handlers: Handlers, o: CallOptions): Promise<void> {
  let streaming = false;
  const ctx: CallContext = {
    signal: o.signal,
    caller: o.caller,
    writeLine: (value) => ctx.writeText(`data: ${JSON.stringify(value)}\n\n`),
    writeText(text) {
      if (res.destroyed) return;
      if (!streaming) {
        streaming = true;
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
      }
      res.write(text);
    },
    writable: () => new Promise<void>((resolve) => setImmediate(resolve)),
  };
  const handler = handlers[route.method] as Handler<typeof route.method>;
  try {
    // Checks the handler makes before it streams (who may) throw here, as a JSON error.
    const pending = handler(request as never, ctx);
    // A stream then answers its headers at once, so a client waiting for the first event
    // (a quiet trace) knows the stream is open.
    if (o.sse && !streaming && !res.destroyed) {
      streaming = true;
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
      res.flushHeaders();
    }
    const result = await pending;
    if (streaming) res.end("event: end\ndata: {}\n\n");
    else sendJson(res, 200, result ?? {});
  } catch (e) {
    const data = toErrorData(e);
    if (!streaming) throw e;
    res.end(`event: error\ndata: ${JSON.stringify({ error: data })}\n\n`);
  }
}

/** A refusal: the JSON error, Retry-After on a 429, and the connection closed if the body went unread. */
function refuse(req: IncomingMessage, res: ServerResponse, status: number, error: JobtapErrorData): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const retry = error.details?.retry_after;
  if (status === 429 && typeof retry === "number") res.setHeader("retry-after", String(retry));
  if (status === 401) res.setHeader("www-authenticate", 'Bearer realm="jobtap"');
  const bodyStatus = error.details?.status;
  if (bodyStatus === 413) status = 413;
  const declared = req.headers["content-length"];
  const bodyPending = !req.complete && (req.headers["transfer-encoding"] !== undefined || (declared !== undefined && declared !== "0"));
  if (bodyPending) {
    // The body was never read: answer, then close rather than parse what follows.
    res.shouldKeepAlive = false;
    res.once("finish", () => req.socket.destroySoon());
  } else req.resume();
  sendJson(res, status, { error });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

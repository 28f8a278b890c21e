/**
 * The daemon's socket server: HTTP+JSON on a Unix socket, owner-only (mode 0600) unless
 * guests are let in (0666). Every request but `ping` is authenticated (auth.ts): the
 * server answers the two auth methods itself and hands each handler its proven caller.
 *
 * A peer that speaks garbage gets a 400 and its connection closed; an oversized body gets a
 * 413; an unknown method a 404. None of these disturb other clients: the server keeps
 * serving. Handlers are plain async functions from the method table in protocol.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import { chmodSync, existsSync, unlinkSync } from "node:fs";
import { ErrorCode, JobtapError, isJobtapError, type JobtapErrorData } from "../errors.js";
import {
  API_PREFIX,
  DEFAULT_MAX_REQUEST_BYTES,
  PUBLIC_METHODS,
  TOKEN_HEADER,
  isMethodName,
  type AuthMethod,
  type MethodName,
  type Methods,
} from "./protocol.js";
import { createAuthenticator, type Authenticator, type Caller } from "./auth.js";
import { HUNG_UP, PREAUTH_MAX_BYTES, parseParams, readBody } from "./body.js";
import { DEFAULT_CONNECTIONS_PER_USER, connectionTable, type ConnectionTable } from "./connections.js";

/** What a handler may use beyond its request: cancellation and line streaming. */
export interface CallContext {
  /** Aborted when the client hangs up or the server closes. */
  signal: AbortSignal;
  /** Streams one JSON line to the client; the first call switches the reply to NDJSON. */
  writeLine(value: unknown): void;
  /** Streams JSON lines already serialized (each ending in a newline) in one write. */
  writeText(lines: string): void;
  /**
   * Resolves once the reply can take more lines: after the client has read what is buffered
   * (or hung up), else on the next turn of the event loop, so other requests and the
   * manager run between the chunks of a long stream.
   */
  writable(): Promise<void>;
  /** Who is calling, as proven (auth.ts); undefined only for `ping`. */
  caller: Caller | undefined;
}

/** The methods the service handlers serve (the server answers the auth methods). */
export type ServedMethod = Exclude<MethodName, AuthMethod>;

export type Handler<M extends MethodName> = (
  req: Methods[M]["req"],
  ctx: CallContext,
) => Promise<Methods[M]["res"] | void> | Methods[M]["res"];

export type Handlers = { [M in ServedMethod]: Handler<M> };

export interface SocketServerOptions {
  socketPath: string;
  handlers: Handlers;
  maxRequestBytes?: number;
  /** Open connections at once; past it room is made as connections.ts says (default 1000). */
  maxConnections?: number;
  /** A guest's authenticated connections at most (default 64); see connections.ts. */
  connectionsPerUser?: number;
  /** Where protocol trouble is reported (the daemon's log). */
  log?: (line: string) => void;
  /** The instance owner's uid (default: this process's). */
  owner?: number;
  /** Let other users connect (socket 0666, auth directory 1733); default owner-only. */
  guests?: boolean;
}

/** A running socket server; `close` stops accepting and ends open long polls. */
export interface SocketServer {
  readonly socketPath: string;
  close(): Promise<void>;
}

/** The HTTP status of each error code (the REST listener adds its own, http/rest.ts). */
export const HTTP_STATUS: Partial<Record<string, number>> = {
  [ErrorCode.USAGE]: 400,
  [ErrorCode.INVALID_ARGUMENT]: 400,
  [ErrorCode.PROTOCOL]: 400,
  [ErrorCode.BAD_JOBID]: 400,
  [ErrorCode.BAD_JOBSPEC]: 400,
  [ErrorCode.BAD_URGENCY]: 400,
  [ErrorCode.BAD_EXCEPTION]: 400,
  [ErrorCode.CONFIG]: 400,
  [ErrorCode.PERMISSION_DENIED]: 403,
  [ErrorCode.NOT_AUTHENTICATED]: 401,
  [ErrorCode.UNKNOWN_JOB]: 404,
  [ErrorCode.PLUGIN_NOT_FOUND]: 404,
  [ErrorCode.JOB_INACTIVE]: 409,
  [ErrorCode.BAD_STATE]: 409,
  [ErrorCode.PLUGIN_ALREADY_LOADED]: 409,
};

/** Turns anything thrown by a handler into the wire error form. */
export function toErrorData(e: unknown): JobtapErrorData {
  if (isJobtapError(e)) {
    const data: JobtapErrorData = { code: e.code, message: e.message };
    if (e.details !== undefined) data.details = e.details;
    return data;
  }
  const message = e instanceof Error ? e.message : String(e);
  return { code: ErrorCode.INTERNAL, message };
}

/**
 * Starts serving on `socketPath`. Refuses to take over a socket another live daemon answers
 * on; a stale socket file (nobody listening) is removed first.
 */
export async function startSocketServer(opts: SocketServerOptions): Promise<SocketServer> {
  const log = opts.log ?? (() => undefined);
  const maxBytes = opts.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  await assertSocketFree(opts.socketPath);
  const auth = createAuthenticator(opts.socketPath, opts.owner ?? process.getuid?.() ?? 0, opts.guests === true, log);
  const live = new Set<AbortController>();
  const refused = new WeakSet<Socket>();
  const server = createServer((req, res) => {
    // A connection over the limit was answered already; whatever it sends is not served.
    if (refused.has(req.socket)) {
      req.resume();
      return;
    }
    const ac = new AbortController();
    live.add(ac);
    res.on("close", () => {
      ac.abort();
      live.delete(ac);
    });
    void serveRequest(req, res, { handlers: opts.handlers, auth, maxBytes, signal: ac.signal, log, conns });
  });
  const owner = opts.owner ?? process.getuid?.() ?? 0;
  const maxConnections = opts.maxConnections ?? 1000;
  const conns = connectionTable(maxConnections, opts.connectionsPerUser ?? DEFAULT_CONNECTIONS_PER_USER, owner, (why) =>
    log(`socket: ${maxConnections} connections open, the limit ([limits] connections); closed ${why} to make room`),
  );
  refuseOverLimit(server, conns, maxConnections, refused, log);
  server.on("clientError", (err: NodeJS.ErrnoException, socket) => {
    if (hungUp(err, socket)) {
      log(`socket: ${HUNG_UP} (${err.code ?? err.message})`);
      socket.destroy();
      return;
    }
    log(`socket: malformed request from a peer (${err.message}); answered 400`);
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });
  try {
    await listen(server, opts.socketPath);
    chmodSync(opts.socketPath, opts.guests === true ? 0o666 : 0o600);
  } catch (e) {
    auth.close();
    throw e;
  }
  return {
    socketPath: opts.socketPath,
    close: async () => {
      await closeServer(server, live, opts.socketPath);
      auth.close();
    },
  };
}

/**
 * Admits each new connection through the connection table (connections.ts); one it cannot
 * admit (every open connection is the owner's) is answered with a coded error at once and
 * closed, instead of the process running out of file descriptors.
 */
function refuseOverLimit(server: Server, conns: ConnectionTable, max: number, refused: WeakSet<Socket>, log: (line: string) => void): void {
  let warned = false;
  server.prependListener("connection", (socket: Socket) => {
    if (conns.admit(socket)) {
      warned = false;
      return;
    }
    refused.add(socket);
    if (!warned) log(`socket: ${max} connections open, all the owner's, the limit ([limits] connections); refusing more`);
    warned = true;
    socket.on("error", () => undefined);
    socket.end(rawError(503, "Service Unavailable", limitError(`the daemon has ${max} connections open, the limit ([limits] connections = ${max}); try again later`, "[limits] connections")));
  });
}

function limitError(message: string, limit: string): JobtapErrorData {
  return { code: ErrorCode.LIMIT_EXCEEDED, message, details: { limit } };
}

/** A whole HTTP reply that closes the connection, written straight to a socket. */
function rawError(status: number, reason: string, error: JobtapErrorData): string {
  const text = JSON.stringify({ error });
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`;
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

async function closeServer(server: Server, live: Set<AbortController>, path: string): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  for (const ac of live) ac.abort();
  server.closeIdleConnections();
  setImmediate(() => server.closeAllConnections());
  await closed;
  try {
    unlinkSync(path);
  } catch {
    // already gone: nothing to clean up
  }
}

/**
 * Throws if a live daemon answers on `path`; a socket file nobody answers on is left over
 * from a crash and is removed.
 */
export async function assertSocketFree(path: string): Promise<void> {
  if (!existsSync(path)) return;
  const alive = await new Promise<boolean>((resolve) => {
    const s = connect(path);
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
  if (alive) {
    throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `another daemon is already serving ${path}`, {
      socket: path,
    });
  }
  unlinkSync(path);
}

/** A peer that went away mid-request, as opposed to one that sent garbage. */
function hungUp(err: NodeJS.ErrnoException, socket: { writable: boolean; readableEnded?: boolean }): boolean {
  return err.code === "ECONNRESET" || err.code === "EPIPE" || err.code === "HPE_INVALID_EOF_STATE" || socket.readableEnded === true;
}

interface Served {
  handlers: Handlers;
  auth: Authenticator;
  maxBytes: number;
  signal: AbortSignal;
  log: (line: string) => void;
  conns: ConnectionTable;
}

/**
 * One request. The caller is authenticated from the headers before a byte of the body is
 * read: a request that proves nobody (only `ping` and the two auth methods may) reads at
 * most PREAUTH_MAX_BYTES of body, and a refused one is answered and its connection closed
 * unread, so an anonymous peer can make the daemon hold only a few KB.
 */
async function serveRequest(req: IncomingMessage, res: ServerResponse, s: Served): Promise<void> {
  const { handlers, maxBytes, signal, log } = s;
  const url = req.url ?? "";
  const method = url.startsWith(API_PREFIX) ? url.slice(API_PREFIX.length) : "";
  if (req.method !== "POST" || !isMethodName(method)) {
    refuseUnread(req, res, 404, protocolError(`no such call: ${req.method} ${url}`));
    return;
  }
  let caller: Caller | undefined;
  try {
    caller = authorize(req.headers.authorization, s.auth, res);
  } catch (e) {
    const data = toErrorData(e);
    refuseUnread(req, res, HTTP_STATUS[data.code] ?? 500, data);
    return;
  }
  if (caller === undefined && !PUBLIC_METHODS.includes(method)) {
    refuseUnread(req, res, 401, {
      code: ErrorCode.NOT_AUTHENTICATED,
      message: `${method}: not authenticated (prove your uid first: an authorization: Proof header, or auth.challenge and auth.prove)`,
    });
    return;
  }
  if (caller !== undefined && !s.conns.proven(req.socket, caller.userid)) {
    const limit = "[limits] connections-per-user";
    refuseUnread(req, res, 503, limitError(`uid ${caller.userid} has the most connections a user may hold open (${limit}); close some and try again`, limit));
    return;
  }
  const body = await readBody(req, caller === undefined ? Math.min(PREAUTH_MAX_BYTES, maxBytes) : maxBytes);
  if (typeof body !== "string") {
    log(`socket: ${method}: ${body.message}`);
    res.shouldKeepAlive = false;
    res.once("finish", () => req.socket.destroy());
    sendError(res, body.status, protocolError(body.message));
    return;
  }
  const params = parseParams(method, body);
  if ("error" in params) {
    sendError(res, 400, params.error);
    return;
  }
  await runHandler(method, params.value, res, authHandlers(handlers, s.auth), signal, caller);
}

/** Answers without reading the body, and closes the connection once the answer is out. */
function refuseUnread(req: IncomingMessage, res: ServerResponse, status: number, error: JobtapErrorData): void {
  res.shouldKeepAlive = false;
  res.once("finish", () => req.socket.destroySoon());
  sendError(res, status, error);
}

/**
 * The caller an `authorization` header stands for: `Bearer TOKEN` (a token from an earlier
 * proof) or `Proof NONCE` (a proof file written for this request: checked now, and the
 * token for later requests goes back in the `x-jobtap-token` header). Throws
 * PERMISSION_DENIED for a proof that fails.
 */
function authorize(header: string | undefined, auth: Authenticator, res: ServerResponse): Caller | undefined {
  const m = header === undefined ? null : /^(Bearer|Proof)\s+(\S+)$/.exec(header);
  if (!m) return undefined;
  if (m[1] === "Bearer") return auth.caller(m[2]);
  const { token } = auth.proveOwn(m[2]!);
  res.setHeader(TOKEN_HEADER, token);
  return auth.caller(token);
}

/** The service handlers plus the two auth methods, which the server answers itself. */
function authHandlers(handlers: Handlers, auth: Authenticator): { [M in MethodName]: Handler<M> } {
  return {
    ...handlers,
    "auth.challenge": () => auth.challenge(),
    "auth.prove": (req) => auth.prove(req.nonce),
  };
}

async function runHandler(
  method: MethodName,
  params: object,
  res: ServerResponse,
  handlers: { [M in MethodName]: Handler<M> },
  signal: AbortSignal,
  caller: Caller | undefined,
): Promise<void> {
  let streaming = false;
  const ctx: CallContext = {
    signal,
    caller,
    writeLine(value) {
      ctx.writeText(JSON.stringify(value) + "\n");
    },
    writeText(lines) {
      if (res.destroyed) return;
      if (!streaming) {
        streaming = true;
        res.writeHead(200, { "content-type": "application/x-ndjson" });
      }
      res.write(lines);
    },
    writable: () =>
      new Promise<void>((resolve) => {
        if (res.destroyed || !res.writableNeedDrain) {
          setImmediate(resolve);
          return;
        }
        // 'drain' can come from a write completing within this same turn: going on from it
        // directly would chain chunk after chunk without the loop ever reading other sockets.
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          setImmediate(resolve);
        };
        res.on("drain", done);
        res.on("close", done);
      }),
  };
  try {
    const handler = handlers[method] as Handler<MethodName>;
    const result = await handler(params as never, ctx);
    if (streaming) res.end();
    else sendJson(res, 200, { result: result ?? {} });
  } catch (e) {
    const data = toErrorData(e);
    if (streaming) res.end(JSON.stringify({ error: data }) + "\n");
    else sendError(res, HTTP_STATUS[data.code] ?? 500, data);
  }
}

function protocolError(message: string): JobtapErrorData {
  return { code: ErrorCode.PROTOCOL, message };
}

function sendError(res: ServerResponse, status: number, error: JobtapErrorData): void {
  sendJson(res, status, { error });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

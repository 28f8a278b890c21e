/**
 * The daemon's optional TCP listener (`[daemon] http`): HTTP, or HTTPS with node:https when
 * `tls-cert`/`tls-key` are set. It serves the REST API, `/metrics` and the OpenAPI document
 * (rest.ts) with bearer tokens; the Unix socket is untouched by it.
 *
 * A client that dawdles over its headers is cut after `http-headers-timeout` (slow-loris);
 * past `http-connections` open connections, the oldest idle one (no request in flight) is
 * closed to make room, so idle connections cannot lock real clients out; only when every
 * open connection is busy is a newcomer refused.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { ErrorCode } from "../../errors.js";
import type { HttpSettings } from "./config.js";
import { serveRest, type RestDeps } from "./rest.js";

/** A running listener. */
export interface HttpListener {
  /** `http://HOST:PORT` or `https://...`, with the port actually bound. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Starts listening; rejects (EADDRINUSE...) if the address cannot be bound. */
export async function startHttpListener(s: HttpSettings, deps: RestDeps, log: (line: string) => void): Promise<HttpListener> {
  const live = new Set<AbortController>();
  // Requests in flight per connection (a connection without any is idle).
  const inFlight = new WeakMap<Socket, number>();
  const busy = (socket: Socket, delta: number) => inFlight.set(socket, (inFlight.get(socket) ?? 0) + delta);
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const ac = new AbortController();
    live.add(ac);
    busy(req.socket, +1);
    res.on("close", () => {
      busy(req.socket, -1);
      ac.abort();
      live.delete(ac);
    });
    void serveRest(req, res, deps, ac.signal);
  };
  const options = {
    headersTimeout: s.headersTimeoutMs,
    requestTimeout: Math.max(60_000, s.headersTimeoutMs),
    // How often the timeouts above are checked: often enough that a short timeout bites.
    connectionsCheckingInterval: Math.min(1000, s.headersTimeoutMs / 2),
    // Longer than clients keep idle sockets (their pools reuse them): a server closing first
    // races the next request. Idle connections are bounded by http-connections anyway.
    keepAliveTimeout: 65_000,
  };
  const server: Server = s.tls ? createHttpsServer({ ...options, cert: s.tls.cert, key: s.tls.key }, onRequest) : createHttpServer(options, onRequest);
  capConnections(server, s.maxConnections, (socket) => (inFlight.get(socket) ?? 0) > 0, log);
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === "ERR_HTTP_REQUEST_TIMEOUT" || err.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const text = JSON.stringify({ error: { code: ErrorCode.PROTOCOL, message: `malformed HTTP request: ${err.message}` } });
    socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(s.port, s.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = s.host.includes(":") ? `[${s.host}]` : s.host;
  return {
    url: `${s.tls ? "https" : "http"}://${host}:${port}`,
    port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const ac of live) ac.abort();
      server.closeIdleConnections();
      setImmediate(() => server.closeAllConnections());
      await closed;
    },
  };
}

/**
 * Keeps at most `max` connections open: a new one past the cap closes the oldest idle
 * connection, or is itself refused with a 503 when none is idle.
 */
function capConnections(server: Server, max: number, isBusy: (s: Socket) => boolean, log: (line: string) => void): void {
  // Insertion order is age order: the first idle one found is the oldest.
  const open = new Set<Socket>();
  let warned = false;
  // https emits 'secureConnection' for served sockets, but 'connection' comes first for both.
  server.prependListener("connection", (socket: Socket) => {
    if (open.size >= max && !evictIdle(open, isBusy)) {
      if (!warned) log(`http: ${max} connections open, all busy ([daemon] http-connections); refusing more`);
      warned = true;
      socket.destroy();
      return;
    }
    warned = false;
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  });
}

function evictIdle(open: Set<Socket>, isBusy: (s: Socket) => boolean): boolean {
  for (const s of open) {
    if (isBusy(s)) continue;
    open.delete(s);
    s.destroy();
    return true;
  }
  return false;
}

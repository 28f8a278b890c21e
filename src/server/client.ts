/**
 * The client half of the daemon protocol: typed calls over the Unix socket.
 *
 * The client speaks the protocol's HTTP/1.1 itself over `node:net` (one request at a time
 * per connection, idle connections kept for the next call) instead of through node:http,
 * whose loading and per-request machinery were a third of a `jobtap submit`'s own time.
 * It reads what the daemon's server writes: a status line, headers, and a body framed by
 * `content-length`, by chunked transfer encoding (streamed replies), or by the end of the
 * connection.
 *
 * Its first call that needs a caller proves the uid in the same request
 * (`authorization: Proof NONCE`, see auth.ts); later calls carry the token that reply
 * brought, and prove again after a 401 (a restarted daemon forgot it).
 */
import { connect, type Socket } from "node:net";
import { StringDecoder } from "node:string_decoder";
import { ErrorCode, JobtapError, codedError, isJobtapError } from "../errors.js";
import { clientNonce, writeProof } from "./proof.js";
import { API_PREFIX, PUBLIC_METHODS, TOKEN_HEADER, type MethodName, type Methods } from "./protocol.js";

/** A connection to one daemon. Calls may run concurrently; `close` drops the connections. */
export interface DaemonClient {
  readonly socketPath: string;
  call<M extends MethodName>(method: M, req: Methods[M]["req"]): Promise<Methods[M]["res"]>;
  /** A streaming call: `onLine` gets each JSON line; resolves when the daemon ends it. */
  stream<M extends MethodName>(
    method: M,
    req: Methods[M]["req"],
    onLine: (value: unknown) => void,
  ): Promise<void>;
  /**
   * `stream` handing each line over as the JSON text the daemon sent, unparsed (to pass it
   * on as it is); an error line still rejects.
   */
  streamText<M extends MethodName>(method: M, req: Methods[M]["req"], onText: (line: string) => void): Promise<void>;
  close(): void;
}

/** The status line and headers of a reply (header names lowercase). */
interface Head {
  status: number;
  headers: Map<string, string>;
}

/** What one exchange does with the reply: its head, then its body in pieces. */
interface ReplySink {
  head(head: Head): void;
  data(chunk: Buffer): void;
  /** The reply is complete (the connection is back in the pool): decode it, may throw. */
  finish?(): void;
}

/** Creates a client for the daemon listening on `socketPath` (no connection is made yet). */
export function connectDaemon(socketPath: string): DaemonClient {
  const idle: Socket[] = [];
  const open = new Set<Socket>();
  let closed = false;
  /** Runs one request on an idle connection or a new one; resolves at the reply's end. */
  const exchange = async (method: MethodName, body: string, authorization: string | undefined, sink: ReplySink): Promise<void> => {
    if (closed) throw new JobtapError(ErrorCode.PROTOCOL, `${method}: the client was closed`);
    const reused = idle.pop();
    const socket = reused ?? (await dial(socketPath, open, idle));
    let keep: boolean;
    try {
      keep = await roundTrip(socket, requestText(method, body, authorization), sink);
    } catch (e) {
      socket.destroy();
      if (e instanceof StaleConnection && reused === undefined) throw connectionError(new Error("the daemon closed the connection before replying"), socketPath);
      throw e instanceof StaleConnection ? e : connectionError(e as Error, socketPath);
    }
    if (keep && !closed) {
      socket.unref();
      idle.push(socket);
    } else socket.destroy();
    sink.finish?.();
  };
  /** `exchange`, once more on a fresh connection if a kept one was closed under it. */
  const send = async (method: MethodName, body: string, authorization: string | undefined, sink: ReplySink): Promise<void> => {
    try {
      await exchange(method, body, authorization, sink);
    } catch (e) {
      if (!(e instanceof StaleConnection)) throw e;
      idle.length = 0;
      await exchange(method, body, authorization, sink);
    }
  };
  let token: string | undefined;
  /**
   * One call with its authorization: the token, or a proof written for it. After a 401 for
   * a token the daemon no longer knows, once more with a proof.
   */
  const authorized = async (method: MethodName, req: unknown, sink: (head: Head) => ReplySink): Promise<void> => {
    const body = JSON.stringify(req);
    if (PUBLIC_METHODS.includes(method)) return send(method, body, undefined, routed(sink));
    if (token !== undefined) {
      const sent = token;
      let denied = false;
      await send(method, body, `Bearer ${sent}`, routed((head) => {
        denied = head.status === 401;
        return denied ? DISCARD : sink(head);
      }));
      if (!denied) return;
      if (token === sent) token = undefined;
    }
    const proof = proofFor(socketPath);
    try {
      await send(method, body, `Proof ${proof.nonce}`, routed((head) => {
        const t = head.headers.get(TOKEN_HEADER);
        if (t !== undefined) token = t;
        return sink(head);
      }));
    } finally {
      proof.remove();
    }
  };
  /** A call whose reply is JSON lines (or, without any, a plain reply to check). */
  const streamed = (method: MethodName, req: unknown, onLine: (line: string) => void): Promise<void> =>
    authorized(method, req, (head) =>
      (head.headers.get("content-type") ?? "").includes("ndjson") ? lines(onLine) : collect((text) => decodeReply(method, head.status, text)),
    );
  return {
    socketPath,
    async call(method, req) {
      let result: unknown;
      await authorized(method, req, (head) => collect((text) => (result = decodeReply(method, head.status, text))));
      return result as never;
    },
    async stream(method, req, onLine) {
      await streamed(method, req, (line) => {
        const value = parseJson(method, line) as { error?: unknown };
        if (isJobtapError(value.error)) throw JobtapError.from(value.error);
        onLine(value);
      });
    },
    async streamText(method, req, onText) {
      await streamed(method, req, (line) => {
        // The daemon's last line is `{"error":...}` if the stream failed; no data line starts so.
        if (line.startsWith('{"error":')) {
          const value = parseJson(method, line) as { error?: unknown };
          if (isJobtapError(value.error)) throw JobtapError.from(value.error);
        }
        onText(line);
      });
    },
    close: () => {
      closed = true;
      idle.length = 0;
      for (const s of open) s.destroy();
      open.clear();
    },
  };
}

/** Writes a proof file for a fresh nonce; no socket (or auth directory) is no daemon. */
function proofFor(socketPath: string): { nonce: string; remove(): void } {
  const nonce = clientNonce();
  try {
    return { nonce, remove: writeProof(socketPath, nonce).remove };
  } catch (e) {
    throw (e as NodeJS.ErrnoException).code === "ENOENT" ? connectionError(e as Error, socketPath) : e;
  }
}

/**
 * A kept connection the daemon closed before any byte of the reply: the daemon closes only
 * idle connections (its keep-alive timeout, or shutting down), so it had not read this
 * request and sending it again on a new connection cannot run it twice. (A daemon killed
 * mid-request is not listening any more: the new connection fails.)
 */
class StaleConnection extends Error {}

/** Opens a connection (in `open` until it closes; out of `idle` too once closed). */
function dial(socketPath: string, open: Set<Socket>, idle: Socket[]): Promise<Socket> {
  return new Promise<Socket>((resolve, reject) => {
    const socket = connect(socketPath);
    open.add(socket);
    socket.once("close", () => {
      open.delete(socket);
      const i = idle.indexOf(socket);
      if (i >= 0) idle.splice(i, 1);
    });
    socket.once("error", reject);
    socket.once("connect", () => {
      socket.off("error", reject);
      resolve(socket);
    });
  }).catch((e: unknown) => Promise.reject(connectionError(e as Error, socketPath)));
}

function requestText(method: MethodName, body: string, authorization: string | undefined): string {
  const auth = authorization === undefined ? "" : `authorization: ${authorization}\r\n`;
  return (
    `POST ${API_PREFIX}${method} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n${auth}\r\n${body}`
  );
}

/** Sink factories get the head first and choose how to take the body. */
function routed(choose: (head: Head) => ReplySink): ReplySink {
  let chosen: ReplySink | undefined;
  return {
    head(head) {
      chosen = choose(head);
      chosen.head(head);
    },
    data: (chunk) => chosen!.data(chunk),
    finish: () => chosen?.finish?.(),
  };
}

const DISCARD: ReplySink = { head: () => undefined, data: () => undefined };

/** Collects the body; `done` gets it as text at the end (see `finish`). */
function collect(done: (text: string) => void): ReplySink {
  const chunks: Buffer[] = [];
  return {
    head: () => undefined,
    data: (c) => void chunks.push(c),
    finish: () => done(Buffer.concat(chunks).toString("utf8")),
  };
}

/** Splits the body into lines, decoded as a stream (a character split between chunks is joined). */
function lines(onLine: (line: string) => void): ReplySink {
  const decoder = new StringDecoder("utf8");
  let pending = "";
  const take = (text: string, last: boolean) => {
    pending += text;
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (line.trim() !== "") onLine(line);
    }
    if (last && pending.trim() !== "") onLine(pending);
  };
  return {
    head: () => undefined,
    data: (c) => take(decoder.write(c), false),
    finish: () => take(decoder.end(), true),
  };
}

/**
 * Writes one request and reads its reply into `sink`. Resolves at the reply's end with
 * whether the connection may carry another request. A reused connection that closes before
 * any byte of the reply rejects with StaleConnection (the daemon had closed it idle).
 */
function roundTrip(socket: Socket, text: string, sink: ReplySink): Promise<boolean> {
  return new Promise((resolve, reject) => {
    socket.ref();
    const reader = new ReplyReader(sink);
    const done = (err: unknown) => {
      socket.off("data", onData);
      socket.off("end", onEnd);
      socket.off("close", onEnd);
      socket.off("error", onError);
      if (err === undefined) resolve(reader.keepAlive);
      else reject(err);
    };
    const onData = (chunk: Buffer) => {
      try {
        if (reader.feed(chunk)) done(undefined);
      } catch (e) {
        done(e);
      }
    };
    const onEnd = () => {
      if (reader.endOfStream()) done(undefined);
      else if (reader.started) done(new Error("the daemon closed the connection in the middle of its reply"));
      else done(new StaleConnection("the connection closed before the reply"));
    };
    const onError = (e: NodeJS.ErrnoException) => {
      done(!reader.started && (e.code === "ECONNRESET" || e.code === "EPIPE") ? new StaleConnection(e.message) : e);
    };
    socket.on("data", onData);
    socket.on("end", onEnd);
    socket.on("close", onEnd);
    socket.on("error", onError);
    socket.write(text);
  });
}

/** An HTTP/1.1 reply parser for what the daemon's server writes. */
class ReplyReader {
  started = false;
  keepAlive = true;
  private headText = "";
  private head: Head | undefined;
  /** Body framing: bytes left (length), chunked, or until the connection ends. */
  private mode: "length" | "chunked" | "close" = "length";
  private left = 0;
  /** Chunked: waiting for a size line, reading data, or reading the CRLF after it, or trailers. */
  private chunkState: "size" | "data" | "crlf" | "trailer" = "size";
  private pending = Buffer.alloc(0);

  constructor(private readonly sink: ReplySink) {}

  /** Takes bytes; true once the reply is complete. */
  feed(chunk: Buffer): boolean {
    this.started = true;
    if (this.head === undefined) {
      this.headText += chunk.toString("latin1");
      const end = this.headText.indexOf("\r\n\r\n");
      if (end < 0) {
        if (this.headText.length > 64 * 1024) throw new Error("the daemon sent a reply head over 64 KiB");
        return false;
      }
      const rest = Buffer.from(this.headText.slice(end + 4), "latin1");
      this.startBody(parseHead(this.headText.slice(0, end)));
      this.headText = "";
      if (this.mode === "length" && this.left === 0) return true;
      if (rest.length === 0) return false;
      chunk = rest;
    }
    return this.body(chunk);
  }

  /** The connection ended: complete if the body runs to the end of the connection. */
  endOfStream(): boolean {
    return this.head !== undefined && this.mode === "close";
  }

  private startBody(head: Head): void {
    this.head = head;
    const h = head.headers;
    if ((h.get("connection") ?? "").toLowerCase() === "close") this.keepAlive = false;
    if ((h.get("transfer-encoding") ?? "").toLowerCase().includes("chunked")) this.mode = "chunked";
    else if (h.has("content-length")) {
      this.left = Number(h.get("content-length"));
      if (!Number.isInteger(this.left) || this.left < 0) throw new Error(`the daemon sent a bad content-length ${h.get("content-length")}`);
    } else {
      this.mode = "close";
      this.keepAlive = false;
    }
    this.sink.head(head);
  }

  private body(chunk: Buffer): boolean {
    if (this.mode === "close") {
      this.sink.data(chunk);
      return false;
    }
    if (this.mode === "length") {
      const take = chunk.subarray(0, this.left);
      this.left -= take.length;
      if (take.length > 0) this.sink.data(take);
      return this.left === 0;
    }
    return this.chunked(chunk);
  }

  private chunked(chunk: Buffer): boolean {
    let buf = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    for (;;) {
      if (this.chunkState === "data") {
        const take = buf.subarray(0, this.left);
        this.left -= take.length;
        if (take.length > 0) this.sink.data(take);
        buf = buf.subarray(take.length);
        if (this.left > 0) return false;
        this.chunkState = "crlf";
      }
      const nl = buf.indexOf("\r\n");
      if (nl < 0) {
        this.pending = Buffer.from(buf);
        return false;
      }
      const line = buf.subarray(0, nl).toString("latin1");
      buf = buf.subarray(nl + 2);
      if (this.chunkState === "crlf") {
        if (line !== "") throw new Error("the daemon sent a malformed chunk");
        this.chunkState = "size";
      } else if (this.chunkState === "size") {
        const size = parseInt(line.split(";")[0]!, 16);
        if (!Number.isInteger(size) || size < 0) throw new Error(`the daemon sent a bad chunk size "${line}"`);
        if (size === 0) this.chunkState = "trailer";
        else {
          this.left = size;
          this.chunkState = "data";
        }
      } else if (line === "") return true; // the blank line after the (empty) trailers
    }
  }
}

function parseHead(text: string): Head {
  const [statusLine, ...lines] = text.split("\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "");
  if (!m) throw new Error(`the daemon sent a reply that is not HTTP: ${(statusLine ?? "").slice(0, 100)}`);
  const headers = new Map<string, string>();
  for (const l of lines) {
    const colon = l.indexOf(":");
    if (colon > 0) headers.set(l.slice(0, colon).trim().toLowerCase(), l.slice(colon + 1).trim());
  }
  return { status: Number(m[1]), headers };
}

function connectionError(e: Error & { code?: string }, socketPath: string): JobtapError {
  const coded = codedError(e);
  if (coded !== undefined) return coded;
  if (e.code === "ENOENT" || e.code === "ECONNREFUSED" || e.code === "ENOTSOCK") {
    return new JobtapError(
      ErrorCode.NO_DAEMON,
      `cannot reach the jobtap daemon: is the daemon running? tried ${socketPath}`,
      { socket: socketPath },
    );
  }
  return new JobtapError(ErrorCode.PROTOCOL, `talking to the daemon at ${socketPath}: ${e.message}`);
}

function decodeReply(method: string, status: number, text: string): unknown {
  const reply = parseJson(method, text) as { result?: unknown; error?: unknown };
  if (status === 200 && reply.result !== undefined) return reply.result;
  if (isJobtapError(reply.error)) throw JobtapError.from(reply.error);
  throw new JobtapError(ErrorCode.PROTOCOL, `${method}: daemon answered HTTP ${status}: ${text.slice(0, 200)}`);
}

function parseJson(method: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new JobtapError(ErrorCode.PROTOCOL, `${method}: daemon sent something that is not JSON: ${text.slice(0, 200)}`);
  }
}

/**
 * The client half of the daemon protocol: typed calls over the Unix socket. The client
 * proves its uid once (auth.ts) before its first call that needs it, and again if the
 * daemon forgot its token (a restarted daemon).
 */
import { rmSync } from "node:fs";
import { Agent, request, type IncomingMessage } from "node:http";
import { ErrorCode, JobtapError, isJobtapError } from "../errors.js";
import { writeProof } from "./auth.js";
import { API_PREFIX, PUBLIC_METHODS, type MethodName, type Methods } from "./protocol.js";

/** A connection to one daemon. Calls may run concurrently; `close` drops idle sockets. */
export interface DaemonClient {
  readonly socketPath: string;
  call<M extends MethodName>(method: M, req: Methods[M]["req"]): Promise<Methods[M]["res"]>;
  /** A streaming call: `onLine` gets each JSON line; resolves when the daemon ends it. */
  stream<M extends MethodName>(
    method: M,
    req: Methods[M]["req"],
    onLine: (value: unknown) => void,
  ): Promise<void>;
  close(): void;
}

/** Creates a client for the daemon listening on `socketPath` (no connection is made yet). */
export function connectDaemon(socketPath: string): DaemonClient {
  const agent = new Agent({ keepAlive: true });
  const post = (method: MethodName, req: unknown, token: string | undefined): Promise<IncomingMessage> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify(req);
      const headers: Record<string, string | number> = {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      };
      if (token !== undefined) headers.authorization = `Bearer ${token}`;
      const r = request({ socketPath, agent, method: "POST", path: API_PREFIX + method, headers }, resolve);
      r.on("error", (e) => reject(connectionError(e, socketPath)));
      r.end(body);
    });
  const unary = async (method: MethodName, req: unknown, token?: string): Promise<unknown> => {
    const res = await post(method, req, token);
    return decodeReply(method, res.statusCode ?? 0, await readAll(res));
  };
  let token: Promise<string> | undefined;
  const authenticate = async (): Promise<string> => {
    const { nonce, dir } = (await unary("auth.challenge", {})) as Methods["auth.challenge"]["res"];
    const proof = writeProof(socketPath, nonce, dir);
    try {
      return ((await unary("auth.prove", { nonce })) as Methods["auth.prove"]["res"]).token;
    } finally {
      rmSync(proof, { force: true });
    }
  };
  const tokenNow = (): Promise<string> =>
    (token ??= authenticate().catch((e: unknown) => {
      token = undefined;
      throw e;
    }));
  /** Sends with a token (proving the uid first if needed); once more after a 401. */
  const send = async (method: MethodName, req: unknown): Promise<IncomingMessage> => {
    if (PUBLIC_METHODS.includes(method)) return post(method, req, undefined);
    const res = await post(method, req, await tokenNow());
    if (res.statusCode !== 401) return res;
    res.resume();
    token = undefined;
    return post(method, req, await tokenNow());
  };
  return {
    socketPath,
    async call(method, req) {
      const res = await send(method, req);
      const text = await readAll(res);
      return decodeReply(method, res.statusCode ?? 0, text) as never;
    },
    async stream(method, req, onLine) {
      const res = await send(method, req);
      if (!(res.headers["content-type"] ?? "").includes("ndjson")) {
        decodeReply(method, res.statusCode ?? 0, await readAll(res));
        return;
      }
      await readLines(res, (line) => {
        const value = parseJson(method, line) as { error?: unknown };
        if (isJobtapError(value.error)) throw JobtapError.from(value.error);
        onLine(value);
      });
    },
    close: () => agent.destroy(),
  };
}

function connectionError(e: Error & { code?: string }, socketPath: string): JobtapError {
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

function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (c: Buffer) => chunks.push(c));
    res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    res.on("error", reject);
  });
}

async function readLines(res: IncomingMessage, onLine: (line: string) => void): Promise<void> {
  let pending = "";
  // Decoded as a stream: a character split between two chunks is joined, not mangled.
  res.setEncoding("utf8");
  for await (const chunk of res) {
    pending += chunk as string;
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (line.trim() !== "") onLine(line);
    }
  }
  if (pending.trim() !== "") onLine(pending);
}

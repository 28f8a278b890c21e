import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode, JobtapError } from "../../src/errors.js";
import { connectDaemon } from "../../src/server/client.js";
import type { Handlers } from "../../src/server/server.js";
import { startSocketServer, type SocketServer } from "../../src/server/server.js";
import { clientNonce, writeProof } from "../../src/server/proof.js";

/** Handlers that answer from a small in-test table, enough to drive the protocol. */
function testHandlers(onWait: () => void = () => undefined): Handlers {
  const fail = () => {
    throw new JobtapError(ErrorCode.NOT_SUPPORTED, "not in this test");
  };
  return {
    ping: () => ({ version: "test", pid: 1, uptime: 0 }),
    submit: (req) => ({ ids: req.jobspecs.map((_, i) => `f${i + 1}`) }),
    list: fail,
    info: (req) => {
      throw new JobtapError(ErrorCode.UNKNOWN_JOB, `${req.id}: unknown job`);
    },
    eventlog: async (req, ctx) => {
      if (!req.follow) return { eventlog: [{ timestamp: 1, name: "submit" }] };
      ctx.writeLine({ timestamp: 1, name: "submit" });
      ctx.writeLine({ timestamp: 2, name: "clean" });
    },
    wait: (_req, ctx) =>
      new Promise((_, reject) => {
        ctx.signal.addEventListener("abort", () => reject(new Error("aborted")));
        onWait();
      }),
    jobad: fail,
    why: fail,
    ads: fail,
    cancel: fail,
    urgency: fail,
    kill: fail,
    output: fail,
    purge: fail,
    raise: fail,
    update: fail,
    "exec-override": fail,
    "plugin.list": () => ({ plugins: [] }),
    "plugin.load": fail,
    "plugin.remove": fail,
    "plugin.query": fail,
    "plugin.trace": fail,
    "plugin.call": fail,
    "config.reload": fail,
    "token.create": fail,
    "token.list": fail,
    "token.revoke": fail,
    "web.code": fail,
    "web.login": fail,
    "web.whoami": fail,
    "web.events": fail,
    "web.stats": fail,
  };
}

/** Writes raw bytes to the socket and resolves with everything the server sends back. */
function rawExchange(path: string, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    let got = "";
    s.on("data", (d) => (got += d.toString()));
    s.on("end", () => resolve(got));
    s.on("close", () => resolve(got));
    s.on("error", reject);
    s.write(bytes);
  });
}

describe("socket server", () => {
  let dir: string;
  let sock: string;
  let server: SocketServer | undefined;
  const log: string[] = [];
  let waitEntered: () => void = () => undefined;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-server-"));
    sock = join(dir, "jobtap.sock");
    log.length = 0;
    server = await startSocketServer({
      socketPath: sock,
      handlers: testHandlers(() => waitEntered()),
      maxRequestBytes: 4096,
      log: (l) => log.push(l),
    });
  });
  afterEach(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("creates the socket owner-only (mode 0600)", () => {
    expect(statSync(sock).mode & 0o777).toBe(0o600);
  });

  it("answers typed calls and carries coded errors back", async () => {
    const c = connectDaemon(sock);
    expect((await c.call("submit", { jobspecs: [{} as never, {} as never] })).ids).toEqual(["f1", "f2"]);
    await expect(c.call("info", { id: "fXYZ" })).rejects.toMatchObject({
      code: ErrorCode.UNKNOWN_JOB,
      message: "fXYZ: unknown job",
    });
    c.close();
  });

  it("streams JSON lines for a follow call", async () => {
    const c = connectDaemon(sock);
    const lines: unknown[] = [];
    await c.stream("eventlog", { id: "f1", follow: true }, (l) => lines.push(l));
    expect(lines).toEqual([{ timestamp: 1, name: "submit" }, { timestamp: 2, name: "clean" }]);
    c.close();
  });

  it("answers garbage with 400 and keeps serving", async () => {
    const reply = await rawExchange(sock, "this is not http\r\n\r\n");
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect(log.some((l) => l.includes("malformed request"))).toBe(true);
    const c = connectDaemon(sock);
    expect((await c.call("ping", {})).version).toBe("test");
    c.close();
  });

  it("a peer hanging up mid-request is logged as such, not as a malformed request", async () => {
    for (const partial of ["POST /v1/ping HTTP/1.1\r\nHost: x\r\nContent-Le", "POST /v1/pi"]) {
      log.length = 0;
      await new Promise<void>((resolve) => {
        const s = connect(sock, () => s.end(partial));
        s.on("close", () => resolve());
        s.resume();
      });
      // The server logs the peer's departure once it sees it; wait for that line.
      for (let i = 0; i < 500 && log.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(log).toEqual([expect.stringContaining("a peer hung up before finishing its request")]);
    }
  });

  it("rejects a body that is not a JSON object with 400 PROTOCOL", async () => {
    const body = "[1,2";
    const reply = await rawExchange(
      sock,
      `POST /v1/ping HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect(reply).toContain('"code":"PROTOCOL"');
  });

  it("rejects an unknown call with 404", async () => {
    const reply = await rawExchange(sock, "POST /v1/nope HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
    expect(reply).toMatch(/^HTTP\/1\.1 404/);
    expect(reply).toContain("no such call");
  });

  it("refuses an oversized request with 413 and keeps serving", async () => {
    const c = connectDaemon(sock);
    const huge = { jobspecs: [{ pad: "x".repeat(10_000) } as never] };
    await expect(c.call("submit", huge)).rejects.toMatchObject({
      code: ErrorCode.PROTOCOL,
      message: expect.stringContaining("exceeds the limit of 4096 bytes"),
    });
    expect((await c.call("ping", {})).version).toBe("test");
    c.close();
  });

  it("ends open long polls when it closes", async () => {
    const c = connectDaemon(sock);
    const entered = new Promise<void>((r) => (waitEntered = r));
    const outcome = c.call("wait", { id: "f1" }).then(
      () => "resolved",
      () => "rejected",
    );
    await entered;
    await server?.close();
    server = undefined;
    expect(await outcome).toBe("rejected");
    c.close();
  });

  it("refuses to take over a socket a live daemon serves", async () => {
    await expect(startSocketServer({ socketPath: sock, handlers: testHandlers() })).rejects.toMatchObject({
      message: `another daemon is already serving ${sock}`,
    });
  });
});

describe("proving the caller in the request itself", () => {
  let dir: string;
  let sock: string;
  let server: SocketServer | undefined;
  const callers: Array<number | undefined> = [];

  const start = async () => {
    const handlers = testHandlers();
    handlers.submit = (req, ctx) => {
      callers.push(ctx.caller?.userid);
      return { ids: req.jobspecs.map((_, i) => `f${i + 1}`) };
    };
    server = await startSocketServer({ socketPath: sock, handlers });
  };
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-proof-"));
    sock = join(dir, "jobtap.sock");
    callers.length = 0;
    await start();
  });
  afterEach(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const submitWith = (authorization: string) => {
    const body = JSON.stringify({ jobspecs: [{}] });
    return rawExchange(
      sock,
      `POST /v1/submit HTTP/1.1\r\nHost: x\r\nAuthorization: ${authorization}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
  };

  it("serves a request carrying a proof as the proof file's owner and answers a token for later requests", async () => {
    const nonce = clientNonce();
    writeProof(sock, nonce);
    const reply = await submitWith(`Proof ${nonce}`);
    expect(reply).toMatch(/^HTTP\/1\.1 200/);
    expect(callers).toEqual([process.getuid?.() ?? 0]);
    expect(readdirSync(`${sock}.auth`)).toEqual([]); // the proof file was consumed
    const token = /\r\nx-jobtap-token: (\S+)\r\n/i.exec(reply)?.[1];
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(await submitWith(`Bearer ${token}`)).toMatch(/^HTTP\/1\.1 200/);
    // The same proof again, or one never written: refused, and the handler never runs.
    for (const again of [nonce, clientNonce()]) {
      const refused = await submitWith(`Proof ${again}`);
      expect(refused).toMatch(/^HTTP\/1\.1 403/);
      expect(refused).toContain("authorization: Proof: no proof file");
      expect(refused).not.toMatch(/x-jobtap-token/i);
    }
    expect(callers).toHaveLength(2);
  });

  it("a client whose daemon restarted reconnects and proves again by itself", async () => {
    const c = connectDaemon(sock);
    await c.call("submit", { jobspecs: [{} as never] });
    await server?.close();
    await start();
    // The kept connection is gone and the new daemon does not know the token.
    expect((await c.call("submit", { jobspecs: [{} as never] })).ids).toEqual(["f1"]);
    expect(callers).toHaveLength(2);
    c.close();
  });
});

/**
 * A scripted peer on a real socket, to see what the client sends and how it reads what a
 * server may legally write: each request's line and authorization header are recorded with
 * the connection it came on, and `answer` writes the reply (or nothing).
 */
async function scriptedPeer(sock: string, answer: (req: { auth: string; conn: number; n: number }, s: Socket) => void) {
  mkdirSync(`${sock}.auth`, { mode: 0o700 });
  const seen: Array<{ auth: string; conn: number }> = [];
  let conns = 0;
  const server = createServer((s) => {
    const conn = ++conns;
    let buf = "";
    s.on("data", (d) => {
      buf += d.toString("latin1");
      for (;;) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buf.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        buf = buf.slice(end + 4 + length);
        const auth = /\r\nauthorization: ([^\r]*)/i.exec(head)?.[1] ?? "";
        seen.push({ auth, conn });
        answer({ auth, conn, n: seen.length }, s);
      }
    });
  });
  await new Promise<void>((r) => server.listen(sock, () => r()));
  return { seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const json = (s: Socket, status: number, value: unknown, extra = "") => {
  const text = JSON.stringify(value);
  s.write(`HTTP/1.1 ${status} X\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n${extra}\r\n${text}`);
};

describe("the client's side of the wire", () => {
  let dir: string;
  let sock: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-client-"));
    sock = join(dir, "jobtap.sock");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("proves once, then sends the token on one kept connection; after a 401 it proves again", async () => {
    let tokens = 0;
    const peer = await scriptedPeer(sock, ({ auth, n }, s) => {
      if (auth.startsWith("Proof ")) json(s, 200, { result: { ids: [`p${n}`] } }, `x-jobtap-token: T${++tokens}\r\n`);
      else if (auth === `Bearer T${tokens}` && n !== 4) json(s, 200, { result: { ids: [`b${n}`] } });
      else json(s, 401, { error: { code: ErrorCode.NOT_AUTHENTICATED, message: "who?" } });
    });
    const c = connectDaemon(sock);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(...(await c.call("submit", { jobspecs: [] })).ids);
    c.close();
    await peer.close();
    expect(ids).toEqual(["p1", "b2", "b3", "p5"]);
    expect(peer.seen.map((r) => r.auth.split(" ")[0])).toEqual(["Proof", "Bearer", "Bearer", "Bearer", "Proof"]);
    expect(new Set(peer.seen.map((r) => r.conn))).toEqual(new Set([1]));
    expect(readdirSync(`${sock}.auth`)).toEqual([]); // the client removed its proof files
  });

  it("sends a request again on a new connection when a kept one was closed before answering", async () => {
    const peer = await scriptedPeer(sock, ({ conn, n }, s) => {
      if (conn === 1 && n === 2) s.destroy(); // the server's idle timeout hit just as the request came
      else json(s, 200, { result: { version: `v${n}`, pid: 1, uptime: 0 } });
    });
    const c = connectDaemon(sock);
    expect((await c.call("ping", {})).version).toBe("v1");
    expect((await c.call("ping", {})).version).toBe("v3");
    c.close();
    await peer.close();
    expect(peer.seen.map((r) => r.conn)).toEqual([1, 1, 2]);
  });

  it("reads a chunked stream written in pieces, split inside lines and inside characters", async () => {
    const lines = [{ id: "ƒ2LuoFx3", n: 1 }, { id: "ƒ2StiMtj", note: "ü€😀".repeat(50) }, { end: true }];
    const body = Buffer.from(lines.map((l) => JSON.stringify(l) + "\n").join(""));
    const peer = await scriptedPeer(sock, (_req, s) => {
      s.write("HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n\r\n");
      const wire: Buffer[] = [];
      for (let i = 0; i < body.length; i += 7) {
        const piece = body.subarray(i, i + 7);
        wire.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n"));
      }
      wire.push(Buffer.from("0\r\n\r\n"));
      const all = Buffer.concat(wire);
      let at = 0;
      const next = () => {
        if (at >= all.length) return;
        s.write(all.subarray(at, at + 5));
        at += 5;
        setImmediate(next);
      };
      next();
    });
    const c = connectDaemon(sock);
    const got: unknown[] = [];
    await c.stream("list", { stream: true }, (l) => got.push(l));
    // The connection is kept after a chunked reply: a second call uses it.
    await c.stream("list", { stream: true }, () => undefined);
    c.close();
    await peer.close();
    expect(got).toEqual(lines);
    expect(peer.seen.map((r) => r.conn)).toEqual([1, 1]);
  });
});

describe("socket discovery errors", () => {
  it("says the daemon is not running, naming the path tried", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jobtap-nodaemon-"));
    const c = connectDaemon(join(dir, "missing.sock"));
    await expect(c.call("ping", {})).rejects.toMatchObject({
      code: ErrorCode.NO_DAEMON,
      message: `cannot reach the jobtap daemon: is the daemon running? tried ${join(dir, "missing.sock")}`,
    });
    c.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("replaces a stale socket file nobody listens on", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jobtap-stale-"));
    const sock = join(dir, "jobtap.sock");
    // A socket left behind by a crashed daemon: a listener SIGKILLed after binding.
    const child = spawn(process.execPath, [
      "-e",
      `require("node:net").createServer().listen(${JSON.stringify(sock)}, () => console.log("up"))`,
    ]);
    await new Promise<void>((r) => child.stdout.once("data", () => r()));
    const gone = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await gone;
    expect(existsSync(sock)).toBe(true);
    const s = await startSocketServer({ socketPath: sock, handlers: testHandlers() });
    const c = connectDaemon(sock);
    expect((await c.call("ping", {})).version).toBe("test");
    c.close();
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("socket server connection limit", () => {
  it("past [limits] connections the oldest anonymous connection makes room; only when all are the owner's is a new one answered 503", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jobtap-server-"));
    const sock = join(dir, "jobtap.sock");
    let submits = 0;
    const handlers = testHandlers();
    const submit = handlers.submit;
    handlers.submit = (req, ctx) => {
      submits++;
      return submit(req, ctx);
    };
    const log: string[] = [];
    const server = await startSocketServer({ socketPath: sock, handlers, maxConnections: 2, log: (l) => log.push(l) });
    try {
      const held = [connect(sock), connect(sock)];
      await Promise.all(held.map((s) => new Promise((r) => s.once("connect", r))));
      const closed = held.map((s) => new Promise((r) => s.once("close", r)));
      // Two owner clients (this process): each closes one anonymous connection to get in.
      const c1 = connectDaemon(sock);
      expect((await c1.call("submit", { jobspecs: [{} as never] })).ids).toEqual(["f1"]);
      await closed[0];
      const c2 = connectDaemon(sock);
      expect((await c2.call("submit", { jobspecs: [{} as never] })).ids).toHaveLength(1);
      await closed[1];
      expect(log.filter((l) => l.includes("closed an anonymous connection")).length).toBe(2);
      // Both connections are the owner's now: a third is refused without being served.
      const body = JSON.stringify({ jobspecs: [{}] });
      const reply = await rawExchange(sock, `POST /v1/submit HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      expect(reply).toMatch(/^HTTP\/1\.1 503/);
      expect(reply).toContain('"code":"LIMIT_EXCEEDED"');
      expect(reply).toContain("[limits] connections = 2");
      expect(submits).toBe(2);
      expect(log.some((l) => l.includes("refusing more"))).toBe(true);
      c1.close();
      c2.close();
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

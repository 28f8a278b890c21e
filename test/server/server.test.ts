import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode, JobtapError } from "../../src/errors.js";
import { connectDaemon } from "../../src/server/client.js";
import type { Handlers } from "../../src/server/server.js";
import { startSocketServer, type SocketServer } from "../../src/server/server.js";

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
  it("answers a connection past [limits] connections with 503 LIMIT_EXCEEDED without serving it, and serves again once one closes", async () => {
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
      const body = JSON.stringify({ jobspecs: [{}] });
      const reply = await rawExchange(sock, `POST /v1/submit HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      expect(reply).toMatch(/^HTTP\/1\.1 503/);
      expect(reply).toContain('"code":"LIMIT_EXCEEDED"');
      expect(reply).toContain("[limits] connections = 2");
      expect(submits).toBe(0);
      expect(log.some((l) => l.includes("refusing more"))).toBe(true);
      held[0]!.destroy();
      await new Promise((r) => setTimeout(r, 50));
      const c = connectDaemon(sock);
      expect((await c.call("submit", { jobspecs: [{} as never] })).ids).toEqual(["f1"]);
      c.close();
      held[1]!.destroy();
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

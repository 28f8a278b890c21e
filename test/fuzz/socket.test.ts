/**
 * Fuzzing the daemon's socket (fast-check, fixed seed; JOBTAP_FUZZ_RUNS for longer): a real
 * in-process daemon on a real Unix socket and SQLite store gets raw garbage, malformed HTTP,
 * random JSON bodies for every method, huge bodies, slow clients and thousands of
 * connections. Each answer is an HTTP reply with a coded error (or a result), the daemon
 * keeps answering, and every job it acknowledged is still in its queue.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isJobtapError } from "../../src/errors.js";
import { connectDaemon, type DaemonClient } from "../../src/server/client.js";
import { startDaemon, type Daemon } from "../../src/server/daemon.js";
import { METHOD_NAMES } from "../../src/server/protocol.js";
import { RUNS, SEED } from "./helpers.js";

const opts = { seed: SEED, numRuns: Math.max(20, Math.floor(RUNS / 3)) };

/** Sends bytes (optionally in slow pieces), resolves with all the server sends back. */
function exchange(path: string, pieces: string[], delayMs = 0): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(path);
    let got = "";
    s.on("data", (d) => (got += d.toString()));
    s.on("close", () => resolve(got));
    s.on("error", () => resolve(got));
    s.setTimeout(5000, () => s.destroy());
    void (async () => {
      for (const p of pieces) {
        if (s.destroyed) return;
        s.write(p);
        if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      }
      s.end();
    })();
  });
}

const post = (method: string, body: string, extra = "") =>
  `POST /v1/${method} HTTP/1.1\r\nHost: x\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`;

describe("fuzz: the daemon socket", () => {
  let dir: string;
  let daemon: Daemon;
  let client: DaemonClient;
  const acked: string[] = [];
  const job = {
    version: 1,
    resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
    tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
    attributes: { system: { duration: 0, exec: { test: { run_duration: 3600 } } } },
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-sockfuzz-"));
    writeFileSync(join(dir, "c.toml"), '[resources]\ncores = 1\n[daemon]\nmax-request-size = "64K"\n[limits]\nconnections = 500\n');
    daemon = await startDaemon({ statedir: dir, configPath: join(dir, "c.toml"), env: {}, log: () => undefined });
    client = connectDaemon(daemon.socketPath);
    acked.push(...(await client.call("submit", { jobspecs: [job as never] })).ids);
  });
  afterAll(async () => {
    client.close();
    await daemon.shutdown("test");
    rmSync(dir, { recursive: true, force: true });
  });

  /** The daemon still answers and still holds every acknowledged job. */
  async function healthy(): Promise<void> {
    expect((await client.call("ping", {})).pid).toBe(process.pid);
    for (const id of acked) expect((await client.call("info", { id })).job.id).toBe(id);
  }

  it("raw bytes and malformed HTTP get an HTTP error or a closed connection, never a crash", async () => {
    const prefix = fc.constantFrom("", "POST /v1/submit HTTP/1.1\r\n", "GET / HTTP/1.1\r\n", "POST /v1/ping HTTP/1.1\r\nContent-Length: 5\r\n\r\n");
    await fc.assert(
      fc.asyncProperty(prefix, fc.string({ maxLength: 300 }), async (p, junk) => {
        const reply = await exchange(daemon.socketPath, [p + junk]);
        if (reply !== "") expect(reply).toMatch(/^HTTP\/1\.1 \d{3} /);
      }),
      opts,
    );
    await healthy();
  });

  it("random JSON bodies for every method are answered with a result or a coded error", async () => {
    // plugin.trace streams until the client hangs up: a unary call of it never returns.
    const methods = METHOD_NAMES.filter((m) => !["config.reload", "plugin.load", "plugin.remove", "purge", "plugin.trace"].includes(m));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...methods), fc.jsonValue({ maxDepth: 3 }), async (method, body) => {
        try {
          await client.call(method as "ping", body as never);
        } catch (e) {
          expect(isJobtapError(e)).toBe(true);
          expect((e as { code: string }).code).toMatch(/^[A-Z_]+$/);
        }
      }),
      opts,
    );
    // Unauthenticated bodies on the raw socket: an HTTP error with a code.
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...methods), fc.string({ maxLength: 200 }), async (method, body) => {
        const reply = await exchange(daemon.socketPath, [post(method, body)]);
        expect(reply).toMatch(/^HTTP\/1\.1 \d{3} /);
        if (!reply.startsWith("HTTP/1.1 200")) expect(JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4)).error.code).toMatch(/^[A-Z_]+$/);
      }),
      opts,
    );
    // Real submissions through the client meanwhile: every one acknowledged stays.
    for (let i = 0; i < 5; i++) acked.push(...(await client.call("submit", { jobspecs: [job as never] })).ids);
    await healthy();
  });

  it("a huge body is 413 and a slow client is served; neither disturbs others", async () => {
    const huge = await exchange(daemon.socketPath, [post("ping", "x".repeat(300 * 1024))]);
    expect(huge).toMatch(/^HTTP\/1\.1 413/);
    const body = "{}";
    const slow = exchange(daemon.socketPath, post("ping", body).match(/.{1,7}/gs)!, 20);
    await healthy();
    expect(await slow).toMatch(/^HTTP\/1\.1 200/);
  });

  it("thousands of connections: past [limits] connections the oldest anonymous ones are closed to make room, then the daemon serves again", async () => {
    const closedByDaemon = await Promise.all(
      Array.from({ length: 2000 }, () => new Promise<boolean>((resolve) => {
        const s = connect(daemon.socketPath);
        let ours = false;
        s.on("error", () => resolve(!ours));
        s.on("close", () => resolve(!ours));
        s.on("connect", () => setTimeout(() => ((ours = true), s.destroy()), 300));
      })),
    );
    expect(closedByDaemon.filter(Boolean).length).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 100));
    await healthy();
  });
});

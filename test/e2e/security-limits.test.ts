/**
 * Issue 31, denial of service: the daemon (this process, the owner) with guests, and a guest
 * (jtsrv2, a real second uid) that sends big bodies without proving anything, holds every
 * connection it can, and sends JSON nested past any stack. Bounded and small: a 1 MB body
 * that is refused unread, 20 connections.
 */
import { spawn } from "node:child_process";
import { request } from "node:http";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDaemon } from "../../src/server/client.js";
import { startDaemon, type Daemon } from "../../src/server/daemon.js";
import { clientNonce, writeProof } from "../../src/server/proof.js";
import { requireBuild, ROOT } from "./harness.js";
import { realUser, scriptAs, type User } from "./users.js";

const guest = realUser("jtsrv2");

/** A guest script: POST `path` declaring `declared` body bytes, sending only `sent`; prints status, body and whether the daemon closed. */
function partialBody(socket: string, path: string, declared: number, sent: number): string {
  return `
    const http = await import("node:http");
    const req = http.request({ socketPath: ${JSON.stringify(socket)}, method: "POST", path: ${JSON.stringify(path)},
      headers: { "content-length": ${declared} } });
    req.on("error", () => undefined);
    req.on("response", (res) => {
      let t = ""; res.on("data", (d) => (t += d));
      res.on("end", () => {
        const shown = res.statusCode + " " + t;
        if (req.socket.destroyed) console.log(shown + " closed");
        else req.socket.once("close", () => console.log(shown + " closed"));
      });
    });
    req.write(Buffer.alloc(${sent}, 0x20));
    // Never finishes the body: the daemon must answer without it (the old one waited forever).
    setTimeout(() => { console.log("no answer"); process.exit(0); }, 20000).unref();`;
}

describe.skipIf(!guest)("security: limits against a guest", { timeout: 60_000 }, () => {
  const g = guest as User;
  let top: string;
  let socket: string;
  let daemon: Daemon;

  beforeAll(async () => {
    requireBuild();
    top = mkdtempSync(join(tmpdir(), "jobtap-srv-lim-"));
    chmodSync(top, 0o755);
    mkdirSync(join(top, "pub"), { mode: 0o755 });
    socket = join(top, "pub", "jobtap.sock");
    const config = join(top, "jobtap.toml");
    writeFileSync(config, `[daemon]\nguests = true\nsocket = ${JSON.stringify(socket)}\n[limits]\nconnections = 20\nconnections-per-user = 4\n`);
    daemon = await startDaemon({ statedir: join(top, "state"), configPath: config, env: {}, log: () => undefined });
  });
  afterAll(async () => {
    await daemon?.shutdown("test");
    rmSync(top, { recursive: true, force: true });
  });

  it("a body from a caller that proved nothing is refused before it is read, and the connection closed", async () => {
    const submit = await scriptAs(g, partialBody(socket, "/v1/submit", 1024 * 1024, 1024));
    expect(submit.stdout).toMatch(/^401 .*NOT_AUTHENTICATED.* closed$/m);
    // ping needs no proof, so its body is read: at most a few KB of it.
    const ping = await scriptAs(g, partialBody(socket, "/v1/ping", 1024 * 1024, 1024));
    expect(ping.stdout).toMatch(/^413 .*exceeds the limit of 4096 bytes.* closed$/m);
  });

  it("JSON nested 100,000 deep is a 400 naming the limit, not an internal error", async () => {
    const nonce = clientNonce();
    const proof = writeProof(socket, nonce);
    // Deep objects where a jobspec may hold anything: its user attributes.
    const deep = `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`;
    const body = `{"jobspecs":[{"version":1,"resources":[],"tasks":[],"attributes":{"system":{},"user":${deep}}}]}`;
    const answer = await new Promise<string>((resolve, reject) => {
      const req = request({ socketPath: socket, method: "POST", path: "/v1/submit", headers: { authorization: `Proof ${nonce}` } }, (res) => {
        let t = "";
        res.on("data", (d) => (t += d));
        res.on("end", () => resolve(`${res.statusCode} ${t}`));
      });
      req.on("error", reject);
      req.end(body);
    });
    proof.remove();
    expect(answer).toMatch(/^400 .*PROTOCOL.*nests more than 256 levels deep/);
  });

  it("a guest holding every connection in a reconnect loop cannot keep the owner out", async () => {
    const flood = spawn(process.execPath, ["--input-type=module", "-e", `
      const net = await import("node:net");
      let opened = 0;
      const dial = () => {
        const s = net.connect(${JSON.stringify(socket)});
        s.on("connect", () => { if (++opened === 30) console.log("flooding"); });
        s.on("error", () => undefined);
        s.on("close", () => setImmediate(dial));
      };
      for (let i = 0; i < 30; i++) dial();
      setTimeout(() => process.exit(0), 30000).unref();`], { uid: g.uid, gid: g.gid, cwd: "/", stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((resolve) => flood.stdout.on("data", (d: Buffer) => d.toString().includes("flooding") && resolve()));
    const owner = connectDaemon(socket);
    try {
      for (let i = 0; i < 3; i++) {
        const fresh = connectDaemon(socket);
        await expect(fresh.call("list", {})).resolves.toHaveProperty("jobs");
        fresh.close();
      }
    } finally {
      owner.close();
      flood.kill("SIGKILL");
    }
  });

  it("a guest may hold connections-per-user authenticated connections; one more is refused by name", async () => {
    const client = join(ROOT, "dist/src/server/client.js");
    const r = await scriptAs(g, `
      const { connectDaemon } = await import(${JSON.stringify(client)});
      const clients = Array.from({ length: 5 }, () => connectDaemon(${JSON.stringify(socket)}));
      for (const c of clients.slice(0, 4)) await c.call("list", {});
      try { await clients[4].call("list", {}); console.log("fifth served"); } catch (e) { console.log(e.code + " " + e.message); }
      await clients[0].call("list", {});
      console.log("first still served");
      for (const c of clients) c.close();`);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^LIMIT_EXCEEDED uid \d+ has the most connections a user may hold open \(\[limits\] connections-per-user\)/m);
    expect(r.stdout).toContain("first still served");
  });
});

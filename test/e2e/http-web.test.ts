/**
 * Issue 40, the dashboard's serving and login: its built files on the HTTP listener's
 * non-API paths (a fixed table, security headers, no traversal, no listing, no symlink
 * followed), a plain notice when it is not built, and `jobtap web`'s one-time code run by a
 * real second user (jtwa1) over the Unix socket, traded once at POST /api/v1/login for a
 * session token of that user.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDaemon, type DaemonClient } from "../../src/server/client.js";
import { startDaemon, type Daemon } from "../../src/server/daemon.js";
import { requireBuild } from "./harness.js";
import { Api, listenerUrl } from "./http-util.js";
import { jobtapAs, realUser, type User } from "./users.js";

const alice = realUser("jtwa1");
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";
const INDEX = "<!doctype html><title>jobtap</title><script src=/assets/app.js></script>";

interface Instance {
  top: string;
  socket: string;
  daemon: Daemon;
  owner: DaemonClient;
  api?: Api;
  log: string;
}

async function instance(http: boolean, webRoot: string): Promise<Instance> {
  requireBuild();
  const top = mkdtempSync(join(tmpdir(), "jobtap-http-web-"));
  chmodSync(top, 0o755);
  mkdirSync(join(top, "pub"), { mode: 0o755 });
  const socket = join(top, "pub", "jobtap.sock");
  const config = join(top, "jobtap.toml");
  writeFileSync(config, `[daemon]\nguests = true\nsocket = ${JSON.stringify(socket)}\n${http ? 'http = "127.0.0.1:0"\n' : ""}`);
  const inst = { top, socket, log: "" } as Instance;
  inst.daemon = await startDaemon({ statedir: join(top, "state"), configPath: config, env: {}, log: (l) => (inst.log += l + "\n"), webRoot });
  inst.owner = connectDaemon(socket);
  if (http) inst.api = new Api(await listenerUrl(inst));
  return inst;
}

async function dispose(i: Instance | undefined): Promise<void> {
  if (!i) return;
  i.api?.close();
  i.owner.close();
  await i.daemon.shutdown("test done");
  rmSync(i.top, { recursive: true, force: true });
}

/** A GET with the raw path as given (no client-side normalisation of `..`). */
function rawGet(base: string, path: string): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: "GET" }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** A built dashboard, plus things that must never be served: a secret beside it, a symlink, a subdirectory. */
function fixture(dir: string): string {
  const root = join(dir, "web");
  mkdirSync(join(root, "assets", "sub"), { recursive: true });
  writeFileSync(join(root, "index.html"), INDEX);
  writeFileSync(join(root, "assets", "app.js"), "console.log('dashboard');\n");
  writeFileSync(join(root, "assets", "app.css"), "body { color: black }\n");
  writeFileSync(join(root, "assets", "sub", "inner.js"), "SUBDIR-SECRET");
  writeFileSync(join(root, "secret.txt"), "ROOT-SECRET");
  writeFileSync(join(dir, "outside.txt"), "OUTSIDE-SECRET");
  symlinkSync(join(dir, "outside.txt"), join(root, "assets", "link.js"));
  return root;
}

describe("http: the dashboard's files", { timeout: 60_000 }, () => {
  let i: Instance;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-web-root-"));
    i = await instance(true, fixture(dir));
  });
  afterAll(async () => {
    await dispose(i);
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves index.html at / and at client routes, with the security headers and no token", async () => {
    for (const path of ["/", "/jobs/f123", "/slots?x=1", "/favicon.ico"]) {
      const r = await i.api!.call("GET", path, undefined);
      expect(r.status, path).toBe(200);
      expect(r.text).toBe(INDEX);
      expect(r.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(r.headers["content-security-policy"]).toBe(CSP);
      expect(r.headers["x-content-type-options"]).toBe("nosniff");
      expect(r.headers["referrer-policy"]).toBe("no-referrer");
      expect(r.headers["cache-control"]).toBe("no-store");
      expect(r.headers["set-cookie"]).toBeUndefined();
    }
  });

  it("serves the assets that existed at start, by type, revalidated by ETag", async () => {
    const js = await i.api!.call("GET", "/assets/app.js", undefined);
    expect(js.status).toBe(200);
    expect(js.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(js.headers["content-security-policy"]).toBe(CSP);
    expect((await i.api!.call("GET", "/assets/app.css", undefined)).headers["content-type"]).toBe("text/css; charset=utf-8");
    const again = await i.api!.call("GET", "/assets/app.js", undefined, undefined, { "if-none-match": js.headers.etag as string });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
    const head = await i.api!.call("HEAD", "/", undefined);
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    // A file added after start is not in the table.
    writeFileSync(join(dir, "web", "assets", "late.js"), "LATE");
    expect((await i.api!.call("GET", "/assets/late.js", undefined)).status).toBe(404);
  });

  it("never serves a file outside the table: no traversal, no listing, no symlink, no subdirectory", async () => {
    const base = i.api!.base;
    for (const path of [
      "/assets/", "/assets", "/assets/link.js", "/assets/sub/inner.js", "/assets/sub", "/secret.txt", "/index.html/../secret.txt",
      "/assets/../secret.txt", "/assets/%2e%2e/secret.txt", "/assets/..%2fsecret.txt", "/assets/..%2f..%2foutside.txt", "/../outside.txt",
      "/%2e%2e/%2e%2e/etc/passwd", "/assets/%2e%2e%2f%2e%2e%2foutside.txt", "/assets/app.js%00.txt", "//etc/passwd",
    ]) {
      const r = await rawGet(base, path);
      expect(r.text, path).not.toMatch(/SECRET|root:/);
      expect([200, 400, 404], `${path}: ${r.status}`).toContain(r.status);
      // What is served is the page or a refusal, never a listing.
      if (r.status === 200) expect(r.text, path).toBe(INDEX);
      if (path.startsWith("/assets/") && !path.includes("..") && !path.includes("%2e") && !path.includes("%00")) expect(r.status, path).toBe(404);
    }
  });

  it("keeps /api and /metrics as they were: JSON errors, tokens required", async () => {
    const r = await i.api!.call("GET", "/api/v1/jobs", undefined);
    expect(r.status).toBe(401);
    expect((await i.api!.call("GET", "/api/v1/nope", undefined)).json.error.code).toBe("NOT_FOUND");
    expect((await i.api!.call("GET", "/api", undefined)).status).toBe(404);
    const post = await i.api!.call("POST", "/", undefined, {});
    expect(post.status).toBe(404);
    expect(post.json.error.code).toBe("NOT_FOUND");
  });
});

describe("http: no dashboard built", { timeout: 60_000 }, () => {
  let i: Instance;
  beforeAll(async () => {
    i = await instance(true, "/nonexistent/jobtap-web");
  });
  afterAll(() => dispose(i));

  it("answers / with a short plain-text notice, and says so in the log", async () => {
    const r = await i.api!.call("GET", "/", undefined);
    expect(r.status).toBe(503);
    expect(r.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(r.text).toContain("the web dashboard was not built");
    expect(i.log).toContain("(the web dashboard is not built)");
  });
});

describe("jobtap web without [daemon] http", { timeout: 60_000 }, () => {
  let i: Instance;
  beforeAll(async () => {
    i = await instance(false, "/nonexistent/jobtap-web");
  });
  afterAll(() => dispose(i));

  it("fails naming the config key", async () => {
    await expect(i.owner.call("web.code", {})).rejects.toMatchObject({ code: "CONFIG", message: expect.stringContaining("[daemon] http") });
  });
});

describe.skipIf(!alice)("jobtap web: one-time login codes", { timeout: 60_000 }, () => {
  const a = alice as User;
  let i: Instance;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-web-root-"));
    i = await instance(true, fixture(dir));
    await i.api!.document((await i.owner.call("token.create", { scope: "admin" })).token);
  });
  afterAll(async () => {
    await dispose(i);
    rmSync(dir, { recursive: true, force: true });
  });

  /** `jobtap web` as `user` (a real process with its uid): the printed URL's code. */
  async function codeOf(user: User): Promise<string> {
    const r = await jobtapAs(user, i.socket, ["web"]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const m = /^(http:\/\/127\.0\.0\.1:\d+)\/#login=([A-Za-z0-9_-]+)\n$/.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    expect(m![1]).toBe(i.api!.base);
    // 128 random bits, base64url.
    expect(m![2]).toMatch(/^[A-Za-z0-9_-]{22}$/);
    return m![2] as string;
  }

  it("a user's code becomes that user's session token, once", async () => {
    const code = await codeOf(a);
    const before = Date.now() / 1000;
    const r = await i.api!.checked_call("POST", "/api/v1/login", undefined, { code });
    expect(r.status).toBe(200);
    expect(r.headers["set-cookie"]).toBeUndefined();
    expect(r.json).toMatchObject({ user: a.name, userid: a.uid, owner: false, scope: "submit" });
    expect(r.json.expires).toBeGreaterThanOrEqual(Math.floor(before) + 12 * 3600);
    expect(r.json.expires).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 12 * 3600);
    const again = await i.api!.checked_call("POST", "/api/v1/login", undefined, { code });
    expect(again.status).toBe(401);
    expect(again.json.error.message).toContain("unknown, used or expired");
    const who = await i.api!.checked_call("GET", "/api/v1/whoami", r.json.token);
    expect(who.json).toEqual({ user: a.name, userid: a.uid, owner: false, scope: "submit" });
    // The session is the user's, not the owner's.
    expect((await i.api!.checked_call("GET", "/api/v1/plugins", r.json.token)).status).toBe(403);
    const listed = await jobtapAs(a, i.socket, ["token", "list", "--json"]);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ userid: a.uid, kind: "session", scope: "submit", expires: r.json.expires })]);
    const table = await jobtapAs(a, i.socket, ["token", "list"]);
    expect(table.stdout).toMatch(/\bsession\s+submit\b/);
  });

  it("the owner's code gives an admin session", async () => {
    const { url } = await i.owner.call("web.code", {});
    const code = url.split("#login=")[1] as string;
    const r = await i.api!.checked_call("POST", "/api/v1/login", undefined, { code });
    expect(r.json).toMatchObject({ owner: true, scope: "admin", userid: process.getuid!() });
    expect((await i.api!.checked_call("GET", "/api/v1/whoami", r.json.token)).json).toMatchObject({ owner: true, scope: "admin" });
    expect((await i.api!.checked_call("GET", "/api/v1/plugins", r.json.token)).status).toBe(200);
  });

  it("a made-up, malformed or missing code is a 401 or 400 JSON error, never a token", async () => {
    for (const body of [{ code: "A".repeat(22) }, { code: "" }, { code: "x".repeat(5000) }]) {
      const r = await i.api!.checked_call("POST", "/api/v1/login", undefined, body);
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe("NOT_AUTHENTICATED");
    }
    expect((await i.api!.checked_call("POST", "/api/v1/login", undefined, {})).status).toBe(400);
    expect((await i.api!.checked_call("POST", "/api/v1/login", undefined, { code: "x", user: 0 })).status).toBe(400);
    expect((await i.api!.checked_call("GET", "/api/v1/whoami", undefined)).status).toBe(401);
  });
});

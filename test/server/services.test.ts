/**
 * Plugin services through the daemon (`plugin.call`): the caller's uid is the credential;
 * the instance owner has the owner role, anyone else is a guest and reaches only services
 * opened to guests.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { connectDaemon, type DaemonClient } from "../../src/server/client.js";
import { startDaemon, type Daemon } from "../../src/server/daemon.js";

const UID = process.getuid?.() ?? 0;
/** A daemon owned (for the manager and host) by this uid sees this test process as a guest. */
const OTHER_OWNER = UID + 1;

/** `echo` (owner only) returns the payload and the credential it saw; `open` is for guests. */
const ECHO = `export default (p) => {
  p.serviceRegister("echo", (payload, cred) => ({ payload, cred }));
  p.serviceRegister("open", (payload, cred) => ({ userid: cred.userid }), { guests: true });
  p.serviceRegister("fail", () => { throw new Error("echo: refusing on purpose"); });
};
`;

describe("daemon: plugin services", () => {
  let dir: string;
  let daemon: Daemon | undefined;
  let client: DaemonClient;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-svc-"));
    writeFileSync(join(dir, "echo.mjs"), ECHO);
    daemon = await startDaemon({ statedir: dir, env: {}, log: () => undefined });
    client = connectDaemon(daemon.socketPath);
    await client.call("plugin.load", { path: join(dir, "echo.mjs") });
  });
  afterEach(async () => {
    client.close();
    await daemon?.shutdown("test");
    rmSync(dir, { recursive: true, force: true });
  });

  const call = (method: string, payload?: unknown, c: DaemonClient = client) =>
    c.call("plugin.call", { plugin: "echo", method, ...(payload === undefined ? {} : { payload }) });

  /** A second daemon whose owner is another uid, loading echo from its config: we are its guest. */
  async function asGuest<T>(fn: (guest: DaemonClient, d: Daemon) => Promise<T>): Promise<T> {
    const gdir = mkdtempSync(join(tmpdir(), "jobtap-svc-guest-"));
    writeFileSync(join(gdir, "jobtap.toml"), `[job-manager]\nplugins = [{ load = ${JSON.stringify(join(dir, "echo.mjs"))} }]\n`);
    const d = await startDaemon({ statedir: gdir, configPath: join(gdir, "jobtap.toml"), env: {}, log: () => undefined, owner: OTHER_OWNER });
    const guest = connectDaemon(d.socketPath);
    try {
      return await fn(guest, d);
    } finally {
      guest.close();
      await d.shutdown("test");
      rmSync(gdir, { recursive: true, force: true });
    }
  }

  it("passes the payload and gives the owner's uid the owner role", async () => {
    expect(await call("echo", { a: [1, 2] })).toEqual({ payload: { a: [1, 2] }, cred: { userid: UID, owner: true } });
  });

  it("refuses a guest on an owner-only service, lets it use an open one", async () => {
    await asGuest(async (guest) => {
      await expect(call("echo", undefined, guest)).rejects.toMatchObject({ code: ErrorCode.PERMISSION_DENIED, message: "Request requires owner credentials" });
      expect(await call("open", undefined, guest)).toEqual({ userid: UID });
    });
  });

  it("names an unknown service and reports the plugin's own error", async () => {
    await expect(call("nope")).rejects.toMatchObject({ code: ErrorCode.PLUGIN_NOT_FOUND, message: "echo.nope: no such service" });
    await expect(call("fail")).rejects.toThrow("echo: refusing on purpose");
    await expect(client.call("plugin.call", { plugin: "echo", method: 7 } as never)).rejects.toMatchObject({
      code: ErrorCode.PROTOCOL,
      message: "plugin.call: method must be a string",
    });
  });

  it("reaches builtin services by their plain name: .history for the caller only", async () => {
    const jobspec = {
      version: 1,
      resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
      tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
      attributes: { system: { duration: 0, cwd: "/tmp", exec: { test: { run_duration: "100s" } } } },
    };
    const { ids } = await client.call("submit", { jobspecs: [jobspec], count: 2 });
    expect(await client.call("plugin.call", { plugin: "history", method: "get" })).toEqual({ jobs: [...ids].reverse() });
    // The same uid is a guest of another daemon, where it has submitted nothing.
    await asGuest(async (guest) => {
      expect(await guest.call("plugin.call", { plugin: "history", method: "get" })).toEqual({ jobs: [] });
    });
  });
});

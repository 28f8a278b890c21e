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
const GUEST = UID + 1;

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

  const call = (method: string, userid: number, payload?: unknown) =>
    client.call("plugin.call", { plugin: "echo", method, userid, ...(payload === undefined ? {} : { payload }) });

  it("passes the payload and gives the owner's uid the owner role", async () => {
    expect(await call("echo", UID, { a: [1, 2] })).toEqual({ payload: { a: [1, 2] }, cred: { userid: UID, owner: true } });
  });

  it("refuses a guest on an owner-only service, lets it use an open one", async () => {
    await expect(call("echo", GUEST)).rejects.toMatchObject({ code: ErrorCode.PERMISSION_DENIED, message: "Request requires owner credentials" });
    expect(await call("open", GUEST)).toEqual({ userid: GUEST });
  });

  it("names an unknown service and reports the plugin's own error", async () => {
    await expect(call("nope", UID)).rejects.toMatchObject({ code: ErrorCode.PLUGIN_NOT_FOUND, message: "echo.nope: no such service" });
    await expect(call("fail", UID)).rejects.toThrow("echo: refusing on purpose");
    await expect(client.call("plugin.call", { plugin: "echo", method: "echo" } as never)).rejects.toMatchObject({
      code: ErrorCode.PROTOCOL,
      message: "plugin.call: userid must be an integer",
    });
  });

  it("reaches builtin services by their plain name: .history for the caller only", async () => {
    const jobspec = {
      version: 1,
      resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
      tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
      attributes: { system: { duration: 0, cwd: "/tmp", exec: { test: { run_duration: "100s" } } } },
    };
    const { ids } = await client.call("submit", { jobspecs: [jobspec], count: 2, userid: UID });
    expect(await client.call("plugin.call", { plugin: "history", method: "get", userid: UID })).toEqual({ jobs: [...ids].reverse() });
    expect(await client.call("plugin.call", { plugin: "history", method: "get", userid: GUEST })).toEqual({ jobs: [] });
  });
});

/**
 * The daemon hands one instance owner to the job manager and to the plugin host, so
 * `p.owner` (alloc-bypass, owner-only services) agrees with the manager's guest rules.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connectDaemon, type DaemonClient } from "../../src/server/client.js";
import { startDaemon, type Daemon } from "../../src/server/daemon.js";

const UID = process.getuid?.() ?? 0;
/** An owner uid that is not this process's: a missing hand-over would show as UID. */
const OTHER = UID + 4242;

describe("daemon: instance owner", () => {
  let dir: string;
  let daemon: Daemon | undefined;
  let client: DaemonClient | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-owner-"));
  });
  afterEach(async () => {
    client?.close();
    await daemon?.shutdown("test");
    daemon = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it("plugins see the owner the manager has", async () => {
    const plugin = join(dir, "who.mjs");
    writeFileSync(
      plugin,
      "export default function (p) { p.serviceRegister('owner', () => ({ owner: p.owner }), { guests: true }); }\n",
    );
    // Loaded from the config: this test process is a guest of an instance owned by OTHER.
    writeFileSync(join(dir, "jobtap.toml"), `[job-manager]\nplugins = [{ load = ${JSON.stringify(plugin)} }]\n`);
    daemon = await startDaemon({ statedir: dir, configPath: join(dir, "jobtap.toml"), env: {}, log: () => undefined, owner: OTHER });
    client = connectDaemon(daemon.socketPath);
    expect(daemon.manager.owner).toBe(OTHER);
    expect(await client.call("plugin.call", { plugin: "who.mjs", method: "owner" })).toEqual({ owner: OTHER });
  });

  it("defaults to this process's uid for both", async () => {
    const plugin = join(dir, "who.mjs");
    writeFileSync(plugin, "export default function (p) { p.on('plugin.query', () => ({ owner: p.owner })); }\n");
    daemon = await startDaemon({ statedir: dir, env: {}, log: () => undefined });
    client = connectDaemon(daemon.socketPath);
    await client.call("plugin.load", { path: plugin });
    expect(await client.call("plugin.query", { name: "who.mjs" })).toMatchObject({ owner: UID });
    expect(daemon.manager.owner).toBe(UID);
  });
});

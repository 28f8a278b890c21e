/**
 * Issue 31, the client's proof race: a victim whose socket path runs through a directory a
 * guest (jtsrv2) controls. The guest points a symlink at the real daemon's directory while
 * the client checks the auth directory, and at its own directory when the client writes the
 * proof; by path, the proof (with the real directory's inode in it) landed in the guest's
 * directory, ready to be moved into the real one and spent as the victim. The swap is made
 * deterministic by running it inside the client's write call.
 */
import { spawnSync } from "node:child_process";
import type * as FS from "node:fs";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDaemon } from "../../src/server/client.js";
import { startDaemon, type Daemon } from "../../src/server/daemon.js";
import { realUser, type User } from "./users.js";

const attacker = realUser("jtsrv2");
/** node:fs as its CommonJS object: assigning to it and syncing changes what ES imports see. */
const fs = createRequire(import.meta.url)("node:fs") as typeof FS;

describe.skipIf(!attacker)("security: the client's proof against a swapped path", () => {
  const a = attacker as User;
  let top: string;
  let daemon: Daemon;

  beforeAll(async () => {
    top = mkdtempSync(join(tmpdir(), "jobtap-srv-proof-"));
    chmodSync(top, 0o755);
    const pub = join(top, "pub");
    mkdirSync(pub, { mode: 0o755 });
    writeFileSync(join(top, "jobtap.toml"), `[daemon]\nguests = true\nsocket = ${JSON.stringify(join(pub, "jobtap.sock"))}\n`);
    daemon = await startDaemon({ statedir: join(top, "state"), configPath: join(top, "jobtap.toml"), env: {}, log: () => undefined });
  });
  afterAll(async () => {
    await daemon?.shutdown("test");
    rmSync(top, { recursive: true, force: true });
  });

  it("the proof is created in the directory the client checked, never in the one swapped in", async () => {
    // The guest's directory: `link` (its symlink, now to the real socket's directory) and
    // `fake/jobtap.sock.auth` (a directory anyone may write in, the guest's).
    const home = join(top, "guest");
    mkdirSync(join(home, "fake", "jobtap.sock.auth"), { recursive: true, mode: 0o755 });
    chmodSync(join(home, "fake", "jobtap.sock.auth"), 0o777);
    symlinkSync(join(top, "pub"), join(home, "link"));
    for (const p of [home, join(home, "fake"), join(home, "fake", "jobtap.sock.auth"), join(home, "link")]) {
      fs.lchownSync(p, a.uid, a.gid);
    }
    const fakeAuth = join(home, "fake", "jobtap.sock.auth");
    let seenInFake: string[] | undefined;
    const real = fs.writeFileSync;
    const patched = ((path: FS.PathOrFileDescriptor, data: string, opts?: FS.WriteFileOptions) => {
      if (seenInFake === undefined && /[0-9a-f]{36}$/.test(String(path))) {
        // The guest swaps its symlink between the client's check and its write.
        const swap = spawnSync("ln", ["-sfn", join(home, "fake"), join(home, "link")], { uid: a.uid, gid: a.gid });
        expect(swap.status).toBe(0);
        real(path, data, opts);
        seenInFake = readdirSync(fakeAuth);
        return;
      }
      real(path, data, opts);
    }) as typeof FS.writeFileSync;
    fs.writeFileSync = patched;
    syncBuiltinESMExports();
    const client = connectDaemon(join(home, "link", "jobtap.sock"));
    try {
      // The call itself fails (the swapped path has no socket); what matters is where the proof went.
      await client.call("list", {}).catch(() => undefined);
    } finally {
      fs.writeFileSync = real;
      syncBuiltinESMExports();
      client.close();
    }
    expect(seenInFake).toEqual([]);
  });
});

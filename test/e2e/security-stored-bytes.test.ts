/**
 * Issue 31, denial of service: a guest (jtbytes2, a real second uid) could fill the disk
 * with stored jobspecs (100,000 jobs of 1.9 MB). Against a root daemon with guests and a
 * small [limits] jobspec-bytes-per-user, the guest's third ~100 KB job is refused through
 * the CLI naming the key, the limit and its stored bytes; nothing accepted is lost, and a
 * purge of one of its jobs makes room again.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type Daemon } from "../../src/server/daemon.js";
import { BIN, requireBuild } from "./harness.js";
import { jobtapAs, realUser, runAs, type User } from "./users.js";

const guest = realUser("jtbytes2");

/** About 100 KB of jobspec: an environment variable under the 131,071-byte argument limit. */
const PAD = `--env=PAD=${"p".repeat(100_000)}`;

describe.skipIf(!guest)("security: a guest's stored jobspec bytes are bounded", { timeout: 60_000 }, () => {
  const g = guest as User;
  let top: string;
  let socket: string;
  let daemon: Daemon;

  beforeAll(async () => {
    requireBuild();
    top = mkdtempSync(join(tmpdir(), "jobtap-bytes-"));
    chmodSync(top, 0o755);
    mkdirSync(join(top, "pub"), { mode: 0o755 });
    socket = join(top, "pub", "jobtap.sock");
    const config = join(top, "jobtap.toml");
    writeFileSync(config, `[daemon]\nguests = true\nsocket = ${JSON.stringify(socket)}\n[limits]\njobspec-bytes-per-user = "250K"\n`);
    daemon = await startDaemon({ statedir: join(top, "state"), configPath: config, env: {}, log: () => undefined });
  });
  afterAll(async () => {
    await daemon?.shutdown("test");
    rmSync(top, { recursive: true, force: true });
  });

  it("the guest's job past the limit is refused at submit; a purge makes room; the owner is not affected", async () => {
    const submit = () => jobtapAs(g, socket, ["submit", "--urgency=0", PAD, "true"]);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await submit();
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      ids.push(r.stdout.trim());
    }
    const over = await submit();
    expect(over.status).not.toBe(0);
    expect(over.stderr).toMatch(
      new RegExp(
        `^jobtap submit: \\[limits\\] jobspec-bytes-per-user: user ${g.uid} stores 2\\d\\d,\\d\\d\\d bytes of jobspecs; this job's 10\\d,\\d\\d\\d would pass the limit of 256,000; purge inactive jobs \\(jobtap job purge --force\\) to make room`,
      ),
    );
    const listed = await jobtapAs(g, socket, ["jobs", "-a", "--no-header", "--format={id}"]);
    expect(listed.stdout.trim().split("\n").sort()).toEqual([...ids].sort());

    // The owner's (root's) jobs count on their own. Not spawnSync: the daemon runs in this process.
    const owner = await runAs({ name: "root", uid: 0, gid: 0 }, [BIN, "submit", "--urgency=0", PAD, "true"], { JOBTAP_SOCKET: socket });
    expect(owner.stderr).toBe("");
    expect(owner.status).toBe(0);

    // A cancelled job still holds its jobspec in the store until it is purged.
    expect((await jobtapAs(g, socket, ["cancel", ids[0]!])).status).toBe(0);
    expect((await submit()).status).not.toBe(0);
    const purged = await jobtapAs(g, socket, ["job", "purge", "--force", ids[0]!]);
    expect(purged.status).toBe(0);
    expect((await submit()).status).toBe(0);
  });
});

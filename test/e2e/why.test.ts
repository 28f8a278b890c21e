/**
 * Issue 36 through the real daemon and CLI: `jobtap job why` / `jobtap why` (text and
 * `--json`), the usual errors for an unknown id, `jobs -o '{reason}'`, and the `job info`
 * visibility rule with two real guests (jtwhy1 submits, jtwhy2 asks about it).
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDaemon, type DaemonClient } from "../../src/server/client.js";
import { startDaemon, type Daemon } from "../../src/server/daemon.js";
import { BIN, requireBuild } from "./harness.js";
import { jobtapAs, realUser, runAs, type User } from "./users.js";

const alice = realUser("jtwhy1");
const mallory = realUser("jtwhy2");

describe.skipIf(!alice || !mallory)("jobtap job why through the daemon", { timeout: 60_000 }, () => {
  const a = alice as User;
  const m = mallory as User;
  let top: string;
  let socket: string;
  let daemon: Daemon;
  let owner: DaemonClient;
  let blocker: string;
  let held: string;
  let queued: string;
  const root: User = { name: "root", uid: 0, gid: 0 };
  const cli = (args: string[]) => runAs(root, [BIN, ...args], { JOBTAP_SOCKET: socket });

  beforeAll(async () => {
    requireBuild();
    top = mkdtempSync(join(tmpdir(), "jobtap-why-"));
    chmodSync(top, 0o755);
    mkdirSync(join(top, "pub"), { mode: 0o755 });
    socket = join(top, "pub", "jobtap.sock");
    const config = join(top, "jobtap.toml");
    writeFileSync(config, `[daemon]\nguests = true\nsocket = ${JSON.stringify(socket)}\n[resources]\ncores = 2\n`);
    daemon = await startDaemon({ statedir: join(top, "state"), configPath: config, env: {}, log: () => undefined });
    owner = connectDaemon(socket);
    const sub = async (u: User, args: string[]) => {
      const r = await jobtapAs(u, socket, ["submit", "--setattr", "exec.test.run_duration=1h", ...args, "true"]);
      expect(r.stderr).toBe("");
      return r.stdout.trim();
    };
    blocker = await sub(a, ["-n", "2"]);
    held = await sub(a, ["--urgency", "0"]);
    queued = await sub(a, []);
  });
  afterAll(async () => {
    await owner?.call("cancel", { ids: [blocker, held, queued] }).catch(() => undefined);
    owner?.close();
    await daemon?.shutdown("test");
    rmSync(top, { recursive: true, force: true });
  });

  it("prints each job's reasons, layer/source first; --json gives the protocol objects", async () => {
    const r = await jobtapAs(a, socket, ["job", "why", held, queued]);
    expect(r.status).toBe(0);
    const [h, q] = r.stdout.split("\n\n");
    expect(h).toMatch(new RegExp(`^${held} SCHED\\n  state/manager: held \\(urgency 0\\) by jtwhy1 \\(uid ${a.uid}\\) since \\d{4}-`));
    expect(q).toContain(`${queued} SCHED\n  scheduler/scheduler: first in the queue, waiting for resources\n`);
    expect(q).toContain("  scheduler/scheduler: requests 1 of 0 free / 2 cores in the pool: does not fit now");
    const j = await jobtapAs(a, socket, ["why", "--json", queued]);
    const [ex] = JSON.parse(j.stdout) as Array<{ id: string; state: string; reasons: Array<Record<string, unknown>> }>;
    expect(ex!.id).toBe(queued);
    expect(ex!.reasons[1]).toMatchObject({ layer: "scheduler", code: "resources", figures: { cores: 1, cores_free: 0, cores_total: 2, fits: false } });
  });

  it("an unknown id is the usual error, and the other ids still answer", async () => {
    const r = await cli(["job", "why", "ƒ2", held]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("jobtap why: unknown job ƒ2\n");
    expect(r.stdout).toContain(`${held} SCHED`);
  });

  it("another guest gets job info's PERMISSION_DENIED; the owner may ask", async () => {
    const r = await jobtapAs(m, socket, ["job", "why", held]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`job why: job ${held} is uid ${a.uid}'s; only its user and the instance owner may read why it waits`);
    expect(r.stdout).toBe("");
    expect((await cli(["why", held])).stdout).toContain("held (urgency 0)");
  });

  it("jobs -o '{reason}' and INFO show a pending job's first reason", async () => {
    const r = await jobtapAs(a, socket, ["jobs", "-n", "-o", "{id} {reason}"]);
    const lines = r.stdout.trim().split("\n");
    expect(lines).toContain(`${queued} first in the queue`);
    expect(lines.find((l) => l.startsWith(held))).toMatch(/^\S+ held \(urgency 0\) by jtwhy1/);
    expect(lines.find((l) => l.startsWith(blocker))!.trim()).toBe(blocker);
    const info = await jobtapAs(a, socket, ["jobs", "-n"]);
    expect(info.stdout).toMatch(new RegExp(`${queued} .* first in the queue`));
  });
});

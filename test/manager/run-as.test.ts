/**
 * The local executor's rights and environment, through the library (no second user needed):
 * a launcher that cannot switch users makes a guest's local job refused at submit (a
 * test-executor job is not); a job without environment never sees the manager's; an
 * output FIFO is that job's exception and never blocks the manager; `output` reads only
 * what the job was started with. Real processes, simulated clock.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { processLauncher } from "../../src/manager/exec/run-as.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { jobspec, simManager, submitNow, tempDir, testJob, type SimManager } from "./helpers.js";

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A guest uid: neither the owner (1000) nor this process. */
const GUEST = (process.getuid?.() ?? 0) === 4242 ? 4243 : 4242;

async function sim(opts: Parameters<typeof simManager>[0] = {}) {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const s = await simManager({ statedir: dir, ...opts });
  cleanups.push(() => s.mgr.close());
  return { s, dir };
}

/** Waits (real time) for a job run by real processes to end. */
async function settle(s: SimManager, id: JobId) {
  for (let i = 0; i < 500 && s.mgr.job(id).state !== "INACTIVE"; i++) {
    await s.clock.advance(1);
    await new Promise((r) => setTimeout(r, 10));
  }
  return s.mgr.wait(id);
}

describe("local executor: whose rights, whose environment", () => {
  it("a launcher that cannot switch users refuses a guest's local job at submit, naming why; test jobs pass", async () => {
    const { s } = await sim({ launcher: processLauncher({ canSwitchUsers: false }) });
    const self = process.getuid?.() ?? 0;
    await expect(submitNow(s, jobspec(["true"]), { userid: GUEST })).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
      message: `this instance cannot run jobs as uid ${GUEST}: its daemon runs as uid ${self}, not root, and never runs a job as another user (a multi-user instance does: see docs/site.md)`,
    });
    const test = await submitNow(s, testJob(0), { userid: GUEST });
    expect((await settle(s, test)).result).toBe("COMPLETED");
    // The owner's own local job runs as this process's user, as before.
    expect((await settle(s, await submitNow(s, jobspec(["true"])))).result).toBe("COMPLETED");
  });

  it("a jobspec without environment runs with PATH only: the manager's environment never reaches it", async () => {
    process.env.JTEXEC_MANAGER_SECRET = "manager-secret";
    cleanups.push(() => void delete process.env.JTEXEC_MANAGER_SECRET);
    const { s, dir } = await sim();
    const id = await submitNow(s, jobspec(["sh", "-c", 'echo "${JTEXEC_MANAGER_SECRET-none} $PATH $JOBTAP_JOB_ID"'], { cwd: dir }));
    expect((await settle(s, id)).result).toBe("COMPLETED");
    const { data } = s.mgr.output(id, "stdout", 0);
    expect(data.trim().split(" ").slice(0, 2)).toEqual(["none", "/usr/local/bin:/usr/bin:/bin"]);
  });

  it("a FIFO as output is the job's exception naming it; the manager is never blocked", async () => {
    const { s, dir } = await sim();
    const fifo = join(dir, "fifo");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const id = await submitNow(s, jobspec(["true"], { cwd: dir, shell: { options: { output: { stdout: { type: "file", path: fifo } } } } }));
    const r = await settle(s, id);
    expect(r.result).toBe("FAILED");
    expect(r.errstr).toContain(`output "${fifo}": not a regular file`);
    // Never started: no output to read, and the FIFO is never opened for it.
    expect(() => s.mgr.output(id, "stdout", 0)).toThrow("never started a local process: it has no output");
  });
});

/**
 * The hook runner's run-as seam (`users` + a run's `runAs`, docs/hooks.md "Who hooks run
 * as"), without root: a seam's refusal is the run's spawn-error (nothing runs), undefined
 * means the runner's own starter, a starter it returns gets the run (and the kills go
 * through its own `kill`). The real launcher (and the path check's rule for a hook
 * run as another user, which needs a non-root test process or real users) is tested in
 * test/e2e/site-hooks.test.ts.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HookRunner, type HookRunAs, type HookUsers } from "../../src/hooks/index.js";
import { DIRECT, type ProcessStarter } from "../../src/hooks/process.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { hookDir, hookScript, memoryLog } from "./helpers.js";

describe("hook runner: the run-as seam", () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => ({ dir, cleanup } = hookDir()));
  afterEach(() => cleanup());
  const job = { job: 7n as JobId };

  it("a refusal is the run's spawn-error (EPERM, logged) and the program does not run", async () => {
    const hook = hookScript(dir, "h", `touch ${join(dir, "ran")}`);
    const log = memoryLog();
    const users: HookUsers = { starter: () => "job ƒ8 is not active: its hook cannot run as its user" };
    const r = await new HookRunner({ users, log }).run({ path: hook, runAs: job });
    expect(r).toMatchObject({ kind: "spawn-error", code: "EPERM", reason: "job ƒ8 is not active: its hook cannot run as its user" });
    expect(existsSync(join(dir, "ran"))).toBe(false);
    expect(log.lines.join("\n")).toContain("is not active");
  });

  it("undefined runs the hook with the runner's own starter; no `runAs` never asks the seam", async () => {
    const asked: HookRunAs[] = [];
    const users: HookUsers = { starter: (who) => (asked.push(who), undefined) };
    const runner = new HookRunner({ users });
    const hook = hookScript(dir, "h", "echo hi");
    expect(await runner.run({ path: hook, runAs: "root" })).toMatchObject({ kind: "exited", exitCode: 0, stdout: "hi\n" });
    expect(await runner.run({ path: hook })).toMatchObject({ kind: "exited", stdout: "hi\n" });
    expect(asked).toEqual(["root"]);
  });

  it("a starter from the seam runs the hook, and its kills go through the starter's `kill`", async () => {
    const kills: string[] = [];
    const starter: ProcessStarter = {
      start(run, events) {
        DIRECT.start(run, {
          ...events,
          spawned: (pid, release) =>
            events.spawned(pid, release, (sig) => {
              kills.push(sig);
              process.kill(-pid, sig);
            }),
          failed: (e) => events.failed(e),
          output: (s, c) => events.output(s, c),
          stdoutEnd: () => events.stdoutEnd(),
          exited: (c, s) => events.exited(c, s),
          closed: (d) => events.closed(d),
          lost: (w) => events.lost(w),
        });
      },
    };
    const runner = new HookRunner({ users: { starter: () => starter } });
    const hook = hookScript(dir, "slow", "echo started; exec sleep 30");
    const ctl = new AbortController();
    const r = await runner.run({ path: hook, runAs: job, signal: ctl.signal, onStdout: () => ctl.abort() });
    expect(r).toMatchObject({ kind: "signaled", signal: "SIGTERM", aborted: true });
    expect(kills[0]).toBe("SIGTERM");
  });
});

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { RealClock } from "../../src/manager/base/clock.js";
import { formatJobId } from "../../src/manager/base/ids.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import type { JobLimits } from "../../src/manager/core/limits.js";
import { jobspec, tempDir } from "./helpers.js";

// Real processes on the real clock: these tests are about the processes themselves.
describe("local executor", () => {
  let mgr: JobManager | undefined;
  let cleanup: (() => void) | undefined;

  afterEach(async () => {
    await mgr?.close();
    cleanup?.();
    mgr = undefined;
  });

  async function start(opts: { killTimeoutMs?: number; limits?: Partial<JobLimits> } = {}) {
    const t = tempDir();
    cleanup = t.cleanup;
    mgr = await createJobManager({
      statedir: t.dir,
      store: "memory",
      clock: new RealClock(),
      batchWindowMs: 1,
      resources: { cores: 2 },
      log: () => undefined,
      ...opts,
    });
    return { mgr, dir: t.dir };
  }

  it("true completes with status 0; false fails with exit code 1", async () => {
    const { mgr } = await start();
    const ok = await mgr.submit(jobspec(["true"]));
    const bad = await mgr.submit(jobspec(["false"]));
    expect(await mgr.wait(ok)).toMatchObject({ result: "COMPLETED", success: true });
    expect(await mgr.wait(bad)).toMatchObject({ result: "FAILED", errstr: "task(s) exited with exit code 1" });
    expect(mgr.job(bad).waitstatus).toBe(256);
    // Executor state is kept in the exec eventlog, never among RFC 21's events (issue 32).
    expect(mgr.eventlog(ok).map((e) => e.name).join(",")).toEqual(["submit", "validate", "depend", "priority", "alloc", "start", "finish", "release", "free", "clean"].join(","));
    expect(mgr.execEventlog(ok).map((e) => e.name)).toContain("exec-state");
  });

  it("runs argv without a shell, in cwd, with the jobspec environment, output to files", async () => {
    const { mgr, dir } = await start();
    const id = await mgr.submit(
      jobspec(["sh", "-c", 'echo "$GREETING from $(pwd)"; echo oops >&2'], {
        cwd: dir,
        environment: { GREETING: "hello", PATH: process.env.PATH ?? "/usr/bin:/bin" },
        shell: { options: { output: { stdout: { path: "out-{{id}}.txt" } } } },
      }),
    );
    await mgr.wait(id);
    const f58 = (await import("../../src/manager/base/ids.js")).formatJobId(id);
    expect(readFileSync(join(dir, `out-${f58}.txt`), "utf8")).toBe(`hello from ${dir}\n`);
    expect(readFileSync(join(dir, "jobs", f58, "stderr"), "utf8")).toBe("oops\n");
  });

  it("cancel sends SIGTERM: sleep ends, result CANCELED, status is the signal", async () => {
    const { mgr } = await start();
    const id = await mgr.submit(jobspec(["sleep", "30"]));
    for (let i = 0; i < 200 && !mgr.eventlog(id).some((e) => e.name === "start"); i++) await new Promise((r) => setTimeout(r, 10));
    mgr.cancel(id);
    const r = await mgr.wait(id);
    expect(r.result).toBe("CANCELED");
    expect(mgr.job(id).waitstatus).toBe(15);
  });

  it("SIGKILL follows SIGTERM after the grace period", async () => {
    const started = await start({ killTimeoutMs: 100 });
    const { mgr, dir } = started;
    const id = await mgr.submit(jobspec(["sh", "-c", "trap '' TERM; echo trapped; sleep 30 & wait; sleep 30"]));
    // The shell says when its trap is installed: cancel only then.
    const stdout = join(dir, "jobs", formatJobId(id), "stdout");
    await vi.waitFor(() => expect(existsSync(stdout) ? readFileSync(stdout, "utf8") : "").toBe("trapped\n"), { timeout: 10_000 });
    mgr.cancel(id);
    await mgr.wait(id);
    expect(mgr.job(id).waitstatus).toBe(9);
  });

  it("the duration is enforced with a timeout exception", async () => {
    const { mgr } = await start();
    const id = await mgr.submit(jobspec(["sleep", "30"], { duration: 0.3 }));
    const r = await mgr.wait(id);
    expect(r.result).toBe("TIMEOUT");
    expect(r.errstr).toMatch(/type=timeout resource allocation expired/);
  });

  it("a missing command fails the job with an exec exception", async () => {
    const { mgr } = await start();
    const id = await mgr.submit(jobspec(["/nonexistent/jobtap-command"]));
    const r = await mgr.wait(id);
    expect(r.result).toBe("FAILED");
    expect(r.errstr).toMatch(/type=exec task 0: cannot execute "\/nonexistent\/jobtap-command"/);
  });

  it("a command line the kernel refuses (E2BIG) is that job's exception; the manager goes on", async () => {
    // Submit-time limits raised out of the way: what the executor does when one gets through.
    const { mgr } = await start({ limits: { argumentBytes: 1e9, execBytes: 1e9, jobspecBytes: 1e9 } });
    const long = await mgr.submit(jobspec(["echo", "y".repeat(200 * 1024)]));
    const r = await mgr.wait(long);
    expect(r.result).toBe("FAILED");
    expect(r.errstr).toMatch(/type=exec task 0: cannot execute "echo": spawn E2BIG: .* argument 1 is 200\.0 KiB \(at most 128 KiB per string\)$/);
    const many = await mgr.submit(jobspec(["echo", ...Array.from({ length: 80 }, () => "z".repeat(120 * 1024))]));
    expect((await mgr.wait(many)).errstr).toMatch(/spawn E2BIG: the arguments and environment are too large to execute: they total 9600\.\d KiB$/);
    const ok = await mgr.submit(jobspec(["true"]));
    expect((await mgr.wait(ok)).result).toBe("COMPLETED");
  });
});

/**
 * Submit-time size limits ([limits] in the daemon's config): a job whose process the kernel
 * would refuse to start (E2BIG) is refused at submit, naming the entry and the limit; owner
 * and guests alike.
 */
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { jobspec, simManager, submitNow } from "./helpers.js";

const KB = 1024;

describe("submit-time size limits", () => {
  it("refuses a 300 KB environment variable and a 200 KB argument, for owner and guest", async () => {
    const s = await simManager();
    for (const userid of [1000, 2000]) {
      await expect(submitNow(s, jobspec(["true"], { environment: { X: "x".repeat(300 * KB) } }), { userid })).rejects.toMatchObject({
        code: ErrorCode.BAD_JOBSPEC,
        message:
          "jobspec: environment variable X is 307202 bytes, over the limit of 131071 bytes ([limits] argument-size); a process could not be started with it",
      });
      await expect(submitNow(s, jobspec(["echo", "x".repeat(200 * KB)]), { userid })).rejects.toThrow(
        "jobspec: tasks[0].command[1] is 204800 bytes, over the limit of 131071 bytes ([limits] argument-size)",
      );
    }
    expect(s.mgr.jobs({})).toEqual([]);
    await s.mgr.close();
  });

  it("refuses a command line and environment too large together; accepts what fits", async () => {
    const s = await simManager();
    const environment = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`V${i}`, "v".repeat(120 * KB)]));
    await expect(submitNow(s, jobspec(["true"], { environment }))).rejects.toThrow(
      /^jobspec: tasks\[0\]: the command line and environment are \d+ bytes together, over the limit of 1048576 bytes \(\[limits\] exec-size\)/,
    );
    const fits = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`V${i}`, "v".repeat(120 * KB)]));
    await expect(submitNow(s, jobspec(["true"], { environment: fits, exec: { test: {} } }))).resolves.toBeDefined();
    await s.mgr.close();
  });

  it("limits are configurable: a smaller jobspec size", async () => {
    const s = await simManager({ limits: { jobspecBytes: 2048 } });
    await expect(submitNow(s, jobspec(["echo", "y".repeat(4096)]))).rejects.toThrow(
      /^jobspec: \d+ bytes, over the limit of 2048 bytes \(\[limits\] jobspec-size\)$/,
    );
    await expect(submitNow(s, jobspec(["true"], { exec: { test: {} } }))).resolves.toBeDefined();
    await s.mgr.close();
  });
});

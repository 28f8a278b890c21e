/**
 * Submit-time size limits ([limits] in the daemon's config): a job whose process the kernel
 * would refuse to start (E2BIG) is refused at submit, naming the entry and the limit; owner
 * and guests alike.
 */
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { jobspec, simManager, submitNow, testJob } from "./helpers.js";

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

  it("[limits] jobs-per-user: a user at the limit is refused until one of their jobs ends; other users are not", async () => {
    const s = await simManager({ limits: { jobsPerUser: 2 } });
    const a = await submitNow(s, testJob(10), { userid: 2000 });
    await submitNow(s, testJob(10), { userid: 2000 });
    await expect(submitNow(s, testJob(10), { userid: 2000 })).rejects.toMatchObject({
      code: ErrorCode.LIMIT_EXCEEDED,
      message: "user 2000 already has 2 active jobs, the limit ([limits] jobs-per-user = 2); wait for some to finish",
    });
    await expect(submitNow(s, testJob(10), { userid: 3000 })).resolves.toBeDefined();
    s.mgr.cancel(a);
    for (let i = 0; i < 20 && s.mgr.job(a).state !== "INACTIVE"; i++) await s.clock.advance(10);
    expect(s.mgr.job(a).state).toBe("INACTIVE");
    await expect(submitNow(s, testJob(10), { userid: 2000 })).resolves.toBeDefined();
    expect(s.mgr.jobs({}).length).toBe(4);
    await s.mgr.close();
  });

  it("[limits] eventlog-entries: requests on a full eventlog are refused, a cancel still ends the job", async () => {
    const s = await simManager({ limits: { eventlogEntries: 8 } });
    const id = await submitNow(s, jobspec(["true"], { exec: { test: {} }, }), { urgency: 0 });
    let refused: unknown;
    for (let i = 0; i < 20 && refused === undefined; i++) {
      try {
        s.mgr.setUrgency(id, 0);
      } catch (e) {
        refused = e;
      }
      await s.clock.advance(10);
    }
    expect(refused).toMatchObject({ code: ErrorCode.LIMIT_EXCEEDED, details: { limit: "[limits] eventlog-entries" } });
    expect((refused as Error).message).toMatch(/^job \S+: its eventlog has 8 entries, the limit \(\[limits\] eventlog-entries = 8\)/);
    expect(s.mgr.eventlog(id).length).toBe(8);
    expect(() => s.mgr.raise(id, { type: "note", severity: 3 })).toThrow(/eventlog-entries/);
    await expect(s.mgr.update(id, { "attributes.system.duration": 60 })).rejects.toMatchObject({ code: ErrorCode.LIMIT_EXCEEDED });
    s.mgr.cancel(id);
    for (let i = 0; i < 20 && s.mgr.job(id).state !== "INACTIVE"; i++) await s.clock.advance(10);
    expect(s.mgr.job(id).state).toBe("INACTIVE");
    await s.mgr.close();
  });
});

/** debug.* events (spec §2.2, §2.7 step 4): only for jobs with the debug flag. */
import { describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { names, simManager, submitNow, tempDir, testJob } from "./helpers.js";

describe("debug events", () => {
  it("a debug job gets debug.alloc-request before alloc; others do not", async () => {
    const s = await simManager();
    const dbg = await submitNow(s, testJob(0), { flags: ["debug"] });
    const plain = await submitNow(s, testJob(0));
    await s.clock.advance(1);
    const log = names(s, dbg);
    expect(log.indexOf("debug.alloc-request")).toBeGreaterThan(log.indexOf("priority"));
    expect(log.indexOf("debug.alloc-request")).toBeLessThan(log.indexOf("alloc"));
    expect(names(s, plain).some((n) => n.startsWith("debug."))).toBe(false);
  });

  it("a running debug job gets debug.exec-reattach-start at restart", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const a = await simManager({ statedir: dir, store: "sqlite" });
      const dbg = await submitNow(a, testJob("10s"), { flags: ["debug"] });
      const plain = await submitNow(a, testJob("10s"));
      await a.clock.advance(1);
      expect([a.mgr.job(dbg).state, a.mgr.job(plain).state]).toEqual(["RUN", "RUN"]);
      await a.mgr.close();

      const b = await simManager({ statedir: dir, store: "sqlite", clock: new SimulatedClock(a.clock.now()) });
      expect(names(b, dbg).filter((n) => n === "debug.exec-reattach-start")).toHaveLength(1);
      expect(names(b, plain)).not.toContain("debug.exec-reattach-start");
      await b.clock.advance(11_000);
      expect(b.mgr.job(dbg).result).toBe("COMPLETED");
      await b.mgr.close();
    } finally {
      cleanup();
    }
  });
});

import { describe, expect, it } from "vitest";
import { names, simManager, submitNow, testJob } from "./helpers.js";

describe("smoke", () => {
  it("runs a test-exec job to INACTIVE", async () => {
    const s = await simManager();
    const id = await submitNow(s, testJob("1s"));
    expect(s.mgr.job(id).state).toBe("RUN");
    await s.clock.advance(1000);
    expect(s.mgr.job(id).state).toBe("INACTIVE");
    expect(names(s, id)).toEqual(["submit", "validate", "depend", "priority", "alloc", "start", "finish", "release", "free", "clean"]);
    expect(s.mgr.job(id).result).toBe("COMPLETED");
    await s.mgr.close();
    expect(s.logs).toEqual([]);
  });
});

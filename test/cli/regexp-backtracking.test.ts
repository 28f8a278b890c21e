/**
 * bin/jobtap turns on V8's fallback to a linear-time regexp engine, so a ClassAd regexp()
 * with catastrophic backtracking (from a user's ad or a hook's output) cannot stall the
 * daemon. Without the flag this evaluation runs for hours and the test times out.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const jobtap = fileURLToPath(new URL("../../bin/jobtap", import.meta.url));

describe("bin/jobtap regexp safety", () => {
  it("evaluates a catastrophically backtracking regexp() to a value", () => {
    const subject = "a".repeat(60) + "!";
    const r = spawnSync(process.execPath, [jobtap, "classad", "eval", `regexp("(a+)+$", "${subject}")`], {
      encoding: "utf8",
      timeout: 25_000,
    });
    expect(r.error).toBeUndefined();
    expect(r.stdout).toBe("false\n");
    expect(r.status).toBe(0);
  });
});

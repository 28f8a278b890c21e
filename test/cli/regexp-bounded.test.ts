/**
 * Catastrophic patterns finish quickly through bin/jobtap (V8's linear-time fallback is on
 * there): caseless ones are folded so the fallback applies, and back references with nested
 * repetition are refused (an error value) instead of backtracking for hours. Run as
 * separate processes with a deadline: on failure they would hang, and the deadline ends them.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { foldCase, unboundedBacktracking } from "../../src/classad/regex-safety.js";
import { parseAttrRegex } from "../../src/condor/regex.js";

const jobtap = fileURLToPath(new URL("../../bin/jobtap", import.meta.url));
const subject = "a".repeat(40) + "!";

function evalAd(expr: string) {
  return spawnSync(process.execPath, [jobtap, "classad", "eval", expr], { encoding: "utf8", timeout: 20_000 });
}

describe("regexp() work is bounded", () => {
  it("a caseless catastrophic pattern evaluates to a value", () => {
    const r = evalAd(`regexp("(a+)+$", "${subject}", "i")`);
    expect({ error: r.error?.message, stdout: r.stdout }).toEqual({ error: undefined, stdout: "false\n" });
    expect(evalAd(`regexp("(A+)+!$", "${subject}", "i")`).stdout).toBe("true\n");
  });

  it("a back reference inside nested repetition is an error value, not a hang", () => {
    const r = evalAd(`regexp("((a+)+)\\\\1$", "${subject}")`);
    expect({ error: r.error?.message, stdout: r.stdout }).toEqual({ error: undefined, stdout: "error\n" });
  });

  it("folding keeps what a caseless pattern matches", () => {
    for (const [pattern, yes, no] of [
      ["^req(uest)?[a-c]+\\d$", "REQUESTAbC1", "requestd1"],
      ["[^x]y", "Ay", "XY"],
      ["(?<Name>ab)\\p{L}", "ABc", "ab1"],
    ] as const) {
      const re = new RegExp(foldCase(pattern), "u");
      expect({ pattern, yes: re.test(yes), no: re.test(no) }).toEqual({ pattern, yes: true, no: false });
    }
    expect(unboundedBacktracking("(a+)+$")).toBeUndefined();
    expect(unboundedBacktracking("(\\w+)\\s\\1")).toBeUndefined();
    expect(unboundedBacktracking("((a+)+)\\1")).toContain("could backtrack without bound");
  });

  it("a transform's /regex/ is refused with a message, or folded, the same way", () => {
    expect(() => parseAttrRegex("/((a+)+)\\1$/")).toThrow("regex refused: pattern could backtrack without bound");
    const r = parseAttrRegex("/^(a+)+$/");
    expect(r.regex.flags).not.toContain("i");
    expect(r.regex.test("AaA")).toBe(true);
  });
});

/** The config reader's macro nesting limit: a long chain of $(...) is an error, not a stack overflow. */
import { describe, expect, it } from "vitest";
import { parseCondorConfig } from "../../src/condor/config-reader.js";
import { MACRO_DEPTH_LIMIT } from "../../src/condor/macros.js";
import { isJobtapError } from "../../src/errors.js";

/** `A0 = end`, `A<i> = $(A<i-1>)`: reading A<n> nests n macros deep. */
function chain(n: number) {
  const lines = ["A0 = end", ...Array.from({ length: n }, (_, i) => `A${i + 1} = $(A${i})`)];
  return parseCondorConfig(lines.join("\n") + "\n", { file: "chain.cfg" });
}

describe("macro depth limit", () => {
  it("expands a chain as deep as the limit", () => {
    expect(MACRO_DEPTH_LIMIT).toBe(64);
    expect(chain(MACRO_DEPTH_LIMIT - 1).get(`A${MACRO_DEPTH_LIMIT - 1}`)).toBe("end");
  });

  it("refuses a deeper chain with a CONDOR_CONFIG error naming the macro and the limit", () => {
    const n = MACRO_DEPTH_LIMIT + 1;
    let caught: unknown;
    try {
      chain(n).get(`A${n}`);
    } catch (e) {
      caught = e;
    }
    expect(isJobtapError(caught, "CONDOR_CONFIG")).toBe(true);
    expect((caught as Error).message).toMatch(/^chain\.cfg:\d+: macro A\d+ nests deeper than 64 levels$/);
  });

  it("a chain far past the limit fails the same way instead of overflowing the stack", () => {
    expect(() => chain(5000).get("A5000")).toThrow(/nests deeper than 64 levels/);
  });
});

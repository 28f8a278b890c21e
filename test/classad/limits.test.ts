/**
 * Bad input never overflows the stack, hangs or allocates without bound: deep nesting is a
 * syntax (or argument) error naming the limit, a 10 MB string and a 1,000,000-element list
 * are ordinary values, and strings that double at every attribute stop at MAX_STRING_LENGTH.
 * The limits are listed in docs/classad.md.
 */
import { describe, expect, it } from "vitest";
import {
  MAX_NESTING,
  adFromJSON,
  evalAttr,
  evalExpr,
  isError,
  parseExpr,
  parseNewAd,
  parseOldAd,
  readOldAd,
  toJS,
  unparseValue,
  type Value,
} from "../../src/classad/index.js";
import { MAX_STRING_LENGTH } from "../../src/classad/values.js";
import { isJobtapError } from "../../src/errors.js";

function syntaxError(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(isJobtapError(e, "CLASSAD_SYNTAX"), String(e)).toBe(true);
    return (e as Error).message;
  }
  throw new Error("expected a CLASSAD_SYNTAX error");
}

describe("deep nesting is a syntax error naming the limit", () => {
  const N = 100_000;
  it.each([
    ["parentheses", "(".repeat(N) + "1" + ")".repeat(N)],
    ["unary operators", "-".repeat(N) + "1"],
    ["lists", "{".repeat(N) + "}".repeat(N)],
    ["records", "[a = ".repeat(N) + "1" + " ]".repeat(N)],
    ["calls", "size(".repeat(N) + "1" + ")".repeat(N)],
  ])("100,000 nested %s", (_what, text) => {
    expect(syntaxError(() => parseExpr(text))).toMatch(new RegExp(`nested deeper than ${MAX_NESTING} levels`));
  });

  it("in an old-style ad the line is reported, and the other lines are kept", () => {
    const { ad, failed } = readOldAd(`A = 1\nB = ${"(".repeat(N)}1${")".repeat(N)}\nC = 3`);
    expect(failed.map((f) => f.line)).toEqual([2]);
    expect(ad.names()).toEqual(["A", "C"]);
  });

  it("a new-style ad nested 100,000 deep", () => {
    expect(syntaxError(() => parseNewAd("[a=".repeat(N) + "1" + "]".repeat(N)))).toMatch(/nested deeper/);
  });

  it("JSON nested 100,000 deep", () => {
    expect(syntaxError(() => adFromJSON(`{"a":${"[".repeat(N)}${"]".repeat(N)}}`))).toMatch(/JSON ClassAd a\[0\].*nested deeper than/);
  });

  it("a list value nested through 100,000 attributes converts to JS with an error, not a stack overflow", () => {
    const lines = ["a0 = 1"];
    for (let i = 1; i <= N; i++) lines.push(`a${i} = { a${i - 1} }`);
    const v = evalAttr(parseOldAd(lines.join("\n")), `a${N}`);
    expect(unparseValue(v, true)).toBe(`{ a${N - 1} }`);
    expect(() => toJS(v)).toThrow(/nested deeper than 1000 levels/);
  });
});

describe("a 10 MB string is an ordinary value", () => {
  const big = "x".repeat(10_000_000);
  it("in an expression, an old-style ad and string functions", () => {
    expect(evalExpr(`size("${big}")`)).toBe(10_000_000n);
    const ad = parseOldAd(`A = "${big}"\nB = size(strcat(A, "-", A))`);
    expect(evalAttr(ad, "B")).toBe(20_000_001n);
    expect(unparseValue(evalAttr(ad, "A"), true).length).toBe(10_000_002);
  });

  it("a string function result longer than MAX_STRING_LENGTH is error", () => {
    const ad = parseOldAd(`A = "${big}"\nSix = size(strcat(A, A, A, A, A, A))\nSeven = strcat(A, A, A, A, A, A, A)\nJ = join(A, { A, A, A, A, A, A, A })`);
    expect(10_000_000 * 7).toBeGreaterThan(MAX_STRING_LENGTH);
    expect(evalAttr(ad, "Six")).toBe(60_000_000n);
    expect(isError(evalAttr(ad, "Seven"))).toBe(true);
    expect(isError(evalAttr(ad, "J"))).toBe(true);
  });
});

describe("a 1,000,000-element list is an ordinary value", () => {
  it("parses, evaluates, prints", () => {
    const text = "{" + Array.from({ length: 1_000_000 }, (_, i) => i).join(",") + "}";
    const ad = parseOldAd(`L = ${text}\nS = size(L)\nT = sum(L)\nM = member(999999, L)`);
    expect([evalAttr(ad, "S"), evalAttr(ad, "T"), evalAttr(ad, "M")]).toEqual<Value[]>([1_000_000n, 499_999_500_000n, true]);
    expect(unparseValue(evalAttr(ad, "L"), true)).toHaveLength(text.length + 2);
  });
});

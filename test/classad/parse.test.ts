/** Parser errors, printing exactly as HTCondor does, and parse → unparse → parse stability. */
import { describe, expect, it } from "vitest";
import { MAX_NESTING, evalExpr, parseAd, parseExpr, unparse, unparseValue } from "../../src/classad/index.js";
import { isJobtapError } from "../../src/errors.js";

function syntaxError(text: string, old = false): { message: string; details?: Record<string, unknown> } {
  try {
    parseExpr(text, old);
  } catch (e) {
    expect(isJobtapError(e, "CLASSAD_SYNTAX")).toBe(true);
    return e as { message: string; details?: Record<string, unknown> };
  }
  throw new Error(`expected a syntax error for ${text}`);
}

describe("syntax errors", () => {
  it("name line:column and what was expected", () => {
    const e = syntaxError("a +\n  (b * ");
    expect(e.message).toMatch(/at 2:8: expected an expression, found end of input/);
    expect(e.details).toEqual({ line: 2, column: 8 });
    expect(syntaxError("f(1, 2").message).toMatch(/1:7: expected ',' or '\)' in the arguments of f\(\)/);
    expect(syntaxError("[a = 1 b = 2]").message).toMatch(/1:8: expected ';' or '\]' in a record/);
    expect(syntaxError("1 2").message).toMatch(/1:3: expected end of expression, found number 2/);
  });

  it("rejects unterminated strings, bad escapes, leading zeros and hex", () => {
    expect(syntaxError('x == "abc').message).toMatch(/1:6: unterminated string literal/);
    expect(syntaxError('"a\\0b"').message).toMatch(/\\0 is not allowed/);
    expect(syntaxError("010").message).toMatch(/leading zero/);
    expect(syntaxError("0x1F").message).toMatch(/hexadecimal/);
    expect(syntaxError("1.").message).toMatch(/digits after the '\.'/);
    expect(syntaxError("'unterminated").message).toMatch(/unterminated quoted attribute name/);
  });

  it("bounds nesting with an error instead of a stack overflow", () => {
    const deep = "(".repeat(MAX_NESTING + 5) + "1" + ")".repeat(MAX_NESTING + 5);
    expect(syntaxError(deep).message).toMatch(/nested deeper than/);
    expect(syntaxError("-".repeat(5000) + "x").message).toMatch(/nested deeper than/);
    expect(syntaxError(Array(2500).fill("1").join(" + ")).message).toMatch(/more than 2000 levels deep \(operators chained or nested\)/);
    expect(() => parseExpr("(".repeat(150) + "1" + ")".repeat(150))).not.toThrow();
  });

  it("accepts a huge flat list", () => {
    const e = parseExpr("{" + Array.from({ length: 100_000 }, (_, i) => i).join(",") + "}");
    expect(e.type === "list" && e.items.length).toBe(100_000);
  });
});

describe("old-syntax strings", () => {
  it("keep backslashes except before a quote", () => {
    const e = parseExpr('"a\\.b \\"hi\\" \\n"', true);
    expect(e).toMatchObject({ type: "literal", value: 'a\\.b "hi" \\n' });
    expect(unparse(e, true)).toBe('"a\\.b \\"hi\\" \\n"');
  });
  it("new syntax decodes C escapes", () => {
    expect(parseExpr('"a\\tb\\x"')).toMatchObject({ value: "a\tbx" });
    expect(unparse(parseExpr('"a\\tb"'))).toBe('"a\\tb"');
  });
});

describe("printing", () => {
  const cases: [string, string, string][] = [
    // [input, new-style, old-style]
    ["a+b*c", "a + b * c", "a + b * c"],
    ["(a+b)*c", "(a + b) * c", "(a + b) * c"],
    ["!a", " !a", " !a"],
    ["-a", " -a", " -a"],
    ["-5", "-5", "-5"],
    ["a =?= b", "a is b", "a =?= b"],
    ["a isnt b", "a isnt b", "a =!= b"],
    ["x ? 1 : 2", "x ? 1 : 2", "x ? 1 : 2"],
    ["x ?: 2", "x ?: 2", "x ?: 2"],
    ['strcat(Owner, "-", string(ClusterId))', 'strcat(Owner,"-",string(ClusterId))', 'strcat(Owner,"-",string(ClusterId))'],
    ["{1, 2, 3}", "{ 1,2,3 }", "{ 1,2,3 }"],
    ["[a = 1; b = 2.5]", "[ a = 1; b = 2.500000000000000E+00 ]", "[ a = 1; b = 2.5 ]"],
    ["TARGET.Memory >= MY.RequestMemory", "TARGET.Memory >= MY.RequestMemory", "TARGET.Memory >= MY.RequestMemory"],
    ["L[0]", "L[0]", "L[0]"],
    [".a", ".a", ".a"],
    ["'odd name' + 1", "'odd name' + 1", "'odd name' + 1"],
    ["[ 'true' = 1 ]", "[ 'true' = 1 ]", "[ 'true' = 1 ]"],
    ["25.0", "2.500000000000000E+01", "25.0"],
    ['"tab\\tq\\""', '"tab\\tq\\""', '"tab\tq\\""'],
    ["a >>> 2 << 1", "a >>> 2 << 1", "a >>> 2 << 1"],
  ];
  for (const [input, nw, old] of cases) {
    it(`prints ${input}`, () => {
      expect(unparse(parseExpr(input))).toBe(nw);
      expect(unparse(parseExpr(input), true)).toBe(old);
    });
  }
});

describe("round trip parse → unparse → parse", () => {
  const exprs = [
    'RequestCpus <= Cpus && RequestMemory <= Memory && Arch == "X86_64"',
    'ifThenElse(State == "Claimed" && Activity == "Idle", 0, 300)',
    '(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") || !(x =?= undefined)',
    "a ? b ? 1 : 2 : -c",
    "x ?: y ?: 3.25",
    "{ 1, { 2.5, \"s\" }, [ a = 1; b = { true, false } ] }",
    "[ x = 1; y = [ z = parent.x + 1 ] ].y.z",
    "L[i + 1].name[0]",
    "1e100 + 1.5e-7 - 0.1",
    "-9223372036854775808 + 9223372036854775807",
    "a & b | c ^ ~d << 1 >> 2 >>> 3",
    "a % b / c * d - e + f",
    "a < b <= c > d >= e == f != g is h isnt i",
    '"quote \\" and backslash"',
    "real(\"INF\") + real(\"NaN\") * real(\"-INF\")",
    "'weird name'.x + MY.'odd'",
    "regexps(\"(a)\", s, \"\\\\1\", \"ig\")",
  ];
  for (const text of exprs) {
    it(`is stable for ${text}`, () => {
      for (const old of [false, true]) {
        const once = unparse(parseExpr(text, old), old);
        const twice = unparse(parseExpr(once, old), old);
        expect(twice).toBe(once);
      }
    });
  }
});

describe("a long flat chain is not nesting", () => {
  it("a 1,001-term x==1 || ... chain parses and evaluates", () => {
    const chain = Array.from({ length: 1001 }, (_, i) => `x == ${i}`).join(" || ");
    expect(unparseValue(evalExpr(chain, { my: parseAd("[x = 1000]") }))).toBe("true");
  });
});

import { describe, expect, it } from "vitest";
import { flipGreediness, parseAttrRegex } from "../../src/condor/regex.js";
import { parseTransform, splitFirstArgument } from "../../src/condor/transform.js";
import { isJobtapError } from "../../src/errors.js";

function transformError(text: string, origin = { file: "x.rules" }): string {
  try {
    parseTransform(text, origin);
  } catch (e) {
    expect(isJobtapError(e, "CONDOR_TRANSFORM")).toBe(true);
    return (e as Error).message;
  }
  throw new Error("expected a CONDOR_TRANSFORM error");
}

describe("transform parser", () => {
  it("pulls NAME, UNIVERSE, REQUIREMENTS out of the body; NAME = x is a macro", () => {
    const t = parseTransform("NAME Site1\nUNIVERSE vanilla\nREQUIREMENTS Owner == \"a\"\nNAME = macro\nSET A 1\n");
    expect(t.name).toBe("Site1");
    expect(t.universe).toBe(5);
    expect(t.requirements).toBe('Owner == "a"');
    expect(t.steps).toEqual([
      { op: "macro", line: 4, name: "NAME", value: "macro", append: false },
      { op: "SET", line: 5, attr: "A", value: "1" },
    ]);
  });

  it("accepts universe names in any case and numbers", () => {
    expect(parseTransform("UNIVERSE VANILLA").universe).toBe(5);
    expect(parseTransform("universe 9").universe).toBe(9);
    expect(transformError("UNIVERSE nowhere")).toBe("x.rules:1: UNIVERSE nowhere is not a universe name or number");
  });

  it("SET A = 1, SET A, 1 and SET A 1 are the same; SET A=1 lacks a value", () => {
    const steps = ["SET A = 1", "SET A, 1", "SET A 1", "SET A= 1", "set A 1"].map(
      (l) => parseTransform(l).steps[0],
    );
    for (const s of steps) expect(s).toEqual({ op: "SET", line: 1, attr: "A", value: "1" });
    expect(transformError("SET A=1")).toBe("x.rules:1: SET needs 2 arguments");
    expect(transformError("DELETE")).toBe("x.rules:1: DELETE needs an argument");
  });

  it("parses every command and the regex forms", () => {
    const t = parseTransform(
      "DEFAULT D 2\nEVALSET E (A + 1)\nEVALMACRO M = A * 2\nCOPY A B\nRENAME /^Request(.+)/ Time\\1\nDELETE /(.+)Err/\nDELETE X\n",
    );
    expect(t.steps.map((s) => s.op)).toEqual(["DEFAULT", "EVALSET", "EVALMACRO", "COPY", "RENAME", "DELETE", "DELETE"]);
    const rename = t.steps[4] as { from: { source: string; regex: RegExp }; to: string };
    expect(rename.from.source).toBe("^Request(.+)");
    // Caseless, as HTCondor always matches these (folded into the pattern: see regex-safety.ts).
    expect(rename.from.regex.test("requestcpus")).toBe(true);
    expect(rename.to).toBe("Time\\1");
  });

  it("an unknown command is an error naming file and line", () => {
    expect(transformError("SET A 1\nFROB A 1\n")).toBe("x.rules:2: FROB is not a valid transform keyword");
  });

  it("maps text lines to config file lines through the origin", () => {
    const msg = transformError("SET A 1\nNOPE\n", { file: "router.cfg", lines: [14, 17] } as never);
    expect(msg).toBe("router.cfg:17: NOPE is not a valid transform keyword");
    expect(transformError("SET A 1\nNOPE\n", { file: "r.cfg", firstLine: 30 } as never)).toMatch(/^r\.cfg:31:/);
  });

  it("builds if/elif/else trees and rejects unbalanced ones", () => {
    const t = parseTransform("if defined X\nSET A 1\nelif $(Y)\nSET A 2\nelse\nif true\nSET A 3\nendif\nendif\nSET B 1\n");
    expect(t.steps).toHaveLength(2);
    const top = t.steps[0] as { op: string; branches: { condition: string }[]; otherwise: unknown[] };
    expect(top.branches.map((b) => b.condition)).toEqual(["defined X", "$(Y)"]);
    expect(top.otherwise).toHaveLength(1);
    expect(transformError("SET A 1\nif true\nSET B 1\n")).toBe("x.rules:2: if has no matching endif");
    expect(transformError("endif")).toBe("x.rules:1: endif without a matching if");
    expect(transformError("if true\nelse\nelif false\nendif")).toBe("x.rules:3: elif after else");
  });

  it("@=tag macro blocks inside a transform, and their unterminated form", () => {
    const t = parseTransform("LIST @=end\n a\n # c\n b\n@end\nSET X 1\n");
    expect(t.steps[0]).toEqual({ op: "macro", line: 1, name: "LIST", value: "a\nb", append: false });
    expect(transformError("LIST @=end\na\n")).toBe("x.rules:1: unterminated @=end block for LIST (no closing @end line)");
  });

  it("a regex that does not compile or has an unknown flag is a load error", () => {
    expect(transformError("DELETE /(unclosed/")).toMatch(/^x\.rules:1: DELETE \/\(unclosed\/: regex does not compile/);
    expect(transformError("COPY /a/x B")).toMatch(/^x\.rules:1: COPY \/a\/x: invalid regex: unknown flag "x"/);
  });

  it("REQUIREMENTS that does not parse is a load error", () => {
    expect(transformError("REQUIREMENTS (a ==")).toMatch(/^x\.rules:1: REQUIREMENTS \(a == does not parse/);
  });

  it("TRANSFORM ends the body; include is refused", () => {
    const t = parseTransform("SET A 1\nTRANSFORM 3\nSET B 2\n");
    expect(t.steps).toHaveLength(1);
    expect(t.transformArgs).toBe("3");
    expect(transformError("include : other")).toBe("x.rules:1: include is not allowed in a transform");
  });
});

describe("argument splitting and regexes", () => {
  it("a /regex/ may contain spaces and keeps its flags", () => {
    expect(splitFirstArgument("/a b/i New")).toEqual({ first: "/a b/i", remainder: "New" });
    expect(splitFirstArgument("A, 1, 2")).toEqual({ first: "A", remainder: "1, 2" });
  });

  it("matches case-insensitively and emulates PCRE's U flag", () => {
    expect(parseAttrRegex("/^max/").regex.test("MaxHosts")).toBe(true);
    expect(flipGreediness("a.*b+?c{1,2}(?:x)?[*+]")).toBe("a.*?b+c{1,2}?(?:x)??[*+]");
    const lazy = parseAttrRegex("/(.+)e/U").regex.exec("Request")!;
    expect(lazy[1]).toBe("R");
  });
});

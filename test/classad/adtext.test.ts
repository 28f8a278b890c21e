/** Old-style ad I/O at hook boundaries (htcondor.md §1 item 4, §8.1), new-style and JSON ads. */
import { describe, expect, it } from "vitest";
import {
  ClassAd,
  UNDEFINED,
  adFromJSON,
  adToJSON,
  fromJS,
  evalAttr,
  parseAd,
  parseNewAd,
  parseOldAd,
  printNewAd,
  printOldAd,
  readOldAd,
  unparse,
} from "../../src/classad/index.js";
import { isJobtapError } from "../../src/errors.js";

describe("old-style ad text", () => {
  it("reads Name = expr lines with HTCondor's insert rule", () => {
    const { ad, failed } = readOldAd('A = 1 2\nK = 1; L = 2\nS = "x"\r\n   Indented   = 3\n\nTab\t= 4\n');
    expect(failed).toEqual([]);
    expect(ad.names()).toEqual(["A", "K", "S", "Indented", "Tab\t"]);
    expect(evalAttr(ad, "A")).toBe(1n);
    expect(evalAttr(ad, "K")).toBe(1n);
    expect(ad.has("L")).toBe(false);
    expect(evalAttr(ad, "S")).toBe("x");
    expect(evalAttr(ad, "indented")).toBe(3n);
  });

  it("reports failed lines with their numbers", () => {
    const { ad, failed } = readOldAd("Good = 1\nno equals here\n = 5\n'Q' = 1\nBad = 1 +\n");
    expect(ad.names()).toEqual(["Good"]);
    expect(failed.map((f) => f.line)).toEqual([2, 3, 4, 5]);
    expect(failed[0]!.message).toMatch(/no '='/);
    expect(failed[3]!.message).toMatch(/attribute Bad: .*expected an expression/);
  });

  it("skips # comment lines only when asked (ad files, not hook output)", () => {
    const text = "# a comment\n  # another = 1\nA = 1\n";
    // Without the option the insert rule applies: no '=' fails, a '#' name is just a name.
    const raw = readOldAd(text);
    expect(raw.failed.map((f) => f.line)).toEqual([1]);
    expect(raw.ad.names()).toEqual(["# another", "A"]);
    const { ad, failed } = readOldAd(text, { comments: true });
    expect(failed).toEqual([]);
    expect(ad.names()).toEqual(["A"]);
  });

  it("parseOldAd throws CLASSAD_SYNTAX naming the line", () => {
    try {
      parseOldAd("A = 1\nB = (2\n");
      throw new Error("no error");
    } catch (e) {
      expect(isJobtapError(e, "CLASSAD_SYNTAX")).toBe(true);
      expect((e as Error).message).toMatch(/line 2: attribute B: .*at 1:/);
    }
  });

  it("uses the old string rules and prints as sPrintAd", () => {
    const ad = parseOldAd('Cmd = "C:\\bin\\x.exe"\nQ = "say \\"hi\\""\nR = 3.5\nT = 25.0\nE = a =?= b\nL = {1, 2}\nN = [a = 1.5; b = "c\\d"]\n');
    expect(evalAttr(ad, "Cmd")).toBe("C:\\bin\\x.exe");
    expect(evalAttr(ad, "Q")).toBe('say "hi"');
    expect(printOldAd(ad)).toBe(
      'Cmd = "C:\\bin\\x.exe"\nQ = "say \\"hi\\""\nR = 3.5\nT = 25.0\nE = a =?= b\nL = { 1,2 }\nN = [ a = 1.5; b = "c\\d" ]\n',
    );
    expect(printNewAd(ad)).toBe(
      '[ Cmd = "C:\\\\bin\\\\x.exe"; Q = "say \\"hi\\""; R = 3.500000000000000E+00; T = 2.500000000000000E+01; E = a is b; L = { 1,2 }; N = [ a = 1.500000000000000E+00; b = "c\\\\d" ] ]',
    );
  });

  it("old → print → read is stable", () => {
    const text = 'A = 1\nB = "x\\y"\nC = A + 2.5\nD = !A\nE = TARGET.x =!= undefined\nF = { "a",[ q = 1 ] }\n';
    const once = printOldAd(parseOldAd(text));
    expect(printOldAd(parseOldAd(once))).toBe(once);
  });
});

describe("new-style ads", () => {
  it("parse records with comments, quoted names and extra semicolons", () => {
    const ad = parseNewAd("[ a = 1; /* c */ 'b c' = \"x\\ty\";; d = [ e = a ] ] ");
    expect(ad.names()).toEqual(["a", "b c", "d"]);
    expect(evalAttr(ad, "b c")).toBe("x\ty");
    expect(printNewAd(ad)).toBe("[ a = 1; 'b c' = \"x\\ty\"; d = [ e = a ] ]");
    expect(printNewAd(parseNewAd(printNewAd(ad)))).toBe(printNewAd(ad));
  });
  it("report the position of errors", () => {
    expect(() => parseNewAd("[ a = 1 ] junk")).toThrow(/1:11: expected end of input after the ClassAd/);
    expect(() => parseNewAd("a = 1")).toThrow(/expected '\[' to start a ClassAd/);
  });
  it("parseAd picks the syntax", () => {
    expect(parseAd("  [ a = 1 ]").names()).toEqual(["a"]);
    expect(parseAd("a = 1\nb = 2").names()).toEqual(["a", "b"]);
  });
});

describe("ClassAd", () => {
  it("is case-insensitive, keeps the first spelling and insertion order", () => {
    const ad = new ClassAd();
    ad.set("RequestCpus", 1n).set("Owner", "alice").setExpr("requestcpus", "2 + 2");
    expect(ad.names()).toEqual(["RequestCpus", "Owner"]);
    expect(evalAttr(ad, "REQUESTCPUS")).toBe(4n);
    expect(unparse(ad.lookup("requestCPUs")!)).toBe("2 + 2");
    expect(ad.get("REQUESTCPUS")).toBe(ad.lookup("requestcpus"));
    expect(ad.delete("OWNER")).toBe(true);
    expect(ad.has("owner")).toBe(false);
    expect(ad.size).toBe(1);
  });
  it("clone is independent; update overrides", () => {
    const a = parseOldAd("x = 1\ny = 2");
    const b = a.clone();
    b.set("x", 5n);
    expect(evalAttr(a, "x")).toBe(1n);
    a.update(parseOldAd("y = 9\nz = 3"));
    expect(a.names()).toEqual(["x", "y", "z"]);
    expect(evalAttr(a, "y")).toBe(9n);
  });
  it("a nested ad value gets its owner as parent scope", () => {
    const outer = parseOldAd("base = 10");
    const inner = parseNewAd("[ v = base + 1 ]");
    outer.set("Inner", inner);
    expect(inner.parent).toBe(outer);
    expect(evalAttr(outer, "Inner").constructor).toBe(ClassAd);
  });
});

describe("JSON ads", () => {
  it("round-trips literals and expressions", () => {
    const ad = parseOldAd('A = 1\nB = 2.5\nS = "x"\nT = true\nU = undefined\nL = {1, "a"}\nN = [q = 1]\nR = A + 1\nBig = 9223372036854775807');
    const json = adToJSON(ad);
    expect(json).toEqual({ A: 1, B: 2.5, S: "x", T: true, U: null, L: [1, "a"], N: { q: 1 }, R: "/Expr(A + 1)/", Big: "/Expr(9223372036854775807)/" });
    const back = adFromJSON(JSON.stringify(json));
    expect(printOldAd(back)).toBe(printOldAd(ad));
    expect(evalAttr(back, "R")).toBe(2n);
  });
  it("fromJS maps plain JS values with the JSON rules", () => {
    const ad = new ClassAd().set("n", fromJS(5)).set("r", fromJS(2.5)).set("l", fromJS([1, "a", null])).set("o", fromJS({ q: true }));
    expect(printOldAd(ad)).toBe('n = 5\nr = 2.5\nl = { 1,"a",undefined }\no = [ q = true ]\n');
  });

  it("integral JSON numbers beyond the 64-bit range stay reals instead of wrapping", () => {
    const ad = adFromJSON('{"huge": 1e300, "over": 12345678901234567890, "edge": 9007199254740992, "neg": -4611686018427387904}');
    expect(printOldAd(ad)).toBe("huge = 1E+300\nover = 1.234567890123457E+19\nedge = 9007199254740992\nneg = -4611686018427387904\n");
  });

  it("names the bad attribute", () => {
    expect(() => adFromJSON({ ok: 1, bad: "/Expr(1 +)/" })).toThrow(/JSON ClassAd bad: .*expected an expression/);
    expect(() => adFromJSON("[1]")).toThrow(/expected an object/);
    expect(() => adFromJSON("{nope")).toThrow(/JSON ClassAd/);
  });
});

describe("ClassAd evaluation helpers", () => {
  it("evaluate / evaluateExpr use MY = the ad, optional TARGET and evaluator", () => {
    const job = parseOldAd("RequestCpus = 2\nNeed = TARGET.Cpus >= RequestCpus");
    const slot = parseOldAd("Cpus = 4");
    expect(job.evaluate("Need", slot)).toBe(true);
    expect(job.evaluate("Need")).toBe(UNDEFINED);
    expect(job.evaluateExpr("RequestCpus * 2")).toBe(4n);
  });
  it("a chained parent ad supplies attributes the child lacks", () => {
    const cluster = parseOldAd('Owner = "alice"\nCmd = "/bin/sim"');
    const proc = parseOldAd("ProcId = 3\nCmd = \"/bin/other\"");
    proc.parent = cluster;
    expect(proc.evaluateExpr('strcat(Owner, ":", Cmd, ":", string(ProcId))')).toBe("alice:/bin/other:3");
    expect(printOldAd(proc)).toBe('ProcId = 3\nCmd = "/bin/other"\n');
  });
});

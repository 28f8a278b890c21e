import { describe, expect, it } from "vitest";
import { ClassAd, Evaluator, parseOldAd, unparse } from "../../src/classad/index.js";
import { TransformRun } from "../../src/condor/apply.js";
import { parseCondorConfig } from "../../src/condor/config-reader.js";
import { parseTransform } from "../../src/condor/transform.js";

const JOB = [
  "ClusterId = 1",
  "ProcId = 0",
  'Owner = "alice"',
  "ExitBySignal = false",
  "NumCkpts = 0",
  "TransferInputSizeMB = 0",
  'TransferErr = "e"',
  'Err = "job.err"',
  "MaxHosts = 1",
  "NiceUser = false",
  'RemoteUser = "bob"',
  'User = "alice@site"',
  "RequestCpus = 1",
  "RequestMemory = 1024",
  "RequestDisk = 100",
  "ResidentSetSize = 500",
  "DiskUsage = 10",
  "JobStatus = 1",
].join("\n");

function job(): ClassAd {
  return parseOldAd(JOB);
}

function run(rules: string, ad = job(), run = new TransformRun({ evaluator: new Evaluator() })) {
  const outcome = run.apply(parseTransform(rules, { file: "t.rules" }), ad);
  if (!outcome.ok) throw new Error(outcome.error);
  return outcome;
}

function text(ad: ClassAd, name: string): string | undefined {
  const e = ad.lookup(name);
  return e && unparse(e, true);
}

describe("transform commands (condor_transform_ads behaviours)", () => {
  it("SET, DEFAULT, COPY, RENAME, DELETE and DELETE /regex/", () => {
    const { ad } = run(
      'SET ClusterId 200\nDEFAULT Fooo "test"\nDEFAULT Owner "mallory"\nCOPY ExitBySignal TransferIn\n' +
        "RENAME NumCkpts NumCheckPoints\nDELETE TransferInputSizeMB\nDELETE /(.+)Err/\n",
    );
    expect(text(ad, "ClusterId")).toBe("200");
    expect(text(ad, "Fooo")).toBe('"test"');
    expect(text(ad, "Owner")).toBe('"alice"');
    expect(text(ad, "TransferIn")).toBe("false");
    expect(ad.has("NumCkpts")).toBe(false);
    expect(text(ad, "NumCheckPoints")).toBe("0");
    expect(ad.has("TransferInputSizeMB")).toBe(false);
    expect(ad.has("TransferErr")).toBe(false);
    expect(ad.has("Err")).toBe(true);
  });

  it("the input ad is never modified", () => {
    const original = job();
    run("SET ClusterId 200\nDELETE Owner\n", original);
    expect(text(original, "ClusterId")).toBe("1");
    expect(original.has("Owner")).toBe(true);
  });

  it("SET stores the expression unevaluated; EVALSET stores the value", () => {
    const { ad } = run("SET A ResidentSetSize / 100\nEVALSET MemoryUsage ( ResidentSetSize / 100 )\n");
    expect(text(ad, "A")).toBe("ResidentSetSize / 100");
    expect(text(ad, "MemoryUsage")).toBe("5");
  });

  it("EVALMACRO feeds a later SET through $(macro)", () => {
    const { ad } = run("EVALMACRO WantDisk = ( DiskUsage * 2 )\nSET RequestDisk ( $(WantDisk) / 1024 )\n");
    expect(text(ad, "RequestDisk")).toBe("(20 / 1024)");
  });

  it("COPY /regex/ and RENAME /regex/ with \\0 and \\1, case-insensitive", () => {
    const { ad } = run("COPY /^Max(.+)/ TotalSuspensions\nRENAME /(.+)User/ Test\\0\nRENAME /^request(.+)/ Time\\1\n");
    expect(text(ad, "TotalSuspensions")).toBe("1");
    expect(ad.has("TestNiceUser") && ad.has("TestRemoteUser")).toBe(true);
    expect(ad.has("NiceUser") || ad.has("RemoteUser")).toBe(false);
    expect(text(ad, "User")).toBe('"alice@site"');
    expect([text(ad, "TimeCpus"), text(ad, "TimeMemory"), text(ad, "TimeDisk")]).toEqual(["1", "1024", "100"]);
    expect(ad.has("RequestCpus")).toBe(false);
  });

  it("COPY of a missing attribute or to an invalid name is a no-op", () => {
    const { ad, warnings } = run("COPY Nope Other\nCOPY Owner 9bad\n");
    expect(ad.has("Other")).toBe(false);
    expect(ad.has("9bad")).toBe(false);
    expect(warnings[0]).toMatch(/^t\.rules:2: COPY Owner: "9bad" is not a valid attribute name/);
  });

  it("DEFAULT leaves an attribute whose value is the literal undefined alone (HTCondor's code)", () => {
    const ad = job();
    ad.setExpr("Maybe", "undefined");
    expect(text(run("DEFAULT Maybe 5\n", ad).ad, "Maybe")).toBe("undefined");
  });

  it("a SET value that does not parse is skipped with a warning naming the line", () => {
    const { ad, warnings } = run("SET Good 1\nSET Bad (1 + \nSET After 2\n");
    expect(ad.has("Bad")).toBe(false);
    expect(text(ad, "After")).toBe("2");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^t\.rules:2: SET Bad: "\(1 \+" is not a valid expression/);
  });
});

describe("macros inside transforms", () => {
  it("$(MY.attr): strings without quotes, other expressions unparsed", () => {
    const ad = job();
    ad.setExpr("Expr", "RequestCpus * 2", true);
    const { ad: out } = run('SET Who "$(MY.Owner)-x"\nSET Twice $(MY.Expr) + 1\n', ad);
    expect(text(out, "Who")).toBe('"alice-x"');
    expect(text(out, "Twice")).toBe("RequestCpus * 2 + 1");
  });

  it("a macro is seen as of that point in the file; undefined expands to empty or the default", () => {
    const { ad } = run("X = 1\nSET A $(X)\nX = 2\nSET B $(X)\nSET C $(NOPE:7)\nX = $(X)0\nSET D $(X)\n");
    expect([text(ad, "A"), text(ad, "B"), text(ad, "C"), text(ad, "D")]).toEqual(["1", "2", "7", "20"]);
  });

  it("falls back to the daemon configuration, and to built-in macros", () => {
    const config = parseCondorConfig("COLLECTOR_NAME = pool-one\n");
    const r = new TransformRun({ evaluator: new Evaluator(), fallback: config.macroScope("config") });
    const { ad } = run('SET Pool "$(COLLECTOR_NAME)"\nSET Cluster $(IsClusterAd)\n', job(), r);
    expect(text(ad, "Pool")).toBe('"pool-one"');
    expect(text(ad, "Cluster")).toBe("false");
  });

  it("function macros $INT, $REAL, $STRING, $EVAL, $SUBSTR, $CHOICE evaluate against the ad", () => {
    const { ad } = run(
      'SET I $INT(MY.RequestMemory)\nSET F "$REAL(ResidentSetSize / 8.0,%.2f)"\nSET S "$STRING(Owner)"\n' +
        'SET E $EVAL(RequestCpus + 1)\nL = abcdef\nSET Sub "$SUBSTR(L,1,3)"\nSET Ch "$CHOICE(1,a,b,c)"\n',
    );
    expect([text(ad, "I"), text(ad, "F"), text(ad, "S"), text(ad, "E")]).toEqual(["1024", '"62.50"', '"alice"', "2"]);
    expect([text(ad, "Sub"), text(ad, "Ch")]).toEqual(['"bcd"', '"b"']);
  });

  it("$REAL prints %.16G by default and forces a '.' into a formatted result, as HTCondor does", () => {
    const { ad } = run(
      'SET A "$REAL(ResidentSetSize / 4.0)"\nSET B "$REAL(1e20)"\nSET C "$REAL(RequestCpus)"\n' +
        'SET D "$REAL(RequestCpus,%.0f)"\nSET E "$REAL(2.5,%.0f)"\nSET F "$REAL(1024.5,%.3e)"\nSET G "$REAL(1e-7,%G)"\n',
    );
    expect(["A", "B", "C", "D", "E", "F", "G"].map((n) => text(ad, n))).toEqual([
      '"125"',
      '"1E+20"',
      '"1"',
      '"1.0"',
      '"2.0"',
      '"1.024e+03"',
      '"1E-07"',
    ]);
  });

  it("$F<flags>, $BASENAME and $DIRNAME take file-name parts as HTCondor's config.cpp does", () => {
    const forms = ["$Fn(P)", "$Fx(P)", "$Fnx(P)", "$Fp(P)", "$Fd(P)", "$Fdn(P)", "$Fpn(P)", "$Fpx(P)", "$Fp(B)", "$Fdn(B)", "$BASENAME(P)", "$DIRNAME(P)", "$F(P)"];
    const rules = 'P = /a/b/c.txt\nB = c.txt\n' + forms.map((f, i) => `SET F${i} "${f}"\n`).join("") + "SET Q $Fqn(P)\n";
    const { ad } = run(rules);
    expect(forms.map((_, i) => text(ad, `F${i}`))).toEqual(
      ['"c"', '".txt"', '"c.txt"', '"/a/b/"', '"b/"', '"b/c"', '"/a/b/c"', '"/a/b/c.txt"', '""', '"c"', '"c.txt"', '"/a/b/"', '"/a/b/c.txt"'],
    );
    expect(text(ad, "Q")).toBe('"c"');
  });

  it("$RANDOM_CHOICE and $RANDOM_INTEGER draw from the evaluator's random source", () => {
    const fixed = new TransformRun({ evaluator: new Evaluator({ random: () => 0.5 }) });
    const { ad } = run('SET C "$RANDOM_CHOICE(a,b,c,d)"\nSET I $RANDOM_INTEGER(10, 20, 5)\n', job(), fixed);
    expect([text(ad, "C"), text(ad, "I")]).toEqual(['"c"', "15"]);
    const low = new TransformRun({ evaluator: new Evaluator({ random: () => 0 }) });
    expect(text(run("SET I $RANDOM_INTEGER(10, 20, 5)\n", job(), low).ad, "I")).toBe("10");
  });

  it("a recursive macro fails the whole transform with its line", () => {
    const outcome = new TransformRun({ evaluator: new Evaluator() }).apply(
      parseTransform("A = $(B)\nB = $(A)\nSET X $(A)\n", { file: "t.rules" }),
      job(),
    );
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.error).toMatch(/^t\.rules:3: recursive macro/);
  });
});

describe("if / elif / else in transforms", () => {
  it("chooses the branch by defined, booleans and ClassAd expressions", () => {
    const rules = [
      "if defined MY.Owner",
      "  SET HasOwner true",
      "endif",
      "if RequestMemory > 2048",
      "  SET Size \"big\"",
      "elif RequestMemory > 512",
      "  SET Size \"medium\"",
      "else",
      "  SET Size \"small\"",
      "endif",
      "if ! defined MY.NoSuch",
      "  SET Negated 1",
      "endif",
      "if false",
      "  SET Never $(RECURSION_IS_NOT_EXPANDED_HERE)",
      "endif",
    ].join("\n");
    const { ad } = run(rules);
    expect([text(ad, "HasOwner"), text(ad, "Size"), text(ad, "Negated")]).toEqual(["true", '"medium"', "1"]);
    expect(ad.has("Never")).toBe(false);
  });

  it("a complex condition that is false is simply false (HTCondor quirk fixed)", () => {
    const { ad } = run('if Owner == "nobody"\nSET X 1\nelse\nSET X 2\nendif\n');
    expect(text(ad, "X")).toBe("2");
  });

  it("a condition that evaluates to undefined fails the transform", () => {
    const outcome = new TransformRun({ evaluator: new Evaluator() }).apply(
      parseTransform("if NoSuchAttr > 1\nSET X 1\nendif\n", { file: "t.rules" }),
      job(),
    );
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.error).toMatch(/^t\.rules:1: if NoSuchAttr > 1: is not a valid if condition/);
  });
});

describe("REQUIREMENTS", () => {
  it("gates the transform on the ad as it was before the transform", () => {
    expect(run('REQUIREMENTS Owner == "alice"\nSET Owner "x"\nSET Routed true\n').applied).toBe(true);
    const skipped = run('REQUIREMENTS Owner == "carol"\nSET Routed true\n');
    expect(skipped.applied).toBe(false);
    expect(skipped.ad.has("Routed")).toBe(false);
    expect(run("REQUIREMENTS NoSuchAttr\nSET Routed true\n").applied).toBe(false);
    expect(run("REQUIREMENTS 1\nSET Routed true\n").applied).toBe(true);
  });
});

describe("TransformRun shares macros across transforms", () => {
  it("a macro set by a pre-route transform is visible in the route", () => {
    const r = new TransformRun({ evaluator: new Evaluator() });
    const pre = r.apply(parseTransform("EVALMACRO Mem = RequestMemory * 2\n"), job());
    if (!pre.ok) throw new Error(pre.error);
    const route = run("SET RequestMemory $(Mem)\n", pre.ad, r);
    expect(text(route.ad, "RequestMemory")).toBe("2048");
  });
});

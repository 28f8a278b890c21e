import { fileURLToPath } from "node:url";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseCondorConfig, readCondorConfigFile } from "../../src/condor/config-reader.js";
import { readLogicalLines } from "../../src/condor/lines.js";
import { isJobtapError } from "../../src/errors.js";

const FIXTURES = fileURLToPath(new URL("./fixtures", import.meta.url));

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(isJobtapError(e, "CONDOR_CONFIG")).toBe(true);
    return (e as Error).message;
  }
  throw new Error("expected a CONDOR_CONFIG error");
}

describe("logical lines", () => {
  it("joins a backslash continuation with no separator", () => {
    const lines = readLogicalLines("A = x \\\n  y\nB = p\\\nq\n");
    expect(lines.map((l) => l.text)).toEqual(["A = x y", "B = pq"]);
    expect(lines.map((l) => l.line)).toEqual([1, 3]);
  });

  it("a comment line never continues; a comment inside a continuation adds nothing", () => {
    const lines = readLogicalLines("# note \\\nA = 1\nB = 2 \\\n# skipped \\\n3\n");
    expect(lines.map((l) => l.text)).toEqual(["# note \\", "A = 1", "B = 2 3"]);
  });
});

describe("config reader", () => {
  it("reads NAME = value, trims, ignores comments, keeps trailing # text", () => {
    const c = parseCondorConfig("  A =  one  \n# comment\nB=two # not a comment\n", { file: "t.cfg" });
    expect(c.get("A")).toBe("one");
    expect(c.get("B")).toBe("two # not a comment");
    expect(c.source("b")).toEqual({ file: "t.cfg", line: 3 });
  });

  it("names are case-insensitive and the later definition wins", () => {
    const c = parseCondorConfig("Foo = 1\nFOO = 2\n");
    expect(c.get("foo")).toBe("2");
    expect(c.source("FoO")?.line).toBe(2);
  });

  it("an empty value means undefined, also when it expands to nothing", () => {
    const c = parseCondorConfig("A =\nB = $(NOPE)\nC = 0\n");
    expect(c.get("A")).toBeUndefined();
    expect(c.has("B")).toBe(false);
    expect(c.get("C")).toBe("0");
    expect(c.getNumber("A", 7)).toBe(7);
  });

  it("expands $(NAME) at lookup time with the last definition, and $(NAME:default)", () => {
    const c = parseCondorConfig("A = $(B)/x\nB = first\nB = second\nD = $(MISSING:fallback $(B))\n");
    expect(c.get("A")).toBe("second/x");
    expect(c.get("D")).toBe("fallback second");
    expect(c.raw("A")?.value).toBe("$(B)/x");
  });

  it("self-reference is expanded at definition time (appending)", () => {
    const c = parseCondorConfig("L =\nL = $(L) a\nL = $(L) b\nM = $(M:zero) one\n");
    expect(c.get("L")).toBe("a b");
    expect(c.get("M")).toBe("zero one");
  });

  it("+= and +X= append with a separator", () => {
    const c = parseCondorConfig("A = x\nA += y\nB = p\nB +,= q\nC = u\nC +&&= v\nD += only\n");
    expect(c.get("A")).toBe("x y");
    expect(c.get("B")).toBe("p,q");
    expect(c.get("C")).toBe("u && v");
    expect(c.get("D")).toBe("only");
  });

  it("$RANDOM_CHOICE and $RANDOM_INTEGER draw from the configured random source", () => {
    const c = parseCondorConfig("PICK = $RANDOM_CHOICE(a, b, c)\nPORT = $RANDOM_INTEGER(9600, 9700, 10)\n", { random: () => 0.99 });
    expect([c.get("PICK"), c.get("PORT")]).toEqual(["c", "9700"]);
  });

  it("$ENV(NAME) and $ENV(NAME:default); $$(attr) and $(DOLLAR) are left for match time", () => {
    const c = parseCondorConfig("H = $ENV(HOME_X)\nP = $ENV(NOT_SET:/tmp)\nM = $$(Memory) $(DOLLAR)x\n", {
      env: { HOME_X: "/home/x" },
    });
    expect(c.get("H")).toBe("/home/x");
    expect(c.get("P")).toBe("/tmp");
    expect(c.get("M")).toBe("$$(Memory) $x");
  });

  it("$ENV of an unset variable is the text UNDEFINED, of an empty one empty (HTCondor's config.cpp)", () => {
    const c = parseCondorConfig("U = x$ENV(NOT_SET)y\nE = x$ENV(EMPTY:dflt)y\nD = $ENV(NOT_SET:dflt)\n", { env: { EMPTY: "" } });
    expect(c.get("U")).toBe("xUNDEFINEDy");
    expect(c.get("E")).toBe("xy");
    expect(c.get("D")).toBe("dflt");
  });

  it("$INT and $REAL read a number, else evaluate the text as a ClassAd expression (in an empty ad)", () => {
    const c = parseCondorConfig(
      "N = 6\nA = $INT($(N) * 7)\nB = $INT(2.9)\nC = $INT(true)\nD = $INT( 9223372036854775807 )\nE = $INT(99999999999999999999)\n" +
        "F = $REAL(1/4.0)\nG = $REAL(N)\nH = $REAL(3 > 2)\nI = $INT(-7 / 2,%05d)\nJ = $REAL( 1e3 )\n",
    );
    expect(["A", "B", "C", "D", "E", "F", "G", "H", "I", "J"].map((k) => c.get(k))).toEqual([
      "42", "2", "1", "9223372036854775807", "9223372036854775807", "0.25", "6", "1", "-0003", "1000",
    ]);
  });

  it("$INT of a string value or an undefined name is an error naming the knob's line", () => {
    // names inside the expression are attributes of an empty ad, not macros: $(N) is the macro
    expect(configError(() => parseCondorConfig("N = 6\nA = $INT(N * 7)\n").get("A"))).toMatch(/does not evaluate to an integer/);
    // names inside the expression are attributes of an empty ad, not macros: use $(N) for those
    expect(configError(() => parseCondorConfig("N = 6\nA = $INT(N * 7)\n").get("A"))).toMatch(/does not evaluate to an integer/);
    expect(configError(() => parseCondorConfig('A = $INT("5")\n').get("A"))).toMatch(/\$INT\("5"\): .* does not evaluate to an integer/);
    expect(configError(() => parseCondorConfig("A = 1\nB = $REAL(Memory * 2)\n").get("B"))).toMatch(/:2: .*\$REAL\(Memory \* 2\)/);
  });

  it("mutual recursion is an error naming the chain and the definition line", () => {
    const c = parseCondorConfig("A = $(B)\nB = $(A)\n", { file: "loop.cfg" });
    const msg = configError(() => c.get("A"));
    expect(msg).toMatch(/recursive macro/);
    expect(msg).toMatch(/a -> b -> a/);
    expect(msg).toMatch(/loop\.cfg:[12]/);
  });

  it("macros that double at every level are an error, not a hang or an out-of-memory crash", () => {
    const levels = ["A0 = xxxxxxxxxx", ...Array.from({ length: 40 }, (_, i) => `A${i + 1} = $(A${i})$(A${i})`)];
    const laughs = parseCondorConfig(levels.join("\n") + "\nX = $(A40)\n", { file: "laughs.cfg" });
    expect(configError(() => laughs.get("X"))).toMatch(/^laughs\.cfg:42: expanding macro a\d+ gives more than 1048576 characters$/);
    const selfDoubling = ["Y = xxxxxxxxxx", ...Array.from({ length: 40 }, () => "Y = $(Y)$(Y)")].join("\n");
    expect(configError(() => parseCondorConfig(selfDoubling, { file: "grow.cfg" }))).toBe(
      "grow.cfg:18: Y grows beyond 1048576 characters (self-references doubling it?)",
    );
  });

  it("@=tag blocks keep lines trimmed, drop comments and blanks, still join continuations", () => {
    const text = "R @=end\n  SET A 1\n\n  # gone\nSET B \\\n  2\n@end\nAFTER = yes\n";
    const c = parseCondorConfig(text, { file: "b.cfg" });
    expect(c.get("R")).toBe("SET A 1\nSET B 2");
    expect(c.entry("R")?.lines).toEqual([2, 5]);
    expect(c.get("AFTER")).toBe("yes");
  });

  it("an unterminated @= block is an error naming file and line", () => {
    const msg = configError(() => parseCondorConfig("X = 1\nR @=rt\nSET A 1\n", { file: "u.cfg" }));
    expect(msg).toBe("u.cfg:2: unterminated @=rt block for R (no closing @rt line)");
  });

  it("if / elif / else / endif with defined, version, booleans and negation", () => {
    const text = [
      "A = 1",
      "if defined A",
      "  X = a-defined",
      "else",
      "  X = a-undefined",
      "endif",
      "if ! defined NOPE",
      "  Y = nope",
      "endif",
      "if version >= 99.0",
      "  Z = future",
      "elif false",
      "  Z = never",
      "elif $(A)",
      "  Z = from-macro",
      "else",
      "  Z = else",
      "endif",
    ].join("\n");
    const c = parseCondorConfig(text);
    expect([c.get("X"), c.get("Y"), c.get("Z")]).toEqual(["a-defined", "nope", "from-macro"]);
  });

  it("if errors: missing endif, endif without if, else after else, complex condition", () => {
    expect(configError(() => parseCondorConfig("if true\nA = 1\n", { file: "i.cfg" }))).toBe(
      "i.cfg:1: if has no matching endif",
    );
    expect(configError(() => parseCondorConfig("endif\n", { file: "i.cfg" }))).toMatch(/i\.cfg:1: endif without/);
    expect(configError(() => parseCondorConfig("if true\nelse\nelse\nendif\n"))).toMatch(/:3: else after else/);
    expect(configError(() => parseCondorConfig("if A > 3\nendif\n"))).toMatch(/not a valid if condition/);
  });

  it("error : and warning : lines; use lines are skipped with a warning", () => {
    expect(configError(() => parseCondorConfig("error : stop here\n", { file: "e.cfg" }))).toBe(
      "e.cfg:1: error: stop here",
    );
    const c = parseCondorConfig("warning : careful\nuse ROLE : Personal\n", { file: "w.cfg" });
    expect(c.warnings).toEqual([
      "w.cfg:1: warning: careful",
      'w.cfg:2: "use ROLE : Personal" skipped (metaknobs are not supported)',
    ]);
  });

  it("a line that is not an assignment is an error naming file and line", () => {
    expect(configError(() => parseCondorConfig("A = 1\nthis is junk\n", { file: "j.cfg" }))).toMatch(
      /^j\.cfg:2: "this is junk" is not a valid configuration line/,
    );
  });

  it("NAME : value assigns, [section] headers are ignored, $($(X)) expands from the inside", () => {
    const c = parseCondorConfig("[Local]\nA : colon value\nWHICH = A\nB = $($(WHICH))!\n");
    expect(c.get("A")).toBe("colon value");
    expect(c.get("B")).toBe("colon value!");
    expect(c.names()).toEqual(["A", "WHICH", "B"]);
  });

  it("typed getters name the knob and its source on bad values", () => {
    const c = parseCondorConfig("N = 12\nB = True\nL = a, b  c\nBAD = ten\n", { file: "g.cfg" });
    expect(c.getNumber("N", 0, true)).toBe(12);
    expect(c.getBool("B", false)).toBe(true);
    expect(c.getList("L")).toEqual(["a", "b", "c"]);
    expect(configError(() => c.getNumber("BAD", 0))).toBe("g.cfg:4: BAD = ten is not a number");
  });

  it("SUBSYS.NAME is preferred over NAME when a subsystem is given", () => {
    const c = parseCondorConfig("X = plain\nJOB_ROUTER.X = router\n", { subsys: "JOB_ROUTER" });
    expect(c.get("x")).toBe("router");
    expect(parseCondorConfig("X = plain\nJOB_ROUTER.X = router\n").get("X")).toBe("plain");
  });
});

describe("include", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-condor-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("includes files relative to the including file, with sources per file", () => {
    writeFileSync(join(dir, "main.cfg"), "A = main\ninclude : sub.cfg\nC = $(B)!\n");
    writeFileSync(join(dir, "sub.cfg"), "B = from-sub\nA = overridden\n");
    const c = readCondorConfigFile(join(dir, "main.cfg"));
    expect(c.get("A")).toBe("overridden");
    expect(c.get("C")).toBe("from-sub!");
    expect(c.source("B")).toEqual({ file: join(dir, "sub.cfg"), line: 1 });
  });

  it("include ifexist skips a missing file; plain include of a missing file is an error", () => {
    writeFileSync(join(dir, "a.cfg"), "include ifexist : nope.cfg\nX = 1\n");
    expect(readCondorConfigFile(join(dir, "a.cfg")).get("X")).toBe("1");
    writeFileSync(join(dir, "b.cfg"), "X = 1\ninclude : nope.cfg\n");
    expect(configError(() => readCondorConfigFile(join(dir, "b.cfg")))).toMatch(/b\.cfg:2: cannot include/);
  });

  it("an include cycle stops at the depth limit with an error", () => {
    writeFileSync(join(dir, "self.cfg"), "include : self.cfg\n");
    expect(configError(() => readCondorConfigFile(join(dir, "self.cfg")))).toMatch(
      /self\.cfg:1: include nesting deeper than 20/,
    );
  });

  it("include command is refused", () => {
    expect(configError(() => parseCondorConfig("include command : echo A=1 |\n"))).toMatch(/not supported/);
  });
});

describe("seed examples", () => {
  it("the startd/schedd cron example parses into the expected knobs", () => {
    const c = readCondorConfigFile(join(FIXTURES, "cron-example.config"));
    expect(c.get("MODULES")).toBe("/modules");
    expect(c.getList("STARTD_CRON_JOBLIST")).toEqual(["test", "date", "foo"]);
    expect(c.get("STARTD_CRON_TEST_MODE")).toBe("OneShot");
    expect(c.get("STARTD_CRON_TEST_EXECUTABLE")).toBe("/modules/test");
    expect(c.get("STARTD_CRON_TEST_ARGS")).toBe("abc 123");
    expect(c.getNumber("STARTD_CRON_MAX_JOB_LOAD", 0.1)).toBe(0.2);
    expect(c.get("STARTD_CRON_DATE_PERIOD")).toBe("15s");
    expect(c.get("STARTD_CRON_FOO_PERIOD")).toBe("10m");
    expect(c.get("STARTD_CRON_FOO_PREFIX")).toBe("Foo");
    expect(c.getList("BENCHMARKS_JOBLIST")).toEqual(["mips", "kflops"]);
    expect(c.getNumber("BENCHMARKS_KFLOPS_JOB_LOAD", 0)).toBe(1);
    expect(c.getList("SCHEDD_CRON_JOBLIST")).toEqual(["test"]);
    expect(c.get("SCHEDD_CRON_TEST_PERIOD")).toBe("5m");
    expect(c.getBool("SCHEDD_CRON_TEST_KILL", false)).toBe(true);
    expect(c.source("STARTD_CRON_FOO_JOB_LOAD")?.line).toBeGreaterThan(c.source("STARTD_CRON_FOO_MODE")!.line);
  });

  it("the router example keeps route bodies raw and expands ordinary knobs", () => {
    const c = readCondorConfigFile(join(FIXTURES, "router-example.config"), { defaults: { DAEMON_LIST: "MASTER SCHEDD" } });
    expect(c.getList("JOB_ROUTER_ROUTE_NAMES")).toEqual(["Site1", "Site2", "CondorSite"]);
    expect(c.get("JOB_ROUTER_ROUTE_Site2")).toBe('GridResource = "arc site2.edu"\nSET ArcRte = "ENV/PROXY"');
    expect(c.get("JOB_ROUTER_TRANSFORM_Defaults")).toBe(
      "SET PeriodicRemove = JobStatus == 5 || (JobStatus == 1 && (time() - QDate) > 3600*6))\n" +
        "DELETE WantJobRouter\nSET Requirements = true",
    );
    expect(c.get("DAEMON_LIST")).toBe("MASTER SCHEDD JOB_ROUTER");
    expect(c.getNumber("JOB_ROUTER_POLLING_PERIOD", 0)).toBe(10);
  });
});

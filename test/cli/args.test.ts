import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { parseArgs, takeGlobalOption } from "../../src/cli/args.js";
import { parseIdset } from "../../src/cli/idset.js";

const OPTIONS = [
  { name: "ntasks", short: "n", value: "N", help: "tasks" },
  { name: "wait", help: "wait" },
  { name: "all", short: "a", help: "all" },
  { name: "env", value: "RULE", repeat: true, help: "env" },
];
const SPECS = { options: OPTIONS };

describe("parseArgs", () => {
  it("reads long, long=, short, glued short, bundled flags and repeats", () => {
    const p = parseArgs(["--ntasks", "4", "-a", "--env=A=1", "--env", "B=2", "x"], SPECS);
    expect(p.options).toEqual({ ntasks: "4", all: true, env: ["A=1", "B=2"] });
    expect(p.positionals).toEqual(["x"]);
    expect(parseArgs(["-n8"], SPECS).options.ntasks).toBe("8");
    expect(parseArgs(["-an", "2"], SPECS).options).toEqual({ all: true, ntasks: "2" });
  });

  it("stops at the first positional when asked (the rest is a command)", () => {
    const p = parseArgs(["-n", "2", "sleep", "-n", "5"], SPECS, { stopAtPositional: true });
    expect(p.options).toEqual({ ntasks: "2" });
    expect(p.positionals).toEqual(["sleep", "-n", "5"]);
    expect(parseArgs(["--", "--wait"], SPECS).positionals).toEqual(["--wait"]);
  });

  it("names an unknown option, a missing value and a value given to a flag", () => {
    expect(() => parseArgs(["--bogus"], SPECS)).toThrow(expect.objectContaining({ code: ErrorCode.USAGE, message: "unknown option --bogus" }));
    expect(() => parseArgs(["-z"], SPECS)).toThrow("unknown option -z");
    expect(() => parseArgs(["--ntasks"], SPECS)).toThrow("option --ntasks needs a value");
    expect(() => parseArgs(["--wait=yes"], SPECS)).toThrow("option --wait takes no value");
  });
});

describe("parseIdset", () => {
  it("expands ranges and lists in order without duplicates", () => {
    expect(parseIdset("1-3,5,2")).toEqual([1, 2, 3, 5]);
    expect(parseIdset("[0-2]")).toEqual([0, 1, 2]);
    expect(parseIdset("1-10000")).toHaveLength(10000);
  });

  it("names the bad part", () => {
    expect(() => parseIdset("1-x", "--cc")).toThrow('--cc: "1-x" is not an id or a range like 1-10');
    expect(() => parseIdset("5-1", "--cc")).toThrow('--cc: range "5-1" runs backwards');
    expect(() => parseIdset("", "--cc")).toThrow("--cc: empty idset");
  });
});

describe("takeGlobalOption", () => {
  const SPECS = [{ name: "ntasks", short: "n", value: true }, { name: "wait" }];
  it("takes --NAME VALUE and --NAME=VALUE anywhere before --", () => {
    expect(takeGlobalOption(["a", "--socket", "/s", "b"], "socket")).toEqual({ value: "/s", rest: ["a", "b"] });
    expect(takeGlobalOption(["--socket=/t", "a", "--", "--socket", "x"], "socket")).toEqual({
      value: "/t",
      rest: ["a", "--", "--socket", "x"],
    });
    expect(takeGlobalOption(["a"], "socket")).toEqual({ rest: ["a"] });
  });
  it("with option specs, stops at the first positional, skipping option values", () => {
    expect(takeGlobalOption(["-n", "--socket", "--wait", "--socket", "/s", "cmd", "--socket", "y"], "socket", OPTIONS)).toEqual({
      value: "/s",
      rest: ["-n", "--socket", "--wait", "cmd", "--socket", "y"],
    });
    expect(takeGlobalOption(["-n4", "cmd", "--socket", "y"], "socket", OPTIONS)).toEqual({ rest: ["-n4", "cmd", "--socket", "y"] });
  });
});

/** The CSV codec of `jobtap account export|import` (src/cli/account-csv.ts): RFC 4180 edge cases. */
import { describe, expect, it } from "vitest";
import { atLine, csvField, exportCsv, importCsv, parseCsv } from "../../src/cli/account-csv.js";
import { ErrorCode, JobtapError } from "../../src/errors.js";

const users = { name: (uid: number) => (uid === 0 ? "root" : String(uid)), uid: (n: string) => (n === "root" ? 0 : /^\d+$/.test(n) ? Number(n) : undefined) };

describe("account CSV", () => {
  it("reads quoted commas, doubled quotes and line breaks, numbering records by their first line", () => {
    const recs = parseCsv('a,b\r\n"x,1","say ""hi"""\n"two\nlines",z\n\nlast,', "f.csv");
    expect(recs).toEqual([
      { line: 1, fields: ["a", "b"] },
      { line: 2, fields: ["x,1", 'say "hi"'] },
      { line: 3, fields: ["two\nlines", "z"] },
      { line: 6, fields: ["last", ""] },
    ]);
    expect(() => parseCsv('a,"b\nc', "f.csv")).toThrow("f.csv:1: a quoted field is not closed");
    expect(() => parseCsv('a,"b"c', "f.csv")).toThrow("f.csv:1: column 2: text after a closing quote");
    expect(() => parseCsv('a,b"c', "f.csv")).toThrow("f.csv:1: column 2: a '\"' inside an unquoted field");
  });

  it("quotes only what needs it, and reads back what it writes", () => {
    expect([csvField("plain"), csvField("a,b"), csvField('q"'), csvField("l\n")]).toEqual(["plain", '"a,b"', '"q"""', '"l\n"']);
    const out = { banks: [{ name: "top", shares: 1 }, { name: "lab", parent: "top", shares: 2, "max-cores": 8 }], users: [{ uid: 0, bank: "lab", shares: 3, default: true, "max-running-jobs": 1 }, { uid: 77, bank: "top", shares: 1 }] };
    const back = importCsv(exportCsv(out, users), "x.csv", users);
    expect(back.payload).toEqual(out);
    expect(back.lines).toEqual({ banks: [2, 3], users: [4, 5] });
  });

  it("names the column of a bad cell and re-addresses the plugin's refusal to the row's line", () => {
    const head = "name,kind,bank,default\n";
    expect(() => importCsv(head + "root,user,lab,yes\n", "u.csv", users)).toThrow('u.csv:2: default (column 4): must be "true", "false" or empty, got "yes"');
    expect(() => importCsv(head + "root,user,,\n", "u.csv", users)).toThrow("u.csv:2: bank (column 3): must name the user's bank");
    expect(() => importCsv("kind\nbank\n", "u.csv", users)).toThrow('u.csv:1: the header has no "name" column');
    expect(() => importCsv("", "u.csv", users)).toThrow("u.csv: empty file");
    const file = importCsv(head + "root,user,lab,\n\nroot,user,ops,true\n", "u.csv", users);
    const e = atLine(new JobtapError(ErrorCode.INVALID_ARGUMENT, 'plugin accounting: service import: users[1]: bank: unknown bank "ops"'), "u.csv", file) as JobtapError;
    expect(e.message).toBe('u.csv:4: bank (column 3): unknown bank "ops"');
    expect(e.code).toBe(ErrorCode.INVALID_ARGUMENT);
  });
});

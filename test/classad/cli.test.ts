/** `jobtap classad eval`: files, stdin, --target, --old/--new and --jsonl, run in-process. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import type { CliIO } from "../../src/cli/io.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "jobtap-classad-"));
  await writeFile(join(dir, "job.ad"), '# a job\nRequestCpus = 2\nRequestMemory = 1024\nOwner = "alice"\nRatio = 2.5\n');
  await writeFile(join(dir, "machine.ad"), '[ Cpus = 4; Memory = 2048; Arch = "X86_64" ]\n');
  await writeFile(join(dir, "bad.ad"), "A = 1\nB = (2\n");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(argv: string[], stdin = ""): Promise<{ status: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIO = {
    stdin: Readable.from([Buffer.from(stdin)]),
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    env: {},
    cwd: dir,
  };
  const status = await runCli(["classad", ...argv], io);
  return { status, out, err };
}

describe("classad eval", () => {
  it("evaluates expressions against --ad and --target", async () => {
    const r = await run(["eval", "--ad", "job.ad", "--target", "machine.ad", 'RequestCpus <= Cpus && RequestMemory <= Memory && Arch == "X86_64"', "Ratio * 2", "TARGET.Owner"]);
    expect(r).toEqual({ status: 0, out: "true\n5.0\nundefined\n", err: "" });
  });

  it("prints with the new-style printer on --new", async () => {
    const r = await run(["eval", "--new", "--ad", "job.ad", "Ratio * 2", 'strcat(Owner, "\\n")']);
    expect(r.out).toBe('5.000000000000000E+00\n"alice\\n"\n');
  });

  it("reads the ad from stdin with --ad -", async () => {
    const r = await run(["eval", "--ad", "-", "x + 1"], "x = 41\n");
    expect(r.out).toBe("42\n");
  });

  it("applies Name = expr arguments to the ad, as classad_eval does", async () => {
    const r = await run(["eval", "a = 2", "b = a * 3.5", "b", "a == 2"]);
    expect(r.out).toBe("7.0\ntrue\n");
  });

  it("reports syntax errors with their position and exits 1", async () => {
    const r = await run(["eval", "1 + (2"]);
    expect(r.status).toBe(1);
    expect(r.err).toMatch(/expression "1 \+ \(2": ClassAd syntax error at 1:7/);
    const bad = await run(["eval", "--ad", "bad.ad", "A"]);
    expect(bad.status).toBe(1);
    expect(bad.err).toMatch(/--ad bad.ad: old-style ClassAd line 2/);
  });

  it("usage errors exit 2", async () => {
    expect((await run(["eval"])).status).toBe(2);
    expect((await run(["eval", "--old", "--new", "1"])).status).toBe(2);
    expect((await run(["frobnicate"])).status).toBe(2);
    const missing = await run(["eval", "--ad", "nope.ad", "1"]);
    expect(missing.status).toBe(2);
    expect(missing.err).toMatch(/--ad nope.ad: .*ENOENT/);
  });

  it("--jsonl answers one line per request, errors included", async () => {
    const input = [
      JSON.stringify({ ad: { RequestCpus: 2 }, target: "Cpus = 4", expr: "RequestCpus <= Cpus" }),
      JSON.stringify({ ad: "[ r = 1.5 ]", expr: "r * 2" }),
      JSON.stringify({ expr: "1 +" }),
      "",
      "not json",
      JSON.stringify({ ad: { S: "/Expr(strcat(\"a\", \"b\"))/" }, expr: "S" }),
      JSON.stringify({ expr: "{1, undefined}" }),
    ].join("\n");
    const r = await run(["eval", "--jsonl"], input);
    expect(r.status).toBe(1);
    const lines = r.out.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines[0]).toEqual({ value: "true", type: "boolean" });
    expect(lines[1]).toEqual({ value: "3.0", type: "real" });
    expect(lines[2].line).toBe(3);
    expect(lines[2].error).toMatch(/expected an expression/);
    expect(lines[3].line).toBe(5);
    expect(lines[4]).toEqual({ value: '"ab"', type: "string" });
    expect(lines[5]).toEqual({ value: "{ 1,undefined }", type: "list" });
  });
});

describe("dispatch", () => {
  it("jobtap classad eval reaches this subcommand through the CLI entry point", async () => {
    let out = "";
    const io: CliIO = { stdin: Readable.from([]), stdout: (t) => void (out += t), stderr: () => {}, env: {}, cwd: dir };
    expect(await runCli(["classad", "eval", "1 + 1", "2.5 * 2"], io)).toBe(0);
    expect(out).toBe("2\n5.0\n");
  });
});

/** `$(` nested inside `$(` is bounded like macro recursion: a clear error, never a stack overflow. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import type { CliIO } from "../../src/cli/io.js";

const dir = mkdtempSync(join(tmpdir(), "jobtap-macro-depth-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function condorConfig(text: string, name: string) {
  writeFileSync(join(dir, "c.cfg"), text);
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { stdin: process.stdin, stdout: (t) => out.push(t), stderr: (t) => err.push(t), env: {}, cwd: dir };
  const status = await runCli(["condor", "config", join(dir, "c.cfg"), name], io);
  return { status, stdout: out.join(""), stderr: err.join("") };
}

describe("condor config: nested $(", () => {
  it("100,000 nested $( is an error naming the limit and the macro", async () => {
    const r = await condorConfig(`X = ${"$(".repeat(100_000)}Y${")".repeat(100_000)}\n`, "X");
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`jobtap condor: ${join(dir, "c.cfg")}:1: $( nested deeper than 128 levels inside macro x\n`);
  });

  it("moderate nesting still expands", async () => {
    const r = await condorConfig(`A = B\nB = C\nC = done\nX = $($($(A)))\n`, "X");
    expect(r).toMatchObject({ status: 0, stdout: expect.stringContaining("X = done") });
  });
});

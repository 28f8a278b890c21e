/**
 * Every command's --help describes every option its parser accepts: for each command and
 * subcommand, an unknown option makes the parser name the options it knows (the USAGE
 * error's details), and each of them must have a described line in that --help. The same
 * walk checks that no error line repeats its command's prefix (`jobtap job: job: ...`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isJobtapError } from "../../src/errors.js";
import { allSpecs } from "../../src/cli/help.js";
import type { CliIO } from "../../src/cli/io.js";
import { runCli, SUBCOMMANDS } from "../../src/cli/main.js";

const dir = mkdtempSync(join(tmpdir(), "jobtap-help-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function io(out: string[], err: string[]): CliIO {
  return { stdin: process.stdin, stdout: (t) => out.push(t), stderr: (t) => err.push(t), env: { JOBTAP_STATEDIR: dir }, cwd: dir };
}

async function run(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const status = await runCli(argv, io(out, err));
  return { status, stdout: out.join(""), stderr: err.join("") };
}

/** The option names the parser of `jobtap NAME PATH...` knows, read from its unknown-option error. */
async function parserOptions(name: string, path: string[]): Promise<string[]> {
  const { run: command } = await SUBCOMMANDS[name]!.load();
  try {
    await command([...path, "--zz-no-such-option"], io([], []));
  } catch (e) {
    if (isJobtapError(e) && Array.isArray(e.details?.known)) return e.details.known as string[];
    throw e;
  }
  throw new Error(`jobtap ${[name, ...path].join(" ")} accepted an unknown option`);
}

const commands = Object.keys(SUBCOMMANDS);

describe("--help", () => {
  it.each(commands)("jobtap %s --help describes every option each parser accepts", async (name) => {
    const { help } = await SUBCOMMANDS[name]!.load();
    const whole = await run([name, "--help"]);
    expect(whole.status).toBe(0);
    for (const { path } of allSpecs(help)) {
      const text = path.length === 0 ? whole.stdout : (await run([name, ...path, "--help"])).stdout;
      expect(text).toMatch(/^usage: jobtap /);
      for (const option of await parserOptions(name, path)) {
        // `--count=N    list at most N jobs`: the option, then a description on its line.
        const line = text.split("\n").find((l) => new RegExp(`^ +(-\\w, )?--${option}[= ]`).test(l));
        expect(line, `jobtap ${[name, ...path].join(" ")} --help: --${option}`).toMatch(new RegExp(`--${option}\\S* {2,}\\S`));
        // The command's own help lists the subcommand's options too.
        expect(whole.stdout).toContain(`--${option}`);
      }
    }
  });

  it("names the options jobs and job info take that the old usage lines left out", async () => {
    expect((await run(["jobs", "--help"])).stdout).toMatch(/--constraint=EXPR +list only jobs whose job ad matches/);
    expect((await run(["job", "--help"])).stdout).toMatch(/--classad +print the job's ClassAd/);
    expect((await run(["job", "info", "-h"])).stdout).toMatch(/^usage: jobtap job info ID/);
  });
});

describe("error lines", () => {
  /** The bad command lines of one command: an unknown subcommand, none, and a bad option in each. */
  async function badLines(name: string): Promise<string[][]> {
    const { help } = await SUBCOMMANDS[name]!.load();
    const lines = allSpecs(help).map(({ path }) => [name, ...path, "--zz-bad"]);
    if ("subcommands" in help) lines.push([name, "zz-bad-subcommand"], [name]);
    return lines;
  }

  it.each(commands)("jobtap %s never repeats its prefix in an error", async (name) => {
    for (const argv of await badLines(name)) {
      const r = await run(argv);
      expect(r.status, argv.join(" ")).toBe(2);
      const first = r.stderr.split("\n")[0] as string;
      expect(first, argv.join(" ")).toMatch(new RegExp(`^jobtap ${name}: `));
      const rest = first.slice(`jobtap ${name}: `.length);
      expect(rest, argv.join(" ")).not.toMatch(new RegExp(`^(jobtap )?${name}\\b`));
    }
  });
});

describe("version", () => {
  it("prints the package version for `version` and `--version`", async () => {
    const a = await run(["version"]);
    const b = await run(["--version"]);
    expect(a.status).toBe(0);
    expect(a.stdout).toMatch(/^jobtap \d+\.\d+\.\d+/);
    expect(b.stdout).toBe(a.stdout);
  });
});

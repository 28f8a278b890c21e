/**
 * Property-based fuzzing (fast-check) of every text a user, a site or a hook hands jobtap:
 * TOML configs, jobspecs, ClassAd expressions and ads, transform rules, HTCondor config
 * files and hook output. The property each time: no crash (anything thrown is a JobtapError
 * with the area's code and a message), no hang (the test's timeout), and nothing accepted
 * lost. Fixed seeds keep the suite fast and repeatable; JOBTAP_FUZZ_RUNS=N runs N cases per
 * property instead (and JOBTAP_FUZZ_SEED=S another seed): docs/manager.md, "Fuzzing".
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { Evaluator, parseAd, parseExpr, parseOldAd } from "../../src/classad/index.js";
import { parseCondorConfig, parseTransform } from "../../src/condor/index.js";
import { ErrorCode } from "../../src/errors.js";
import { readHookAds } from "../../src/hooks/adio.js";
import { readCronOutput } from "../../plugins-builtin/condor-cron/output.js";
import { checkConfigFile } from "../../src/server/config.js";
import { simManager, submitNow } from "../manager/helpers.js";
import { cleanly, RUNS, SEED } from "./helpers.js";

const opts = { seed: SEED, numRuns: RUNS };

/** Text made of a language's own pieces, so cases reach past the first token. */
const soup = (pieces: string[], max = 20) =>
  fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 6 }), fc.constantFrom("\n", " ", "\t", "\\", "\0", "é", "\u{1F600}")), { maxLength: max }).map((a) => a.join(""));

const dir = mkdtempSync(join(tmpdir(), "jobtap-fuzz-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("fuzz: daemon TOML configs", () => {
  const TOML = ["[daemon]", "[limits]", "[resources]", "[job-manager]", "[[x]]", "=", '"', "'", "socket", "guests", "true",
    "max-request-size", "jobs-per-user", "connections", "cores", "slots", "memory", '"16G"', "-1", "1e999", "[", "]", "{", "}",
    "plugins", "load", "remove", "queue-depth", "inactive-age-limit", '"7d"', "batch-window", "shutdown", "#", ",", "."];
  it("every file is accepted or refused with CONFIG errors naming where", () => {
    let n = 0;
    fc.assert(
      fc.property(soup(TOML, 30), (text) => {
        const path = join(dir, `c${n++}.toml`);
        writeFileSync(path, text);
        const { errors } = checkConfigFile(path, {});
        for (const e of errors) {
          expect(e.code).toBe(ErrorCode.CONFIG);
          expect(e.message).not.toBe("");
        }
      }),
      opts,
    );
  });
});

describe("fuzz: ClassAd expressions and ads", () => {
  const CLASSAD = ["1", "2.5", '"s"', "x", "MY.", "TARGET.", "(", ")", "[", "]", "{", "}", ";", ",", "=", "+", "*", "/", "&&", "||",
    "?", ":", "=?=", "<", ">=", "strcat(", "ifThenElse(", "regexp(", "size(", "split(", "undefined", "error", "true", "{1,2}", "a = b", "b = a"];
  const ev = new Evaluator({ clock: () => 1_700_000_000, random: () => 0.5 });
  it("an expression parses or is CLASSAD_SYNTAX, and evaluates without throwing", () => {
    const ad = parseOldAd("x = y + 1\ny = x\na = {1, [b = a]}\nb = \"str\"");
    fc.assert(
      fc.property(soup(CLASSAD), (text) => {
        let e;
        try {
          e = parseExpr(text);
        } catch (err) {
          cleanly(() => { throw err; }, [ErrorCode.CLASSAD_SYNTAX]);
          return;
        }
        ev.evaluate(e, { my: ad, target: ad });
      }),
      opts,
    );
  });
  it("an ad (old or new syntax) parses or is CLASSAD_SYNTAX", () => {
    fc.assert(fc.property(soup([...CLASSAD, "\n", "[", "]", "a = ", "//", "/*", "*/"], 30), (text) => cleanly(() => parseAd(text), [ErrorCode.CLASSAD_SYNTAX])), opts);
  });
});

describe("fuzz: HTCondor config files and transform rules", () => {
  const CONFIG = ["A = 1", "B = $(A)", "$(", ")", "$ENV(HOME)", "$INT(", "if", "elif", "else", "endif", "include", ":", "@=end", "@end",
    "use", "ROLE", ":", "defined", "version", ">", "\\\n", "\n", "=", "!", "[", "]", "$RANDOM_INTEGER(1,2)", "$F(", "$$(x)"];
  it("a config file reads or is CONDOR_CONFIG", () => {
    fc.assert(fc.property(soup(CONFIG, 30), (text) => cleanly(() => parseCondorConfig(text, { file: "fuzz.conf" }), [ErrorCode.CONDOR_CONFIG])), opts);
  });
  const TRANSFORM = ["SET", "DEFAULT", "EVALSET", "COPY", "RENAME", "DELETE", "REQUIREMENTS", "TRANSFORM", "NAME", "if", "else",
    "endif", "Cmd", "\"x\"", "*", "/(.*)/", "\\1", "$(", ")", "\n", " ", "=", "@=end", "@end", "JobUniverse", "5"];
  it("a transform parses or is CONDOR_TRANSFORM", () => {
    fc.assert(fc.property(soup(TRANSFORM, 30), (text) => cleanly(() => parseTransform(text), [ErrorCode.CONDOR_TRANSFORM, ErrorCode.CONDOR_CONFIG, ErrorCode.CLASSAD_SYNTAX])), opts);
  });
});

describe("fuzz: hook output", () => {
  const HOOK = ["A = 1", "B = \"x\"", "-----", "------", "- update:true", "- tag", "\n", "=", "[", "]", "\"", "\\", "C = {1,", "\r\n"];
  it("job hook ads and cron output read without throwing (bad lines are reported, not fatal)", () => {
    fc.assert(
      fc.property(soup(HOOK, 40), (text) => {
        cleanly(() => readHookAds(text), [ErrorCode.HOOK, ErrorCode.CLASSAD_SYNTAX]);
        cleanly(() => readCronOutput(text), [ErrorCode.HOOK, ErrorCode.CLASSAD_SYNTAX]);
      }),
      opts,
    );
  });
});

describe("fuzz: jobspecs", () => {
  const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    v: fc.oneof({ depthSize: "small" }, fc.jsonValue({ maxDepth: 2 }), fc.dictionary(fc.constantFrom("version", "resources", "tasks", "attributes", "system", "command", "count", "type", "with", "slot", "duration", "environment", "cwd", "exec", "user", "classad", "x"), tie("v"), { maxKeys: 5 })),
  })).v;
  const good = {
    version: 1,
    resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
    tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
    attributes: { system: { duration: 0, exec: { test: { run_duration: 60 } } } },
  };
  /** A valid jobspec with one part replaced by a random value. */
  const mutated = fc.tuple(fc.constantFrom("version", "resources", "tasks", "attributes", "attributes.system", "attributes.system.duration", "tasks.0.command", "resources.0.with", "attributes.system.environment", "attributes.user", "attributes.system.exec"), value).map(([path, v]) => {
    const spec = structuredClone(good) as Record<string, unknown>;
    const keys = path.split(".");
    let at = spec as Record<string, unknown>;
    for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
    at[keys[keys.length - 1]!] = v;
    return spec;
  });
  it("a submission is accepted or refused with a code; every accepted job stays in the queue", async () => {
    const s = await simManager();
    const accepted: unknown[] = [];
    await fc.assert(
      fc.asyncProperty(fc.oneof(value, mutated), async (spec) => {
        try {
          accepted.push(await submitNow(s, spec as never, { urgency: 0 }));
        } catch (e) {
          cleanly(() => { throw e; }, [ErrorCode.BAD_JOBSPEC, ErrorCode.INVALID_ARGUMENT, ErrorCode.JOB_REJECTED, ErrorCode.UNKNOWN_SLOT, ErrorCode.CLASSAD_SYNTAX]);
        }
      }),
      opts,
    );
    expect(accepted.length).toBeGreaterThan(0);
    const ids = new Set(s.mgr.jobs({}).map((j) => j.id));
    for (const id of accepted) expect(ids.has(id as never)).toBe(true);
    await s.mgr.close();
  });
});

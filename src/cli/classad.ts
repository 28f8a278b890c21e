/**
 * `jobtap classad eval`: evaluate ClassAd expressions, like HTCondor's `classad_eval`.
 *
 *   jobtap classad eval [--ad FILE|-] [--target FILE|-] [--old|--new] EXPR...
 *   jobtap classad eval --jsonl [--old|--new] < requests
 *
 * Each EXPR is evaluated with MY = the --ad ad (old-style `Name = expr` lines or a new-style
 * `[...]` record) and TARGET = the --target ad, and its value is printed on its own line by
 * the old-style printer (the hook format; `--new` selects the new-style printer). An EXPR
 * of the form `Name = expr` instead assigns into the ad, as classad_eval does.
 *
 * `--jsonl` reads one JSON object per stdin line, `{"ad", "target", "expr"}` (ads as JSON
 * ads or as ad text), and writes one `{"value","type"}` line per request; a bad request
 * yields `{"error","line"}` and exit status 1 after the remaining lines are answered.
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import {
  ClassAd,
  Evaluator,
  adFromJSON,
  insertLine,
  parseAd,
  parseExpr,
  typeOf,
  unparseValue,
} from "../classad/index.js";
import { ErrorCode, JobtapError, isJobtapError } from "../errors.js";
import { optString, parseArgs, usage, type CommandSpec } from "./args.js";
import type { CliIO, Subcommand } from "./io.js";

/** The option table of `jobtap classad eval` (parser and --help). */
export const SPEC = {
  subcommands: {
    eval: {
      usage: ["classad eval [--ad FILE|-] [--target FILE|-] [--old|--new] EXPR...", 'classad eval --jsonl [--old|--new]   (one {"ad","target","expr"} per stdin line)'],
      summary: "evaluates ClassAd expressions, in the context of an ad and a target ad",
      options: [
        { name: "ad", value: "FILE|-", help: "the ad MY refers to (condor_q -l form; - for stdin)" },
        { name: "target", value: "FILE|-", help: "the ad TARGET refers to" },
        { name: "old", help: "old ClassAd syntax (the default)" },
        { name: "new", help: "new ClassAd syntax" },
        { name: "jsonl", help: "read {ad, target, expr} JSON lines from stdin, print one result each" },
      ],
    },
  } satisfies Record<string, CommandSpec>,
};

/** The `classad` subcommand: dispatches `eval`; returns the exit status. */
export const classad: Subcommand = async (argv, io) => {
  const [verb, ...rest] = argv;
  if (verb !== "eval") throw usage(verb === undefined ? "missing subcommand (known: eval)" : `unknown subcommand "${verb}" (known: eval)`);
  return evalCommand(rest, io);
};

async function evalCommand(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, SPEC.subcommands.eval);
  if (p.options.old === true && p.options.new === true) throw usage("--old and --new are exclusive");
  const old = p.options.new !== true;
  const ev = new Evaluator();
  if (p.options.jsonl === true) {
    if (p.positionals.length > 0 || p.options.ad !== undefined || p.options.target !== undefined) {
      throw usage("--jsonl takes its ads and expressions from stdin only");
    }
    return jsonl(await readAll(io.stdin), ev, old, io);
  }
  if (p.positionals.length === 0) throw usage("no expression given");
  const adPath = optString(p, "ad");
  const targetPath = optString(p, "target");
  if (adPath === "-" && targetPath === "-") throw usage("only one of --ad and --target can read stdin");
  const my = adPath === undefined ? new ClassAd() : await loadAd(adPath, "--ad", io);
  const target = targetPath === undefined ? null : await loadAd(targetPath, "--target", io);
  for (const arg of p.positionals) {
    if (isAssignment(arg)) {
      const failure = insertLine(my, arg);
      if (failure !== null) throw new JobtapError(ErrorCode.CLASSAD_SYNTAX, `assignment ${JSON.stringify(arg)}: ${failure}`);
      continue;
    }
    const v = ev.evaluate(parseArgExpr(arg), { my, target });
    io.stdout(unparseValue(v, old) + "\n");
  }
  return 0;
}

/** `Name = expr` (but not `a == b`, `a =?= b`, `a =!= b`). */
function isAssignment(arg: string): boolean {
  return /^\s*[A-Za-z_][A-Za-z0-9_]*\s*=(?![=?!])/.test(arg);
}

function parseArgExpr(arg: string) {
  try {
    return parseExpr(arg);
  } catch (e) {
    if (isJobtapError(e)) throw new JobtapError(ErrorCode.CLASSAD_SYNTAX, `expression ${JSON.stringify(arg)}: ${e.message}`);
    throw e;
  }
}

async function loadAd(path: string, option: string, io: CliIO): Promise<ClassAd> {
  let text: string;
  try {
    text = path === "-" ? await readAll(io.stdin) : await readFile(resolve(io.cwd, path), "utf8");
  } catch (e) {
    throw usage(`${option} ${path}: ${(e as Error).message}`);
  }
  try {
    return parseAd(text, { comments: true });
  } catch (e) {
    if (isJobtapError(e)) throw new JobtapError(ErrorCode.CLASSAD_SYNTAX, `${option} ${path}: ${e.message}`);
    throw e;
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === "string" ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

/** One request per line; every line gets exactly one answer line. */
function jsonl(text: string, ev: Evaluator, old: boolean, io: CliIO): number {
  let status = 0;
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      io.stdout(JSON.stringify(answer(line, ev, old)) + "\n");
    } catch (e) {
      status = 1;
      const message = isJobtapError(e) ? e.message : (e as Error).message;
      io.stdout(JSON.stringify({ error: message, line: i + 1 }) + "\n");
    }
  });
  return status;
}

function answer(line: string, ev: Evaluator, old: boolean): { value: string; type: string } {
  const req = JSON.parse(line) as unknown;
  if (typeof req !== "object" || req === null || Array.isArray(req)) throw usage("each line must be a JSON object");
  const { ad, target, expr } = req as { ad?: unknown; target?: unknown; expr?: unknown };
  if (typeof expr !== "string") throw usage('"expr" must be a string');
  const v = ev.evaluate(parseExpr(expr), { my: toAd(ad, "ad"), target: target === undefined ? null : toAd(target, "target") });
  return { value: unparseValue(v, old), type: typeOf(v) };
}

function toAd(v: unknown, field: string): ClassAd {
  if (v === undefined || v === null) return new ClassAd();
  if (typeof v === "string") return parseAd(v);
  if (typeof v === "object" && !Array.isArray(v)) return adFromJSON(v);
  throw usage(`"${field}" must be a JSON ad object or ClassAd text`);
}

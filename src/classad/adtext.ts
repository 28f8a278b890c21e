/**
 * Reading whole ads from text: the old-style form every hook speaks (`Name = expr` per line,
 * htcondor.md §1 item 4) and the new-style record form `[ a = 1; b = 2 ]`.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import { ClassAd } from "./classad.js";
import type { Expr } from "./expr.js";
import { guardStack, Parser } from "./parser.js";
import { T } from "./lexer.js";

/** Options for reading old-style text. */
export interface OldAdOptions {
  /**
   * Skip lines whose first non-blank character is `#`, as HTCondor does when it reads an ad
   * from a file (hook output has no comments, so the default is false).
   */
  comments?: boolean;
}

/** A line of old-style text that could not be inserted, with its 1-based line number. */
export interface FailedLine {
  line: number;
  text: string;
  message: string;
}

/**
 * Reads old-style ad text with HTCondor's per-line insert rule: leading whitespace skipped,
 * the first `=` splits name from value, spaces (not tabs) before `=` trimmed, the value is an
 * old-syntax expression of which only the first complete expression counts (trailing text
 * is ignored). Lines without `=`, with an empty name, a leading `'`, or an unparsable value
 * are reported in `failed`; empty lines are skipped. Later lines win over earlier ones.
 */
export function readOldAd(text: string, opts: OldAdOptions = {}): { ad: ClassAd; failed: FailedLine[] } {
  const ad = new ClassAd();
  const failed: FailedLine[] = [];
  const lines = text.split("\n");
  const parser = new Parser("", true);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (opts.comments && /^[ \t]*#/.test(raw)) continue;
    const r = insertLine(ad, raw, parser);
    if (r !== null) failed.push({ line: i + 1, text: raw, message: r });
  }
  return { ad, failed };
}

/** Reads old-style ad text; any failed line throws CLASSAD_SYNTAX naming the line. */
export function parseOldAd(text: string, opts: OldAdOptions = {}): ClassAd {
  const { ad, failed } = readOldAd(text, opts);
  const f = failed[0];
  if (f !== undefined) {
    throw new JobtapError(ErrorCode.CLASSAD_SYNTAX, `old-style ClassAd line ${f.line}: ${f.message}`, { line: f.line, text: f.text });
  }
  return ad;
}

/** Inserts one old-style line into `ad`; returns null on success or why it failed. */
export function insertLine(ad: ClassAd, raw: string, parser: Parser = new Parser("", true)): string | null {
  let p = 0;
  while (p < raw.length && isSpace(raw.charCodeAt(p))) p++;
  if (p >= raw.length) return null;
  const eq = raw.indexOf("=", p);
  if (eq < 0) return "no '=' in the line";
  let end = eq;
  while (end > p && raw.charCodeAt(end - 1) === 32) end--;
  const name = raw.slice(p, end);
  if (name === "") return "empty attribute name";
  if (name.startsWith("'")) return "quoted attribute names are not allowed in old-style ads";
  const value = raw.slice(eq + 1);
  try {
    ad.set(name, guardStack(() => (parser.reset(value), parser.expression())));
    return null;
  } catch (e) {
    return e instanceof JobtapError ? `attribute ${name}: ${e.message}` : String(e);
  }
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 13 || c === 11 || c === 12;
}

/** Parses a new-style ad `[ ... ]` (the whole text); throws CLASSAD_SYNTAX with line:column. */
export function parseNewAd(text: string): ClassAd {
  return guardStack(() => {
    const p = new Parser(text, false);
    if (!p.isOp("[")) p.lx.fail(`expected '[' to start a ClassAd, found ${p.lx.describe()}`);
    p.lx.next();
    const rec = p.record() as { attrs: readonly (readonly [string, Expr])[] };
    if (p.lx.kind !== T.EOF) p.lx.fail(`expected end of input after the ClassAd, found ${p.lx.describe()}`);
    return new ClassAd(rec.attrs);
  });
}

/**
 * Parses an ad in either syntax: text starting with `[` (after whitespace/comments) is a
 * new-style record, anything else old-style lines (strict).
 */
export function parseAd(text: string, opts: OldAdOptions = {}): ClassAd {
  return /^\s*(\/\/[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*\[/.test(text) ? parseNewAd(text) : parseOldAd(text, opts);
}

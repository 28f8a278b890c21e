/**
 * Reading whole ads from text: the old-style form every hook speaks (`Name = expr` per line,
 * htcondor.md §1 item 4) and the new-style record form `[ a = 1; b = 2 ]`.
 */
import { ErrorCode, JobtapError, isJobtapError } from "../errors.js";
import { ClassAd } from "./classad.js";
import { literal, type Expr } from "./expr.js";
import type { Value } from "./values.js";
import { guardStack, Parser } from "./parser.js";
import { smallBigInt, T } from "./lexer.js";

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
  const parser = new Parser("", true);
  // Lines are read in place (no split), one range at a time.
  for (let start = 0, line = 1; start <= text.length; line++) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    if (!(opts.comments && isCommentLine(text, start, end))) {
      const r = insertRange(ad, text, start, end, parser);
      if (r !== null) failed.push({ line, text: text.slice(start, end), message: r });
    }
    start = end + 1;
  }
  return { ad, failed };
}

/** A line whose first character other than space or tab is `#`. */
function isCommentLine(s: string, start: number, end: number): boolean {
  let p = start;
  while (p < end && (s.charCodeAt(p) === 32 || s.charCodeAt(p) === 9)) p++;
  return p < end && s.charCodeAt(p) === 35;
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
  return insertRange(ad, raw, 0, raw.length, parser);
}

/** `insertLine` for the line `s[start, end)`. */
function insertRange(ad: ClassAd, s: string, start: number, end: number, parser: Parser): string | null {
  let p = start;
  while (p < end && isSpace(s.charCodeAt(p))) p++;
  if (p >= end) return null;
  const eq = s.indexOf("=", p);
  if (eq < 0 || eq >= end) return "no '=' in the line";
  let nameEnd = eq;
  while (nameEnd > p && s.charCodeAt(nameEnd - 1) === 32) nameEnd--;
  if (nameEnd === p) return "empty attribute name";
  if (s.charCodeAt(p) === 39) return "quoted attribute names are not allowed in old-style ads";
  const name = s.slice(p, nameEnd);
  const plain = plainLiteral(s, eq + 1, end);
  if (plain !== null) {
    ad.bind(name, plain);
    return null;
  }
  const value = s.slice(eq + 1, end);
  try {
    ad.bind(name, guardStack(() => (parser.reset(value), parser.expression())));
    return null;
  } catch (e) {
    return isJobtapError(e) ? `attribute ${name}: ${e.message}` : String(e);
  }
}

/**
 * Most ad lines hold one plain literal: an integer of at most 15 digits, a string without
 * backslashes, `true` or `false`, alone on the line. This reads those without the parser
 * (the same value it would build); anything else is null and goes to the parser.
 */
function plainLiteral(s: string, from: number, n: number): Expr | null {
  let p = from;
  while (p < n && isSpace(s.charCodeAt(p))) p++;
  const c = s.charCodeAt(p);
  let value: Value;
  if (c === 34) {
    const close = s.indexOf('"', p + 1);
    if (close < 0 || close >= n) return null;
    const slash = s.indexOf("\\", p + 1);
    if (slash >= 0 && slash < close) return null;
    value = s.slice(p + 1, close);
    p = close + 1;
  } else if ((c >= 48 && c <= 57) || c === 45) {
    const digits = c === 45 ? p + 1 : p;
    let q = digits;
    while (q < n && isDigitCode(s.charCodeAt(q))) q++;
    const count = q - digits;
    if (count === 0 || count > 15 || (count > 1 && s.charCodeAt(digits) === 48)) return null;
    const next = s.charCodeAt(q);
    if (next === 46 || isIdentCode(next)) return null;
    let v = 0;
    for (let i = digits; i < q; i++) v = v * 10 + (s.charCodeAt(i) - 48);
    value = c === 45 ? BigInt(-v) : smallBigInt(v);
    p = q;
  } else if (c === 116 || c === 102 || c === 84 || c === 70) {
    let q = p;
    while (q < n && isIdentCode(s.charCodeAt(q))) q++;
    if (q - p === 4 && wordIs(s, p, "true")) value = true;
    else if (q - p === 5 && wordIs(s, p, "false")) value = false;
    else return null;
    p = q;
  } else return null;
  while (p < n && isSpace(s.charCodeAt(p))) p++;
  return p === n ? literal(value) : null;
}

/** True if `s` at `p` spells the lower-case ASCII `word` in any case. */
function wordIs(s: string, p: number, word: string): boolean {
  for (let i = 0; i < word.length; i++) if ((s.charCodeAt(p + i) | 32) !== word.charCodeAt(i)) return false;
  return true;
}

function isDigitCode(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isIdentCode(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || isDigitCode(c);
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

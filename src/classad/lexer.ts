/**
 * The ClassAd lexer: one token at a time over char codes, with line:column positions.
 *
 * Two string dialects: new syntax (C escapes) and old syntax (the hook/config form, where a
 * backslash is literal except before `"`). HTCondor compat rules: a leading-zero multi-digit
 * integer and hex integers are syntax errors; `1.` is a syntax error; a `-` directly before a
 * number is part of the literal unless the previous token ends a value.
 */
import { ErrorCode, JobtapError } from "../errors.js";

/** Token kinds. */
export const T = {
  EOF: 0,
  INT: 1,
  REAL: 2,
  STRING: 3,
  IDENT: 4,
  /** `'quoted attribute name'` */
  QNAME: 5,
  OP: 6,
} as const;
export type TokenKind = (typeof T)[keyof typeof T];

/** C escapes accepted in new-syntax strings and quoted names. */
const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", f: "\f", v: "\v", "\\": "\\", '"': '"', "'": "'", "?": "?" };

/** One-character operator spellings (longer ones are found in operatorAt). */
const OPS1 = ".*/%+-~^&|!<>?:;,[](){}=";

/** The tokenizer: `next()` advances; `kind`/`text`/`int`/`real` describe the token. */
export class Lexer {
  pos = 0;
  kind: TokenKind = T.EOF;
  /** Token text: identifier/operator spelling, or the decoded string. */
  text = "";
  int = 0n;
  real = 0;
  /** Start offset of the current token. */
  start = 0;
  private prevEndsValue = false;

  constructor(
    public src: string,
    readonly oldSyntax: boolean,
  ) {}

  /** Starts over on new text (lets one lexer serve every line of an ad). */
  reset(src: string): void {
    this.src = src;
    this.pos = 0;
    this.start = 0;
    this.prevEndsValue = false;
    this.kind = T.EOF;
  }

  /** Throws CLASSAD_SYNTAX naming line:column of `offset`. */
  fail(message: string, offset = this.start): never {
    const { line, col } = this.lineCol(offset);
    throw new JobtapError(ErrorCode.CLASSAD_SYNTAX, `ClassAd syntax error at ${line}:${col}: ${message}`, {
      line,
      column: col,
    });
  }

  /** 1-based line and column of an offset. */
  lineCol(offset: number): { line: number; col: number } {
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < offset && i < this.src.length; i++) {
      if (this.src.charCodeAt(i) === 10) {
        line++;
        lineStart = i + 1;
      }
    }
    return { line, col: offset - lineStart + 1 };
  }

  /** A short description of the current token for "found ..." messages. */
  describe(): string {
    switch (this.kind) {
      case T.EOF:
        return "end of input";
      case T.STRING:
        return "a string";
      case T.INT:
      case T.REAL:
        return `number ${this.src.slice(this.start, this.pos)}`;
      default:
        return `"${this.text}"`;
    }
  }

  /** Advances to the next token. */
  next(): void {
    this.skipSpace();
    const s = this.src;
    const p = this.pos;
    this.start = p;
    if (p >= s.length) {
      this.kind = T.EOF;
      this.text = "";
      return;
    }
    const c = s.charCodeAt(p);
    if (isIdentStart(c)) return this.ident();
    if (isDigit(c) || (c === 46 && isDigit(s.charCodeAt(p + 1)))) return this.number(p);
    if (c === 45 && !this.prevEndsValue && (isDigit(s.charCodeAt(p + 1)) || (s.charCodeAt(p + 1) === 46 && isDigit(s.charCodeAt(p + 2))))) {
      return this.number(p + 1);
    }
    if (c === 34) return this.string();
    if (c === 39) return this.quotedName();
    this.operator();
  }

  private skipSpace(): void {
    const s = this.src;
    let p = this.pos;
    for (;;) {
      const c = s.charCodeAt(p);
      if (c === 32 || c === 9 || c === 10 || c === 13 || c === 12 || c === 11) p++;
      else if (c === 47 && s.charCodeAt(p + 1) === 47) {
        while (p < s.length && s.charCodeAt(p) !== 10) p++;
      } else if (c === 47 && s.charCodeAt(p + 1) === 42) {
        const end = s.indexOf("*/", p + 2);
        if (end < 0) {
          this.pos = p;
          this.fail("unterminated /* comment", p);
        }
        p = end + 2;
      } else break;
    }
    this.pos = p;
  }

  private ident(): void {
    const s = this.src;
    let p = this.pos + 1;
    while (p < s.length && isIdentPart(s.charCodeAt(p))) p++;
    this.text = s.slice(this.pos, p);
    this.pos = p;
    this.kind = T.IDENT;
    const n = this.text.length;
    this.prevEndsValue = !((n === 2 || n === 4) && /^(is|isnt)$/i.test(this.text));
  }

  private number(digitsAt: number): void {
    const s = this.src;
    let p = digitsAt;
    while (isDigit(s.charCodeAt(p))) p++;
    const intEnd = p;
    let isReal = false;
    if (s.charCodeAt(p) === 46) {
      if (!isDigit(s.charCodeAt(p + 1))) this.fail("a real number needs digits after the '.'", p);
      isReal = true;
      p++;
      while (isDigit(s.charCodeAt(p))) p++;
    }
    const e = s.charCodeAt(p);
    if (e === 101 || e === 69) {
      let q = p + 1;
      if (s.charCodeAt(q) === 43 || s.charCodeAt(q) === 45) q++;
      if (isDigit(s.charCodeAt(q))) {
        isReal = true;
        p = q;
        while (isDigit(s.charCodeAt(p))) p++;
      }
    }
    if (isIdentPart(s.charCodeAt(p))) {
      const what = s.charCodeAt(digitsAt) === 48 && (s.charCodeAt(digitsAt + 1) | 32) === 120 ? "hexadecimal integers are not allowed" : "malformed number";
      this.fail(what, this.start);
    }
    const text = s.slice(this.start, p);
    if (!isReal && intEnd - digitsAt > 1 && s.charCodeAt(digitsAt) === 48) {
      this.fail(`integer with a leading zero (${text}) is not allowed`, this.start);
    }
    this.pos = p;
    this.text = text;
    this.prevEndsValue = true;
    if (isReal) {
      this.kind = T.REAL;
      this.real = Number(text);
    } else {
      this.kind = T.INT;
      this.int = text.length <= 15 ? smallBigInt(Number(text)) : clampInt(BigInt(text));
    }
  }

  private string(): void {
    let out = "";
    for (;;) {
      out += this.oldSyntax ? this.oldStringBody() : this.newStringBody();
      // Adjacent string literals concatenate ("a" "b" is "ab").
      const save = this.pos;
      this.skipSpace();
      if (this.src.charCodeAt(this.pos) !== 34) {
        this.pos = save;
        break;
      }
    }
    this.kind = T.STRING;
    this.text = out;
    this.prevEndsValue = true;
  }

  /** Old syntax: a backslash is literal except before `"`. */
  private oldStringBody(): string {
    const s = this.src;
    const open = this.pos;
    let p = open + 1;
    let out = "";
    let from = p;
    for (;;) {
      if (p >= s.length) this.fail("unterminated string literal", open);
      const c = s.charCodeAt(p);
      if (c === 34) break;
      if (c === 92 && s.charCodeAt(p + 1) === 34) {
        out += s.slice(from, p) + '"';
        p += 2;
        from = p;
        continue;
      }
      p++;
    }
    out += s.slice(from, p);
    this.pos = p + 1;
    return out;
  }

  /** New syntax: C escapes; an unknown escape drops the backslash; `\0` is invalid. */
  private newStringBody(): string {
    const s = this.src;
    const open = this.pos;
    let p = open + 1;
    let out = "";
    let from = p;
    for (;;) {
      if (p >= s.length) this.fail("unterminated string literal", open);
      const c = s.charCodeAt(p);
      if (c === 34) break;
      if (c !== 92) {
        p++;
        continue;
      }
      out += s.slice(from, p);
      const [text, used] = this.escape(p);
      out += text;
      p += used;
      from = p;
    }
    out += s.slice(from, p);
    this.pos = p + 1;
    return out;
  }

  /** Decodes the escape at `p` (a backslash); returns its text and length. */
  private escape(p: number): [string, number] {
    const s = this.src;
    const c = s[p + 1];
    if (c === undefined) this.fail("unterminated string literal", p);
    const hit = ESCAPES[c];
    if (hit !== undefined) return [hit, 2];
    if (c >= "0" && c <= "7") {
      let q = p + 1;
      const max = c <= "3" ? 3 : 2;
      while (q < p + 1 + max && s[q] !== undefined && s[q]! >= "0" && s[q]! <= "7") q++;
      const code = parseInt(s.slice(p + 1, q), 8);
      if (code === 0) this.fail("\\0 is not allowed in a string literal", p);
      return [String.fromCharCode(code), q - p];
    }
    return [c, 2];
  }

  private quotedName(): void {
    const s = this.src;
    const open = this.pos;
    let p = open + 1;
    let out = "";
    for (;;) {
      if (p >= s.length) this.fail("unterminated quoted attribute name", open);
      const c = s.charCodeAt(p);
      if (c === 39) break;
      if (c === 92) {
        const [text, used] = this.escape(p);
        out += text;
        p += used;
        continue;
      }
      out += s[p];
      p++;
    }
    this.pos = p + 1;
    this.kind = T.QNAME;
    this.text = out;
    this.prevEndsValue = true;
  }

  private operator(): void {
    const s = this.src;
    const p = this.pos;
    const op = operatorAt(s, p);
    if (op === null) this.fail(`unexpected character ${JSON.stringify(s[p])}`, p);
    this.pos = p + op.length;
    this.kind = T.OP;
    this.text = op;
    this.prevEndsValue = op === ")" || op === "]" || op === "}";
  }
}

/** One-character operators by char code (the spellings are interned once). */
const OPS1_BY_CODE: (string | undefined)[] = [];
for (const ch of OPS1) OPS1_BY_CODE[ch.charCodeAt(0)] = ch;

/** The longest operator spelling at `p`, or null (char codes only: this runs per token). */
function operatorAt(s: string, p: number): string | null {
  const c = s.charCodeAt(p);
  const c2 = s.charCodeAt(p + 1);
  switch (c) {
    case 60: // <
      return c2 === 61 ? "<=" : c2 === 60 ? "<<" : "<";
    case 62: // >
      if (c2 === 62) return s.charCodeAt(p + 2) === 62 ? ">>>" : ">>";
      return c2 === 61 ? ">=" : ">";
    case 61: // =
      if (c2 === 61) return "==";
      if (c2 === 63 && s.charCodeAt(p + 2) === 61) return "=?=";
      if (c2 === 33 && s.charCodeAt(p + 2) === 61) return "=!=";
      return "=";
    case 33: // !
      return c2 === 61 ? "!=" : "!";
    case 38: // &
      return c2 === 38 ? "&&" : "&";
    case 124: // |
      return c2 === 124 ? "||" : "|";
    case 63: // ?
      return c2 === 58 ? "?:" : "?";
  }
  return OPS1_BY_CODE[c] ?? null;
}

/** Pre-built bigints for small literals: most ad values are small, so lexing allocates less. */
const SMALL_INTS: readonly bigint[] = Array.from({ length: 4096 }, (_, i) => BigInt(i));

/** The bigint for a small literal, shared for 0..4095. */
export function smallBigInt(n: number): bigint {
  return n >= 0 && n < 4096 ? SMALL_INTS[n]! : BigInt(n);
}

/** strtoll-style saturation of an over-long literal. */
function clampInt(n: bigint): bigint {
  return n > 0x7fffffffffffffffn ? 0x7fffffffffffffffn : n < -0x8000000000000000n ? -0x8000000000000000n : n;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
function isIdentStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}
function isIdentPart(c: number): boolean {
  return isIdentStart(c) || isDigit(c);
}

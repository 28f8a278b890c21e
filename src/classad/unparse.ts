/**
 * Printing expressions, values and ads exactly as HTCondor's unparser does.
 *
 * Two printers: the new-style one (C escapes in strings, reals as `%1.15E`, `is`/`isnt`) and
 * the old-style one used by sPrintAd and every hook boundary (strings raw except `\"`, reals
 * as `%.16G` with `.0` added when the result looks integral, `=?=`/`=!=`). Binary operators
 * get one space each side; unary operators are printed with a leading space (` -x`, ` !x`),
 * function arguments and list items are joined by a bare `,`, lists print as `{ 1,2 }`,
 * records as `[ a = 1; b = 2 ]`. Parentheses written by the author are kept.
 */
import { ClassAd } from "./classad.js";
import { formatE, formatG } from "./cformat.js";
import type { Expr } from "./expr.js";
import { AbsTime, ListValue, RelTime, type Value } from "./values.js";

const RESERVED = new Set(["error", "false", "is", "isnt", "parent", "true", "undefined"]);
const UNARY_TEXT: Record<string, string> = { "-": " -", "+": " +", "!": " !", "~": " ~" };

/** Prints an expression tree (new style unless `old`). */
export function unparse(e: Expr, old = false): string {
  const out: string[] = [];
  exprTo(out, e, old);
  return out.join("");
}

/** Prints a value (new style unless `old`). */
export function unparseValue(v: Value, old = false): string {
  const out: string[] = [];
  valueTo(out, v, old);
  return out.join("");
}

/** The old-style ad text HTCondor's sPrintAd writes: one `Name = expr` line per attribute. */
export function printOldAd(ad: ClassAd): string {
  let s = "";
  for (const [name, expr] of ad.attributes()) s += `${name} = ${unparse(expr, true)}\n`;
  return s;
}

/** The new-style record text `[ a = 1; b = "x" ]`. */
export function printNewAd(ad: ClassAd): string {
  const out: string[] = [];
  adTo(out, ad, false);
  return out.join("");
}

function exprTo(out: string[], e: Expr, old: boolean): void {
  switch (e.type) {
    case "literal":
      return valueTo(out, e.value, old);
    case "attr":
      if (e.base !== null) {
        exprTo(out, e.base, old);
        out.push(".", e.name);
      } else out.push(e.absolute ? "." : "", identifier(e.name, old));
      return;
    case "paren":
      out.push("(");
      exprTo(out, e.inner, old);
      out.push(")");
      return;
    case "unary":
      out.push(UNARY_TEXT[e.op]!);
      return exprTo(out, e.operand, old);
    case "binary":
      exprTo(out, e.left, old);
      out.push(" ", binaryText(e.op, old), " ");
      return exprTo(out, e.right, old);
    case "ternary":
      exprTo(out, e.cond, old);
      if (e.then !== null) {
        out.push(" ? ");
        exprTo(out, e.then, old);
        out.push(" : ");
      } else out.push(" ?: ");
      return exprTo(out, e.else, old);
    case "subscript":
      exprTo(out, e.base, old);
      out.push("[");
      exprTo(out, e.index, old);
      out.push("]");
      return;
    case "call":
      out.push(e.name, "(");
      joinTo(out, e.args, old);
      out.push(")");
      return;
    case "list":
      out.push("{ ");
      joinTo(out, e.items, old);
      out.push(" }");
      return;
    case "record":
      return attrsTo(out, e.attrs, old);
  }
}

function joinTo(out: string[], items: readonly Expr[], old: boolean): void {
  items.forEach((x, i) => {
    if (i > 0) out.push(",");
    exprTo(out, x, old);
  });
}

function binaryText(op: string, old: boolean): string {
  if (old && op === "is") return "=?=";
  if (old && op === "isnt") return "=!=";
  return op;
}

function attrsTo(out: string[], attrs: Iterable<readonly [string, Expr]>, old: boolean): void {
  out.push("[ ");
  let first = true;
  for (const [name, expr] of attrs) {
    if (!first) out.push("; ");
    first = false;
    out.push(identifier(name, old), " = ");
    exprTo(out, expr, old);
  }
  out.push(" ]");
}

function adTo(out: string[], ad: ClassAd, old: boolean): void {
  attrsTo(out, ad.attributes(), old);
}

function valueTo(out: string[], v: Value, old: boolean): void {
  switch (typeof v) {
    case "boolean":
      out.push(v ? "true" : "false");
      return;
    case "bigint":
      out.push(v.toString());
      return;
    case "number":
      out.push(formatReal(v, old));
      return;
    case "string":
      out.push(quoteString(v, old, '"'));
      return;
  }
  if (v instanceof ListValue) {
    out.push("{ ");
    if (v.exprs !== null) joinTo(out, v.exprs, old);
    else {
      v.items.forEach((x, i) => {
        if (i > 0) out.push(",");
        valueTo(out, x, old);
      });
    }
    out.push(" }");
  } else if (v instanceof ClassAd) adTo(out, v, old);
  else if (v instanceof AbsTime) out.push(`absTime("${absTimeText(v)}")`);
  else if (v instanceof RelTime) out.push(`relTime("${relTimeText(v.secs)}")`);
  else out.push(v.kind);
}

/** Reals: `0.0`, NaN/INF spelled as calls, then `%.16G`(+`.0`) old or `%1.15E` new. */
export function formatReal(x: number, old: boolean): string {
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  if (Number.isNaN(x)) return 'real("NaN")';
  if (x === Infinity) return 'real("INF")';
  if (x === -Infinity) return 'real("-INF")';
  if (!old) return formatE(x, 15);
  const g = formatG(x, 16);
  return /[.Ee]/.test(g) ? g : g + ".0";
}

/**
 * Quotes a string. Old style escapes only the delimiter; new style also writes C escapes for
 * control characters (as `\ooo` when there is no letter escape). Non-ASCII text is written
 * as is (HTCondor in the C locale would octal-escape each UTF-8 byte; see docs/classad.md).
 */
export function quoteString(s: string, old: boolean, delim: string): string {
  let out = delim;
  for (const ch of s) {
    if (ch === delim) out += "\\" + delim;
    else if (old) out += ch;
    else out += escapeChar(ch);
  }
  return out + delim;
}

const CHAR_ESCAPES: Record<string, string> = { "\x07": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v", "\\": "\\\\" };

function escapeChar(ch: string): string {
  const e = CHAR_ESCAPES[ch];
  if (e !== undefined) return e;
  const c = ch.charCodeAt(0);
  if (c < 0x20 || c === 0x7f) return "\\" + c.toString(8).padStart(3, "0");
  return ch;
}

/** An attribute name, quoted `'like this'` when it is not a plain identifier or is reserved. */
export function identifier(name: string, old: boolean): string {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !RESERVED.has(name.toLowerCase())) return name;
  return quoteString(name, old, "'");
}

/**
 * `YYYY-MM-DDThh:mm:ss±hh:mm`, wall clock in the value's own zone. As HTCondor, only a
 * positive offset gets `+`: UTC prints as `-00:00`.
 */
export function absTimeText(t: AbsTime): string {
  const d = new Date((t.secs + t.offset) * 1000);
  const p2 = (n: number) => String(n).padStart(2, "0");
  const off = Math.abs(t.offset);
  const zone = `${t.offset > 0 ? "+" : "-"}${p2(Math.floor(off / 3600))}:${p2(Math.floor(off / 60) % 60)}`;
  return `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())}T${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}${zone}`;
}

/** `[-][D+]hh:mm:ss`, dropping leading zero fields (`mm:ss`, `ss`); fractions as `%02g`. */
export function relTimeText(secs: number): string {
  const neg = secs < 0;
  const abs = Math.abs(secs);
  const whole = Math.floor(abs);
  const frac = abs - whole;
  const days = Math.floor(whole / 86400);
  const h = Math.floor((whole % 86400) / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const p2 = (n: number) => String(n).padStart(2, "0");
  const s = frac === 0 ? p2(whole % 60) : formatG((whole % 60) + frac, 6).padStart(2, "0");
  let text: string;
  if (days > 0) text = `${days}+${p2(h)}:${p2(m)}:${s}`;
  else if (h > 0) text = `${p2(h)}:${p2(m)}:${s}`;
  else if (m > 0) text = `${p2(m)}:${s}`;
  else text = s;
  return (neg ? "-" : "") + text;
}

/**
 * The function macros: `$ENV`, `$INT`, `$REAL`, `$STRING`, `$EVAL`, `$SUBSTR`, `$CHOICE`,
 * `$RANDOM_CHOICE`, `$RANDOM_INTEGER`, `$F<flags>`, `$DIRNAME`, `$BASENAME`.
 * Function names are case-sensitive, as in HTCondor; an unknown `$NAME(...)` is left as text.
 */
import { formatE, formatF, formatG, isError, isUndefined, parseExpr, unparseValue, type ClassAd, type Evaluator, type Expr, type Value } from "./classad-bridge.js";
import type { EvaluatedMacro, Expander } from "./macros.js";

/** Splits a function macro's argument text at top-level commas (outside parens and quotes). */
export function splitMacroArgs(body: string): string[] {
  const args: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === '"' && body[i - 1] !== "\\") quoted = !quoted;
    else if (!quoted && ch === "(") depth++;
    else if (!quoted && ch === ")") depth--;
    else if (!quoted && depth === 0 && ch === ",") {
      args.push(body.slice(start, i).trim());
      start = i + 1;
    }
  }
  args.push(body.slice(start).trim());
  return args;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_.]*$/;

/** An argument naming a macro gives that macro's value; anything else is taken as written. */
function argValue(ex: Expander, arg: string, stack: readonly string[]): string {
  const text = ex.expand(arg, stack).trim();
  if (IDENT.test(text)) {
    const value = ex.lookupExpanded(text, stack);
    if (value !== undefined) return value;
  }
  return text;
}

/** A ClassAd value as the function macros see it. */
export function macroValue(v: Value): EvaluatedMacro {
  if (typeof v === "string") return { kind: "string", value: v };
  if (typeof v === "bigint") return { kind: "number", value: Number(v), integer: true, exact: v };
  if (typeof v === "number") return { kind: "number", value: v, integer: false };
  if (typeof v === "boolean") return { kind: "bool", value: v };
  if (isUndefined(v)) return { kind: "undefined" };
  if (isError(v)) return { kind: "error" };
  return { kind: "other", text: unparseValue(v, true) };
}

/**
 * Evaluates macro argument text as a ClassAd expression (new syntax, old accepted) with MY =
 * `my`; HTCondor's config code evaluates in an empty ad, so names there are undefined.
 * Text that does not parse is the error value.
 */
export function evaluateMacroText(text: string, ev: Evaluator, my: ClassAd | null): EvaluatedMacro {
  let expr: Expr;
  try {
    expr = parseExpr(text, false);
  } catch {
    try {
      expr = parseExpr(text, true);
    } catch {
      return { kind: "error" };
    }
  }
  return macroValue(ev.evaluate(expr, { my }));
}

function evaluate(ex: Expander, fn: string, expression: string): EvaluatedMacro {
  if (!ex.scope.evaluate) ex.fail(`$${fn}() needs ClassAd evaluation, which is not available here`);
  return ex.scope.evaluate(expression);
}

/** Formats a number with a printf-style format such as `%d`, `%5.2f`, `%G`, `%x`. */
export function formatNumber(value: number, format: string): string {
  const m = /%([-+ 0#]*)(\d*)(?:\.(\d+))?([diouxXeEfFgGs])/.exec(format);
  if (!m) return format;
  const [, flags = "", width = "", prec, conv = "d"] = m;
  const p = prec === undefined ? undefined : Number(prec);
  let body: string;
  if ("diu".includes(conv)) body = String(Math.trunc(value));
  else if (conv === "o") body = Math.trunc(value).toString(8);
  else if (conv === "x" || conv === "X") body = Math.trunc(value).toString(16);
  else if (!Number.isFinite(value)) body = Number.isNaN(value) ? "nan" : value > 0 ? "inf" : "-inf";
  else if (conv === "f" || conv === "F") body = formatF(value, p ?? 6);
  else if (conv === "e" || conv === "E") body = formatE(value, p ?? 6).toLowerCase();
  else if (conv === "g" || conv === "G") body = formatG(value, p === 0 ? 1 : (p ?? 6)).toLowerCase();
  else body = String(value);
  if ("XEFG".includes(conv)) body = body.toUpperCase();
  // C printf: the sign goes before zero padding (`%05d` of -3 is -0003).
  let sign = body.startsWith("-") ? "-" : flags.includes("+") && value >= 0 ? "+" : flags.includes(" ") && value >= 0 ? " " : "";
  if (body.startsWith("-")) body = body.slice(1);
  const w = Number(width || 0) - sign.length;
  if (body.length < w) {
    if (flags.includes("-")) body += " ".repeat(w - body.length);
    else if (flags.includes("0") && Number.isFinite(value)) body = "0".repeat(w - body.length) + body;
    else {
      sign = " ".repeat(w - body.length) + sign;
    }
  }
  body = sign + body;
  return format.slice(0, m.index) + body + format.slice(m.index + m[0].length);
}

const INT64_MIN = -0x8000000000000000n;
const INT64_MAX = 0x7fffffffffffffffn;
/** What C's strtoll reads as a whole (blanks around it allowed), HTCondor's first try. */
const STRTOLL_WHOLE = /^\s*([+-]?\d+)\s*$/;
/** What C's strtod reads as a whole (decimal forms, inf, nan), HTCondor's first try. */
const STRTOD_WHOLE = /^\s*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))\s*$/i;

/** strtod's value of a decimal, inf or nan spelling (any case). */
function strtodValue(s: string): number {
  const t = s.toLowerCase();
  if (t.endsWith("nan")) return NaN;
  if (t.includes("inf")) return t.startsWith("-") ? -Infinity : Infinity;
  return Number(s);
}

/**
 * The argument of `$INT`/`$REAL` as HTCondor's string_is_long_param/string_is_double_param
 * read it: a plain number first (an integer beyond 64 bits saturates, as strtoll does),
 * otherwise the text is evaluated as a ClassAd expression, whose value must be a number
 * (a real truncated toward zero for `$INT`) or a boolean (1 or 0). A string value, even
 * "5", is not a number.
 */
function numeric(ex: Expander, fn: "INT" | "REAL", args: string[], stack: readonly string[]): bigint | number {
  const text = argValue(ex, args[0] ?? "", stack);
  if (fn === "INT") {
    const m = STRTOLL_WHOLE.exec(text);
    if (m) {
      const n = BigInt(m[1]!);
      return n < INT64_MIN ? INT64_MIN : n > INT64_MAX ? INT64_MAX : n;
    }
  } else {
    const m = STRTOD_WHOLE.exec(text);
    if (m) return strtodValue(m[1]!);
  }
  const v = evaluate(ex, fn, text);
  if (v.kind === "bool") return fn === "INT" ? BigInt(v.value) : Number(v.value);
  if (v.kind === "number") {
    if (fn === "REAL") return v.value;
    if (v.exact !== undefined) return v.exact;
    if (Number.isFinite(v.value)) return BigInt(Math.trunc(v.value));
  }
  return ex.fail(`$${fn}(${args[0] ?? ""}): "${text}" does not evaluate to ${fn === "INT" ? "an integer" : "a real"}`);
}

function evalText(ex: Expander, fn: string, args: string[], stack: readonly string[]): string {
  const v = evaluate(ex, fn, argValue(ex, args[0] ?? "", stack));
  switch (v.kind) {
    case "string":
      return v.value;
    case "number":
      return String(v.value);
    case "bool":
      return v.value ? "true" : "false";
    case "undefined":
      return "undefined";
    case "error":
      return "error";
    case "other":
      return v.text;
  }
}

/** `$SUBSTR(x, start[, len])`: negative start counts from the end, negative len trims the right. */
export function substr(s: string, start: number, len?: number): string {
  let from = start < 0 ? Math.max(0, s.length + start) : Math.min(start, s.length);
  let to = s.length;
  if (len !== undefined) to = len < 0 ? s.length + len : from + len;
  if (to < from) to = from;
  return s.slice(from, to);
}

function pathParts(path: string): { dir: string; base: string; stem: string; ext: string } {
  const slash = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  const dir = slash < 0 ? "" : path.slice(0, slash + 1);
  const base = path.slice(slash + 1);
  const dot = base.lastIndexOf(".");
  const stem = dot <= 0 ? base : base.slice(0, dot);
  return { dir, base, stem, ext: dot <= 0 ? "" : base.slice(dot) };
}

/**
 * `$F<flags>(x)` as HTCondor's config.cpp: p = full directory, d = parent directory name,
 * n = name without extension, x = extension, q = quoted (incoming quotes are stripped).
 * A bare file name ignores p/d when n or x is given; `px` gives the whole path and `d`
 * wins over `p` (HTCondor's own table).
 */
function fileMacro(flags: string, text: string): string {
  const path = text.length >= 2 && text.startsWith('"') && text.endsWith('"') ? text.slice(1, -1) : text;
  const { dir, stem, ext } = pathParts(path);
  let p = flags.includes("p");
  let d = flags.includes("d");
  const n = flags.includes("n");
  const x = flags.includes("x");
  if (dir === "" && (n || x)) p = d = false;
  let out: string;
  if (d) out = dir === "" ? "" : parentName(dir) + (n ? stem : "") + (x ? (n ? ext : stem + ext) : "");
  else if (p) out = x ? path : dir + (n ? stem : "");
  else if (n || x) out = (n ? stem : "") + (x ? ext : "");
  else out = path;
  return flags.includes("q") ? `"${out}"` : out;
}

/** The last directory of `dir` (which ends in a separator), separator included: `/a/b/` → `b/`. */
function parentName(dir: string): string {
  const inner = dir.slice(0, -1);
  const slash = Math.max(inner.lastIndexOf("/"), inner.lastIndexOf("\\"));
  return dir.slice(slash + 1);
}

function randomIndex(ex: Expander, n: number): number {
  return Math.min(n - 1, Math.floor((ex.scope.random ?? Math.random)() * n));
}

function choiceList(ex: Expander, args: string[], stack: readonly string[]): string[] {
  if (args.length === 1) {
    return argValue(ex, args[0]!, stack).split(/[\s,]+/).filter((s) => s !== "");
  }
  return args.map((a) => ex.expand(a, stack).trim());
}

/** Expands `$fn(body)`; returns undefined for a name that is not a function macro. */
export function expandFunctionMacro(
  ex: Expander,
  fn: string,
  body: string,
  stack: readonly string[],
): string | undefined {
  const args = splitMacroArgs(body);
  switch (fn) {
    case "ENV": {
      // HTCondor's config.cpp: an unset variable is the text UNDEFINED unless a default is
      // given; a variable set to the empty string is empty (the default is not used).
      const colon = body.indexOf(":");
      const name = ex.expand(colon < 0 ? body : body.slice(0, colon), stack).trim();
      const value = ex.scope.env[name];
      if (value !== undefined) return value;
      return colon < 0 ? "UNDEFINED" : ex.expand(body.slice(colon + 1), stack);
    }
    case "INT": {
      const n = numeric(ex, fn, args, stack) as bigint;
      return args[1] ? formatNumber(Number(n), args[1]) : n.toString();
    }
    case "REAL": {
      // HTCondor: `%.16G` by default; with a format, `.0` is added when the result has no
      // `.` (not after an exponent or inf/nan, where HTCondor's `1E-07.0` would not parse).
      const n = numeric(ex, fn, args, stack) as number;
      if (!args[1]) return Number.isFinite(n) ? formatG(n, 16) : formatNumber(n, "%G");
      const text = formatNumber(n, args[1]);
      return /[.eEnN]/.test(text) ? text : text + ".0";
    }
    case "STRING":
    case "EVAL":
      return evalText(ex, fn, args, stack);
    case "SUBSTR": {
      const s = argValue(ex, args[0] ?? "", stack);
      const start = Number(ex.expand(args[1] ?? "0", stack));
      const len = args[2] === undefined ? undefined : Number(ex.expand(args[2], stack));
      if (!Number.isInteger(start) || (len !== undefined && !Number.isInteger(len))) {
        ex.fail(`$SUBSTR(${body}): start and length must be integers`);
      }
      return substr(s, start, len);
    }
    case "CHOICE": {
      const index = Number(argValue(ex, args[0] ?? "", stack));
      const list = choiceList(ex, args.slice(1), stack);
      if (!Number.isInteger(index) || index < 0 || index >= list.length) {
        ex.fail(`$CHOICE(${body}): index ${args[0]} is outside the list of ${list.length}`);
      }
      return list[index]!;
    }
    case "RANDOM_CHOICE": {
      const list = choiceList(ex, args, stack);
      return list.length === 0 ? "" : list[randomIndex(ex, list.length)]!;
    }
    case "RANDOM_INTEGER": {
      const [min, max, step = 1] = args.map((a) => Number(ex.expand(a, stack)));
      if (min === undefined || max === undefined || !(step > 0) || max < min) {
        ex.fail(`$RANDOM_INTEGER(${body}): needs min, max[, step] with min <= max`);
      }
      return String(min + step * randomIndex(ex, Math.floor((max - min) / step) + 1));
    }
    case "DIRNAME":
      return pathParts(argValue(ex, args[0] ?? "", stack)).dir;
    case "BASENAME": {
      const base = pathParts(argValue(ex, args[0] ?? "", stack)).base;
      const suffix = args[1] === undefined ? "" : ex.expand(args[1], stack);
      return suffix !== "" && base.endsWith(suffix) ? base.slice(0, -suffix.length) : base;
    }
  }
  if (/^F[a-z]*$/.test(fn)) return fileMacro(fn.slice(1), argValue(ex, args[0] ?? "", stack));
  return undefined;
}

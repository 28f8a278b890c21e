/**
 * Regular-expression builtins: regexp, regexpMember, regexps, replace, replaceAll and
 * stringList_regexpMember. Patterns are PCRE in HTCondor; JavaScript's RegExp accepts the
 * common subset. Option letters (lower case only, unknown ones ignored): i caseless,
 * m multiline, s dotall, x extended, f full-target substitution, g global.
 */
import { ERROR, ListValue, MAX_STRING_LENGTH, UNDEFINED, type Value } from "../values.js";
import { isErr, isUndef, splitStringList, type Registry } from "./util.js";
import { foldCase, unboundedBacktracking } from "../regex-safety.js";

/** Registers the regexp builtins; compiled patterns are cached per evaluator instance. */
export function registerRegex(r: Registry): void {
  const cache = new Map<string, RegExp | null>();
  const compile = (pat: string, opts: string): RegExp | null => {
    const key = opts + "\u0000" + pat;
    let re = cache.get(key);
    if (re === undefined) {
      re = buildRegExp(pat, opts);
      if (cache.size > 500) cache.clear();
      cache.set(key, re);
    }
    // A cached global RegExp keeps lastIndex between calls; start every use afresh.
    if (re !== null) re.lastIndex = 0;
    return re;
  };
  r.addFunction("regexp", (a) => regexpFn(a, compile));
  r.addFunction("regexpMember", (a) => regexpMember(a, compile));
  r.addFunction("regexps", (a) => substitute(a, compile, ""));
  r.addFunction("replace", (a) => substitute(a, compile, "f"));
  r.addFunction("replaceAll", (a) => substitute(a, compile, "fg"));
  r.addFunction("stringList_regexpMember", (a) => stringListRegexpMember(a, compile));
}

type Compile = (pat: string, opts: string) => RegExp | null;

/** A JS RegExp for a PCRE pattern and HTCondor option letters, or null if invalid. */
export function buildRegExp(pat: string, opts: string): RegExp | null {
  // PCRE spellings JavaScript lacks: a leading inline option group, \A, \z and \Z.
  const inline = /^\(\?([imsx]+)\)/.exec(pat);
  if (inline) {
    opts += inline[1];
    pat = pat.slice(inline[0].length);
  }
  pat = pat.replace(/(^|[^\\])((?:\\\\)*)\\A/g, "$1$2^").replace(/(^|[^\\])((?:\\\\)*)\\[zZ]/g, "$1$2$$");
  let flags = "";
  if (opts.includes("i")) flags += "i";
  if (opts.includes("m")) flags += "m";
  if (opts.includes("s")) flags += "s";
  if (opts.includes("g")) flags += "g";
  let source = opts.includes("x") ? stripExtended(pat) : pat;
  if (badBackReference(source)) return null;
  // Matching time must stay bounded (regex-safety.ts): refused patterns are an error value.
  if (unboundedBacktracking(source) !== undefined) return null;
  if (flags.includes("i") && !/\\[1-9]|\\k</.test(source)) {
    source = foldCase(source);
    flags = flags.replace("i", "");
  }
  try {
    return new RegExp(source, flags);
  } catch {
    return null;
  }
}

/**
 * PCRE refuses a back reference to a group the pattern does not have (`\1` with no group);
 * JavaScript would read it as an octal escape and match. `\1`..`\9` are always back
 * references in PCRE; longer numbers only when that many groups exist.
 */
function badBackReference(p: string): boolean {
  let groups = 0;
  const refs: number[] = [];
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === "\\") {
      const m = /^[1-9][0-9]*/.exec(p.slice(i + 1, i + 12));
      if (m && !inClass) refs.push(Number(m[0]));
      i++;
    } else if (inClass) inClass = c !== "]";
    else if (c === "[") inClass = true;
    else if (c === "(" && (p[i + 1] !== "?" || /^\?P?<[A-Za-z_]|^\?'/.test(p.slice(i + 1, i + 5)))) groups++;
  }
  return refs.some((n) => n > groups && n < 10);
}

/** PCRE's x option: unescaped whitespace and `#` comments outside classes are ignored. */
function stripExtended(p: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === "\\") {
      out += c + (p[i + 1] ?? "");
      i++;
    } else if (inClass) {
      if (c === "]") inClass = false;
      out += c;
    } else if (c === "[") {
      inClass = true;
      out += c;
    } else if (c === "#") {
      while (i < p.length && p[i] !== "\n") i++;
    } else if (!/\s/.test(c)) out += c;
  }
  return out;
}

function optsArg(v: Value | undefined): string | null {
  if (v === undefined) return "";
  return typeof v === "string" ? v : null;
}

function regexpFn(args: Value[], compile: Compile): Value {
  if (args.length < 2 || args.length > 3) return ERROR;
  const [pat, s, o] = args as [Value, Value, Value | undefined];
  if (isErr(pat) || isErr(s) || (o !== undefined && isErr(o))) return ERROR;
  if (isUndef(pat) || isUndef(s) || (o !== undefined && isUndef(o))) return UNDEFINED;
  const opts = optsArg(o);
  if (typeof pat !== "string" || typeof s !== "string" || opts === null) return ERROR;
  const re = compile(pat, opts.replace(/g/g, ""));
  return re === null ? ERROR : re.test(s);
}

function regexpMember(args: Value[], compile: Compile): Value {
  if (args.length < 2 || args.length > 3) return ERROR;
  const [pat, l, o] = args as [Value, Value, Value | undefined];
  if (isErr(pat) || isErr(l)) return ERROR;
  if (isUndef(pat) || isUndef(l)) return UNDEFINED;
  const opts = optsArg(o);
  if (typeof pat !== "string" || !(l instanceof ListValue) || opts === null) return ERROR;
  const re = compile(pat, opts.replace(/g/g, ""));
  if (re === null) return ERROR;
  let sawUndefined = false;
  for (const it of l.items) {
    if (isUndef(it)) sawUndefined = true;
    else if (typeof it !== "string") return ERROR;
    else if (re.test(it)) return true;
  }
  return sawUndefined ? UNDEFINED : false;
}

/** regexps / replace / replaceAll: `\0`..`\9` in the replacement name groups. */
function substitute(args: Value[], compile: Compile, forced: string): Value {
  if (args.length < 3 || args.length > 4) return ERROR;
  const [pat, s, repl, o] = args as [Value, Value, Value, Value | undefined];
  for (const a of args) if (isErr(a)) return ERROR;
  if (isUndef(pat) || isUndef(s) || isUndef(repl)) return UNDEFINED;
  const opts = optsArg(o);
  if (typeof pat !== "string" || typeof s !== "string" || typeof repl !== "string" || opts === null) return ERROR;
  const all = opts + forced;
  const full = all.includes("f");
  const global = all.includes("g");
  const re = compile(pat, all.replace(/[fg]/g, "") + (global ? "g" : ""));
  if (re === null) return ERROR;
  const first = re.exec(s);
  if (first === null) return full ? s : "";
  // Without `f` the result is only the substitution text (of every match with `g`).
  let out = "";
  let last = 0;
  let m: RegExpExecArray | null = first;
  while (m !== null) {
    const text = expand(repl, m);
    if (typeof text !== "string") return text;
    out += (full ? s.slice(last, m.index) : "") + text;
    if (out.length > MAX_STRING_LENGTH) return ERROR;
    last = m.index + m[0].length;
    if (!global) break;
    if (m[0].length === 0) re.lastIndex++;
    m = re.exec(s);
  }
  return full ? out + s.slice(last) : out;
}

function expand(repl: string, m: RegExpExecArray): Value {
  let out = "";
  for (let i = 0; i < repl.length; i++) {
    const c = repl[i]!;
    const d = repl.charCodeAt(i + 1) - 48;
    if (c === "\\" && d >= 0 && d <= 9) {
      if (d >= m.length) return ERROR;
      out += m[d] ?? "";
      i++;
    } else out += c;
  }
  return out;
}

/** The compat stringList_regexpMember: every argument must be a string (undefined is error). */
function stringListRegexpMember(args: Value[], compile: Compile): Value {
  if (args.length < 2 || args.length > 4) return ERROR;
  const [pat, l, d, o] = args as [Value, Value, Value | undefined, Value | undefined];
  const delims = d === undefined ? ", " : d;
  const opts = optsArg(o);
  if (typeof pat !== "string" || typeof l !== "string" || typeof delims !== "string" || opts === null) return ERROR;
  const items = splitStringList(l, delims);
  if (items.length === 0) return UNDEFINED;
  // This compat function also accepts upper-case option letters.
  const re = compile(pat, opts.toLowerCase().replace(/[fg]/g, ""));
  if (re === null) return ERROR;
  return items.some((it) => re.test(it));
}

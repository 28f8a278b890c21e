/**
 * String builtins: strcat, join, toUpper/toLower, substr, strcmp/stricmp, size, interval and
 * the version comparisons (natural order: digit runs by value, more leading zeros first).
 */
import { ClassAd } from "../classad.js";
import { ERROR, ListValue, MAX_STRING_LENGTH, UNDEFINED, type Value } from "../values.js";
import { strcasecmp } from "../operators.js";
import { toInt } from "./core.js";
import { arity, isErr, isUndef, strictArgs, stringOf, type Registry } from "./util.js";

/** Registers the string builtins into `r`. */
export function registerStrings(r: Registry): void {
  r.addFunction("strcat", strcat);
  r.addFunction("join", join);
  r.addFunction("toUpper", arity(1, 1, ([v]) => mapCase(v!, (s) => s.toUpperCase())));
  r.addFunction("toLower", arity(1, 1, ([v]) => mapCase(v!, (s) => s.toLowerCase())));
  r.addFunction("substr", arity(2, 3, substr));
  r.addFunction("strcmp", arity(2, 2, (a) => strcmp(a, false)));
  r.addFunction("stricmp", arity(2, 2, (a) => strcmp(a, true)));
  r.addFunction("size", arity(1, 1, ([v]) => size(v!)));
  r.addFunction("length", arity(1, 1, ([v]) => size(v!)));
  r.addFunction("interval", arity(1, 1, ([v]) => interval(v!)));
  r.addFunction("versioncmp", arity(2, 2, (a) => versionOp(a, (c) => BigInt(c))));
  r.addFunction("versionLT", arity(2, 2, (a) => versionOp(a, (c) => c < 0)));
  r.addFunction("versionLE", arity(2, 2, (a) => versionOp(a, (c) => c <= 0)));
  r.addFunction("versionGT", arity(2, 2, (a) => versionOp(a, (c) => c > 0)));
  r.addFunction("versionGE", arity(2, 2, (a) => versionOp(a, (c) => c >= 0)));
  r.addFunction("versionEQ", arity(2, 2, (a) => versionOp(a, (c) => c === 0)));
  r.addFunction("version_in_range", arity(3, 3, versionInRange));
}

/** Concatenates string() of each argument; the first undefined or error argument decides. */
function strcat(args: Value[]): Value {
  for (const a of args) if (typeof a === "object" && (a.kind === "undefined" || a.kind === "error")) return a.kind === "error" ? ERROR : UNDEFINED;
  let s = "";
  for (const a of args) {
    const part = typeof a === "string" ? a : stringOf(a);
    if (s.length + part.length > MAX_STRING_LENGTH) return ERROR;
    s += part;
  }
  return s;
}

/** join(sep, items...) / join(sep, list) / join(list); see htcondor.md §8.6. */
function join(args: Value[]): Value {
  if (args.length === 0) return "";
  let sep: Value = args[0]!;
  let items: Value[] = args.slice(1);
  if (args.length === 1 && sep instanceof ListValue) {
    items = [...sep.items];
    sep = "";
  } else if (args.length === 2 && args[1] instanceof ListValue) items = [...args[1].items];
  if (isErr(sep)) return ERROR;
  let sawUndefined = isUndef(sep);
  const sepText = isUndef(sep) ? "" : stringOf(sep);
  const parts: string[] = [];
  for (const it of items) {
    if (isErr(it)) return ERROR;
    if (isUndef(it)) sawUndefined = true;
    else parts.push(stringOf(it));
  }
  if (parts.length === 0 && sawUndefined) return UNDEFINED;
  let total = sepText.length * Math.max(0, parts.length - 1);
  for (const p of parts) total += p.length;
  return total > MAX_STRING_LENGTH ? ERROR : parts.join(sepText);
}

function mapCase(v: Value, f: (s: string) => string): Value {
  if (isErr(v) || isUndef(v)) return v;
  // ASCII-only mapping, as C's toupper in the C locale.
  return stringOf(v).replace(/[a-zA-Z]+/g, (m) => f(m));
}

/** substr(s, offset[, length]); negative offset from the end, negative length trims. */
function substr(args: Value[]): Value {
  // HTCondor: undefined anywhere first, then the types (so an error argument gives error).
  if (args.some(isUndef)) return UNDEFINED;
  const [s, off, len0] = args;
  if (typeof s !== "string" || typeof off !== "bigint" || (len0 !== undefined && typeof len0 !== "bigint")) return ERROR;
  // Offsets and lengths are C ints there: a larger integer wraps to 32 bits.
  const len = len0 === undefined ? undefined : BigInt.asIntN(32, len0);
  const n = s.length;
  let start = Number(BigInt.asIntN(32, off));
  if (start < 0) start = Math.max(0, n + start);
  if (start > n) return "";
  let end = n;
  if (len !== undefined) end = len < 0n ? n + Number(len) : start + Number(len);
  return end <= start ? "" : s.slice(start, Math.min(end, n));
}

function strcmp(args: Value[], caseless: boolean): Value {
  if (args.some(isUndef)) return UNDEFINED;
  if (args.some(isErr)) return ERROR;
  const a = stringOf(args[0]!);
  const b = stringOf(args[1]!);
  if (caseless) return BigInt(strcasecmp(a, b));
  return a < b ? -1n : a > b ? 1n : 0n;
}

function size(v: Value): Value {
  if (typeof v === "string") return BigInt(Buffer.byteLength(v, "utf8"));
  if (v instanceof ListValue) return BigInt(v.items.length);
  if (v instanceof ClassAd) return BigInt(v.size);
  return isUndef(v) ? UNDEFINED : ERROR;
}

/** `[d+]h:mm:ss` with leading zero fields dropped. */
function interval(v: Value): Value {
  const n = toInt(v);
  if (typeof n !== "bigint") return ERROR;
  // HTCondor keeps the seconds in a C int: a larger integer wraps to 32 bits.
  let secs = Number(BigInt.asIntN(32, n));
  const neg = secs < 0;
  secs = Math.abs(secs);
  const d = Math.floor(secs / 86400);
  const h = Math.floor((secs % 86400) / 3600);
  const m = Math.floor((secs % 3600) / 60);
  const s = secs % 60;
  const p2 = (n: number) => String(n).padStart(2, "0");
  let text: string;
  if (d > 0) text = `${d}+${p2(h)}:${p2(m)}:${p2(s)}`;
  else if (h > 0) text = `${h}:${p2(m)}:${p2(s)}`;
  else if (m > 0) text = `${m}:${p2(s)}`;
  else text = String(s);
  return neg ? "-" + text : text;
}

/** Version arguments: undefined ⇒ undefined; anything else through string(). */
function versionOp(args: Value[], test: (c: number) => Value): Value {
  const [a, b] = args as [Value, Value];
  if (isUndef(a) || isUndef(b)) return UNDEFINED;
  if (isErr(a) || isErr(b)) return ERROR;
  return test(versionCompare(stringOf(a), stringOf(b)));
}

/** version_in_range(v, min, max): an undefined bound ⇒ undefined; an undefined v ⇒ error. */
function versionInRange(args: Value[]): Value {
  const [v, lo, hi] = args as [Value, Value, Value];
  if (isUndef(lo) || isUndef(hi)) return UNDEFINED;
  if (isUndef(v) || isErr(v) || isErr(lo) || isErr(hi)) return ERROR;
  const t = stringOf(v);
  return versionCompare(stringOf(lo), t) <= 0 && versionCompare(t, stringOf(hi)) <= 0;
}

/**
 * HTCondor's natural version order (its `natural_cmp`), returning what it returns: on the
 * UTF-8 bytes, after the common prefix, a digit run compares by fewer leading zeros first,
 * then by length, and otherwise the result is the difference of the first differing bytes
 * (as signed chars), so `versioncmp(1, "abc")` is -48.
 */
export function versionCompare(a: string, b: string): number {
  const s = Buffer.from(a, "utf8");
  const t = Buffer.from(b, "utf8");
  const at = (buf: Buffer, i: number): number => (i < buf.length ? (buf[i]! << 24) >> 24 : 0);
  const digit = (c: number): boolean => c >= 48 && c <= 57;
  let i = 0;
  while (at(s, i) !== 0 && at(s, i) === at(t, i)) i++;
  const c1 = at(s, i);
  const c2 = at(t, i);
  if (c1 === c2) return 0;
  let nb = i;
  while (nb > 0 && digit(s[nb - 1]!)) nb--;
  if (nb === i && (!digit(c1) || !digit(c2))) return c1 - c2;
  let z1 = nb;
  while (at(s, z1) === 48) z1++;
  let z2 = nb;
  while (at(t, z2) === 48) z2++;
  if (z1 > nb && !digit(at(s, z1))) z1--;
  if (z2 > nb && !digit(at(t, z2))) z2--;
  if (z1 !== z2) return z2 - z1;
  if (z1 > nb) return c1 - c2;
  let e1 = z1;
  while (digit(at(s, e1))) e1++;
  let e2 = z2;
  while (digit(at(t, e2))) e2++;
  return e1 !== e2 ? e1 - e2 : c1 - c2;
}

/**
 * Time builtins: time, currentTime, timeZoneOffset, dayTime, get* accessors, splitTime,
 * formatTime (strftime subset, default `%c`), absTime, relTime. Local time is the process's
 * time zone; the current instant comes from the evaluator's clock.
 */
import { ClassAd } from "../classad.js";
import type { Frame } from "../compile.js";
import { AbsTime, ERROR, RelTime, UNDEFINED, intValue, type Value } from "../values.js";
import { arity, isErr, isUndef, type Registry } from "./util.js";

/** Seconds east of UTC of the local zone at epoch second `secs`. */
export function localOffset(secs: number): number {
  return -new Date(secs * 1000).getTimezoneOffset() * 60;
}

/** Registers the time builtins into `r`. */
export function registerTime(r: Registry): void {
  const now = (f: Frame) => f.run.now();
  r.addFunction("time", arity(0, 0, (_a, f) => intValue(Math.floor(now(f)))));
  r.addFunction("currentTime", arity(0, 0, (_a, f) => nowAbs(now(f))));
  r.addFunction("timeZoneOffset", arity(0, 0, (_a, f) => new RelTime(localOffset(now(f)))));
  r.addFunction("dayTime", arity(0, 0, (_a, f) => dayTime(now(f))));
  // The get* accessors: calendar fields of an absolute time (in local time, as HTCondor's
  // getField does), clock fields of either kind; anything else (even undefined) is error.
  const fields: [string, ((d: Date) => number) | null, ((s: number) => number) | null][] = [
    ["getYear", (d) => d.getUTCFullYear(), null],
    ["getMonth", (d) => d.getUTCMonth() + 1, null],
    ["getDayOfMonth", (d) => d.getUTCDate(), null],
    ["getDayOfWeek", (d) => d.getUTCDay(), null],
    ["getDayOfYear", dayOfYear, null],
    ["getDays", null, (s) => Math.trunc(s / 86400)],
    ["getHours", (d) => d.getUTCHours(), (s) => Math.trunc((s % 86400) / 3600)],
    ["getMinutes", (d) => d.getUTCMinutes(), (s) => Math.trunc((s % 3600) / 60)],
    ["getSeconds", (d) => d.getUTCSeconds(), (s) => Math.trunc(s % 60)],
  ];
  for (const [name, abs, rel] of fields) r.addFunction(name, arity(1, 1, ([t]) => timeField(t!, abs, rel)));
  r.addFunction("splitTime", arity(1, 1, ([t]) => splitTime(t!)));
  r.addFunction("formatTime", arity(0, 2, (a, f) => formatTimeFn(a, now(f))));
  r.addFunction("absTime", arity(0, 2, (a, f) => absTime(a, now(f))));
  r.addFunction("relTime", arity(0, 1, (a) => relTime(a[0])));
}

function nowAbs(secs: number): AbsTime {
  const s = Math.floor(secs);
  return new AbsTime(s, localOffset(s));
}

function dayTime(secs: number): RelTime {
  const local = Math.floor(secs) + localOffset(secs);
  return new RelTime(((local % 86400) + 86400) % 86400);
}

/** A Date whose UTC fields are the wall-clock fields of `t` in its own zone. */
function wallClock(t: AbsTime): Date {
  return new Date((t.secs + t.offset) * 1000);
}

function asAbs(t: Value): AbsTime | null {
  if (t instanceof AbsTime) return t;
  if (typeof t === "bigint" || typeof t === "number") {
    const s = Math.trunc(Number(t));
    return new AbsTime(s, localOffset(s));
  }
  return null;
}

function dayOfYear(d: Date): number {
  return Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86400000);
}

function timeField(t: Value, abs: ((d: Date) => number) | null, rel: ((s: number) => number) | null): Value {
  if (t instanceof AbsTime && abs !== null) return BigInt(abs(localWallClock(t.secs)));
  if (t instanceof RelTime && rel !== null) return BigInt(rel(Math.trunc(t.secs)));
  return ERROR;
}

/** A Date whose UTC fields are the process-local wall-clock fields of epoch second `secs`. */
function localWallClock(secs: number): Date {
  return new Date((secs + localOffset(secs)) * 1000);
}

/** splitTime(t): an ad of the fields of an absolute or relative time (an ad is copied). */
function splitTime(t: Value): Value {
  if (t instanceof ClassAd) return t.clone();
  if (t instanceof RelTime) return splitRelTime(t.secs);
  const a = asAbs(t);
  if (a === null) return ERROR;
  const d = wallClock(a);
  return new ClassAd([
    ["Type", "AbsoluteTime"],
    ["Year", BigInt(d.getUTCFullYear())],
    ["Month", BigInt(d.getUTCMonth() + 1)],
    ["Day", BigInt(d.getUTCDate())],
    ["Hours", BigInt(d.getUTCHours())],
    ["Minutes", BigInt(d.getUTCMinutes())],
    ["Seconds", BigInt(d.getUTCSeconds())],
    ["Offset", BigInt(a.offset)],
  ]);
}

/** Days/Hours/Minutes as integers, Seconds as a real; a negative time negates its first non-zero field. */
function splitRelTime(secs: number): ClassAd {
  const abs = Math.abs(secs);
  const whole = Math.floor(abs);
  let days = Math.floor(whole / 86400);
  let hours = Math.floor((whole % 86400) / 3600);
  let minutes = Math.floor((whole % 3600) / 60);
  let seconds = (whole % 60) + (abs - whole);
  if (secs < 0) {
    if (days > 0) days = -days;
    else if (hours > 0) hours = -hours;
    else if (minutes > 0) minutes = -minutes;
    else seconds = -seconds;
  }
  return new ClassAd([
    ["Type", "RelativeTime"],
    ["Days", BigInt(days)],
    ["Hours", BigInt(hours)],
    ["Minutes", BigInt(minutes)],
    ["Seconds", seconds],
  ]);
}

function formatTimeFn(args: Value[], now: number): Value {
  for (const a of args) if (isErr(a)) return ERROR;
  const t = args[0] === undefined ? nowAbs(now) : asAbs(args[0]);
  const fmt = args[1] === undefined ? "%c" : args[1];
  if (t === null || typeof fmt !== "string") return ERROR;
  return strftime(fmt, t);
}

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/** The C-locale strftime directives HTCondor users rely on. */
export function strftime(fmt: string, t: AbsTime): string {
  const d = wallClock(t);
  const p = (n: number, w = 2, c = "0") => String(n).padStart(w, c);
  const h12 = d.getUTCHours() % 12 === 0 ? 12 : d.getUTCHours() % 12;
  const off = Math.abs(t.offset);
  const map: Record<string, () => string> = {
    a: () => DAYS[d.getUTCDay()]!.slice(0, 3),
    A: () => DAYS[d.getUTCDay()]!,
    b: () => MONTHS[d.getUTCMonth()]!.slice(0, 3),
    h: () => MONTHS[d.getUTCMonth()]!.slice(0, 3),
    B: () => MONTHS[d.getUTCMonth()]!,
    c: () => strftime("%a %b %e %H:%M:%S %Y", t),
    d: () => p(d.getUTCDate()),
    e: () => p(d.getUTCDate(), 2, " "),
    D: () => strftime("%m/%d/%y", t),
    F: () => strftime("%Y-%m-%d", t),
    H: () => p(d.getUTCHours()),
    I: () => p(h12),
    j: () => p(dayOfYear(d) + 1, 3),
    m: () => p(d.getUTCMonth() + 1),
    M: () => p(d.getUTCMinutes()),
    n: () => "\n",
    p: () => (d.getUTCHours() < 12 ? "AM" : "PM"),
    R: () => strftime("%H:%M", t),
    s: () => String(t.secs),
    S: () => p(d.getUTCSeconds()),
    t: () => "\t",
    T: () => strftime("%H:%M:%S", t),
    u: () => String(d.getUTCDay() === 0 ? 7 : d.getUTCDay()),
    w: () => String(d.getUTCDay()),
    x: () => strftime("%m/%d/%y", t),
    X: () => strftime("%H:%M:%S", t),
    y: () => p(d.getUTCFullYear() % 100),
    Y: () => String(d.getUTCFullYear()),
    z: () => `${t.offset < 0 ? "-" : "+"}${p(Math.floor(off / 3600))}${p(Math.floor((off % 3600) / 60))}`,
    Z: () => (t.offset === 0 ? "UTC" : ""),
    "%": () => "%",
  };
  return fmt.replace(/%([a-zA-Z%])/g, (all, c: string) => (map[c] ? map[c]() : all));
}

const ABS_RE = /^\s*(\d{4})-?(\d{2})-?(\d{2})(?:[T ](\d{2}):?(\d{2})(?::?(\d{2}))?)?\s*(Z|[+-]\d{2}:?\d{2})?\s*$/i;

/** absTime(string | number | time [, offset]) or absTime() for now. */
function absTime(args: Value[], now: number): Value {
  if (args.length === 0) return nowAbs(now);
  const [v, o] = args as [Value, Value | undefined];
  let offset: number | undefined;
  if (o !== undefined) {
    if (typeof o === "bigint" || typeof o === "number") offset = Math.trunc(Number(o));
    else if (o instanceof RelTime) offset = Math.trunc(o.secs);
    else return ERROR;
  }
  if (isUndef(v)) return UNDEFINED;
  if (typeof v === "bigint" || typeof v === "number" || v instanceof RelTime) {
    const s = Math.trunc(v instanceof RelTime ? v.secs : Number(v));
    return new AbsTime(s, offset ?? localOffset(s));
  }
  if (v instanceof AbsTime) return v;
  return typeof v === "string" ? parseAbsTime(v, offset) : ERROR;
}

function parseAbsTime(text: string, forcedOffset: number | undefined): Value {
  const m = ABS_RE.exec(text);
  if (!m) return ERROR;
  const wall = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0)) / 1000;
  let offset: number;
  if (m[7] === undefined) offset = localOffset(wall - localOffset(wall));
  else if (m[7].toUpperCase() === "Z") offset = 0;
  else {
    const z = m[7].replace(":", "");
    offset = (z[0] === "-" ? -1 : 1) * (Number(z.slice(1, 3)) * 3600 + Number(z.slice(3, 5)) * 60);
  }
  return new AbsTime(wall - offset, forcedOffset ?? offset);
}

const REL_RE = /^\s*(-)?(?:(\d+)\+)?(?:(\d+):)?(?:(\d+):)?(\d+(?:\.\d*)?)\s*$/;

/** relTime(string | number): `[-][d+][hh:][mm:]ss[.fff]` or seconds. */
function relTime(v: Value | undefined): Value {
  if (v === undefined) return ERROR;
  if (isErr(v) || isUndef(v)) return v;
  if (v instanceof RelTime) return v;
  if (v instanceof AbsTime) return new RelTime(v.secs);
  if (typeof v === "bigint" || typeof v === "number") return new RelTime(Number(v));
  if (typeof v !== "string") return ERROR;
  const m = REL_RE.exec(v);
  if (!m) return ERROR;
  const parts = [m[3], m[4]].filter((x) => x !== undefined).map(Number);
  const [h, mi] = parts.length === 2 ? parts : parts.length === 1 ? [0, parts[0]!] : [0, 0];
  const secs = Number(m[2] ?? 0) * 86400 + h! * 3600 + mi! * 60 + Number(m[5]);
  return new RelTime(m[1] ? -secs : secs);
}

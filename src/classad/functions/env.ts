/**
 * HTCondor's environment/argument helpers (envV1ToV2, mergeEnvironment, listToArgs,
 * argsToList) and the user-map lookups (userHome, userMap), which have no map files here
 * and so return their default argument, or undefined.
 */
import { ERROR, ListValue, UNDEFINED, type Value } from "../values.js";
import { arity, isErr, isUndef, strictArgs, type Registry } from "./util.js";

/** Registers the environment and argument helpers into `r`. */
export function registerEnv(r: Registry): void {
  r.addFunction("envV1ToV2", arity(1, 1, ([v]) => envV1ToV2(v!)));
  r.addFunction("mergeEnvironment", mergeEnvironment);
  r.addFunction("listToArgs", arity(1, 1, ([v]) => listToArgs(v!)));
  r.addFunction("argsToList", arity(1, 1, ([v]) => argsToList(v!)));
  r.addFunction("userHome", arity(1, 2, (a) => userHome(a[0]!, a[1])));
  r.addFunction("userMap", arity(2, 4, (a) => (isErr(a[0]!) || isErr(a[1]!) ? ERROR : (a[3] ?? UNDEFINED))));
}

/**
 * userHome(user[, default]): home lookups are disabled (as HTCondor without
 * CLASSAD_ENABLE_USER_HOME), so a non-empty string default wins, an undefined user is
 * undefined, a non-string user is error, and otherwise the result is undefined.
 */
function userHome(user: Value, dflt: Value | undefined): Value {
  if (typeof dflt === "string" && dflt !== "") return dflt;
  if (isUndef(user)) return UNDEFINED;
  return typeof user === "string" ? UNDEFINED : ERROR;
}

/** V2 quoting of one word: single quotes when it has spaces or quotes ('' escapes '). */
export function quoteV2(w: string): string {
  return /[\s'"]/.test(w) || w === "" ? `'${w.replace(/'/g, "''")}'` : w;
}

/** Splits a V2 string (whitespace separated, '...' quoting with '' for a quote). */
export function splitV2(s: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    while (i < s.length && /\s/.test(s[i]!)) i++;
    if (i >= s.length) break;
    let w = "";
    while (i < s.length && !/\s/.test(s[i]!)) {
      if (s[i] === "'") {
        i++;
        for (;;) {
          if (i >= s.length) break;
          if (s[i] === "'" && s[i + 1] === "'") {
            w += "'";
            i += 2;
          } else if (s[i] === "'") {
            i++;
            break;
          } else w += s[i++];
        }
      } else w += s[i++];
    }
    out.push(w);
  }
  return out;
}

function envV1ToV2(v: Value): Value {
  if (isErr(v) || isUndef(v)) return v;
  if (typeof v !== "string") return ERROR;
  return v
    .split(";")
    .filter((x) => x !== "")
    .map(quoteV2)
    .join(" ");
}

function mergeEnvironment(args: Value[]): Value {
  if (strictArgs(args) === ERROR) return ERROR;
  const env = new Map<string, string>();
  for (const a of args) {
    if (isUndef(a)) continue;
    if (typeof a !== "string") return ERROR;
    for (const kv of splitV2(a)) {
      const eq = kv.indexOf("=");
      if (eq > 0) env.set(kv.slice(0, eq), kv.slice(eq + 1));
    }
  }
  return [...env].map(([k, val]) => quoteV2(`${k}=${val}`)).join(" ");
}

function listToArgs(v: Value): Value {
  if (isErr(v) || isUndef(v)) return v;
  if (!(v instanceof ListValue) || !v.items.every((x) => typeof x === "string")) return ERROR;
  return (v.items as string[]).map(quoteV2).join(" ");
}

function argsToList(v: Value): Value {
  if (isErr(v) || isUndef(v)) return v;
  if (typeof v !== "string") return ERROR;
  return new ListValue(splitV2(v));
}

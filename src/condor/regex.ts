/**
 * The `/regex/flags` attribute-name patterns of COPY, RENAME and DELETE.
 *
 * HTCondor compiles them with PCRE and always matches case-insensitively; the flag letters
 * `g m i U` are accepted (U = ungreedy) and any other letter makes the regex invalid. We
 * compile to a JavaScript RegExp; `U` is emulated by flipping the greediness of every
 * quantifier. `\0`..`\9` in the replacement pattern name the match and its groups.
 */

import { foldCase, unboundedBacktracking } from "../classad/regex-safety.js";

/** A compiled attribute-name pattern. */
export interface AttrRegex {
  /** The pattern as written between the slashes. */
  source: string;
  /** The flag letters as written after the closing slash. */
  flags: string;
  regex: RegExp;
}

/** Parses `/re/flags`; throws an Error saying what is wrong. */
export function parseAttrRegex(token: string): AttrRegex {
  const close = token.lastIndexOf("/");
  if (!token.startsWith("/") || close <= 0) throw new Error("regex has no closing /");
  const source = token.slice(1, close);
  const flags = token.slice(close + 1);
  const bad = flags.replace(/[gmiU]/g, "");
  if (bad !== "") throw new Error(`invalid regex: unknown flag "${bad}" (allowed: g m i U)`);
  if (source === "") throw new Error("invalid regex: empty pattern");
  const pattern = flags.includes("U") ? flipGreediness(source) : source;
  const unbounded = unboundedBacktracking(pattern);
  if (unbounded !== undefined) throw new Error(`regex refused: ${unbounded}`);
  // Always caseless: folded into the pattern where it can be, so V8's linear-time fallback
  // applies (see regex-safety.ts); a pattern with back references keeps the i flag.
  const backrefs = /\\[1-9]|\\k</.test(pattern);
  const regexFlags = (backrefs ? "i" : "") + (flags.includes("m") ? "m" : "");
  try {
    return { source, flags, regex: new RegExp(backrefs ? pattern : foldCase(pattern), regexFlags) };
  } catch (e) {
    throw new Error(`regex does not compile: ${(e as Error).message}`);
  }
}

/** Makes greedy quantifiers lazy and lazy ones greedy (PCRE's U flag). */
export function flipGreediness(source: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i]!;
    out += ch;
    if (ch === "\\") {
      out += source[++i] ?? "";
      continue;
    }
    if (inClass) {
      if (ch === "]") inClass = false;
      continue;
    }
    if (ch === "[") inClass = true;
    let isQuantifier = ch === "*" || ch === "+" || (ch === "?" && source[i - 1] !== "(");
    if (ch === "{") {
      const m = /^\{\d+(,\d*)?\}/.exec(source.slice(i));
      if (m) {
        out += m[0].slice(1);
        i += m[0].length - 1;
        isQuantifier = true;
      }
    }
    if (!isQuantifier) continue;
    if (source[i + 1] === "?") i++;
    else out += "?";
  }
  return out;
}

/** Expands `\0`..`\9` in `pattern` from a match of an attribute name. */
export function substituteGroups(pattern: string, match: RegExpExecArray): string {
  return pattern.replace(/\\(\d)/g, (_all, d: string) => match[Number(d)] ?? "");
}

/**
 * Bounding the work of user-supplied regular expressions (ClassAd regexp() and friends, the
 * transform language's `/regex/`): patterns come from users' ads, hook output and route
 * files, and JavaScript has no PCRE-style match limit.
 *
 * bin/jobtap turns on V8's fallback to its linear-time engine after excessive backtracking.
 * That engine takes neither the `i` flag nor back references nor lookarounds, so:
 *  - a caseless pattern is rewritten with explicit case classes (`a` → `[aA]`) and compiled
 *    without `i`, which the linear engine takes;
 *  - a pattern with back references or lookarounds *and* a repeated group holding a
 *    quantifier or an alternation (the shape of catastrophic backtracking) is refused with
 *    a message saying so. Such a pattern would otherwise be matched by backtracking alone.
 */

/** Why `source` cannot be matched in bounded time, or undefined if it can. */
export function unboundedBacktracking(source: string): string | undefined {
  const needsBacktracker = /\\[1-9]|\\k<|\(\?<?[=!]/.test(source);
  if (!needsBacktracker) return undefined;
  return nestedRepetition(source)
    ? "pattern could backtrack without bound (a back reference or lookaround together with a repeated group holding a quantifier or |)"
    : undefined;
}

/** True if a group followed by `*`, `+` or `{n,}` contains a quantifier or an alternation. */
function nestedRepetition(p: string): boolean {
  const open: Array<{ inner: boolean }> = [];
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === "\\") {
      i++;
      continue;
    }
    if (inClass) {
      inClass = c !== "]";
      continue;
    }
    if (c === "[") inClass = true;
    else if (c === "(") open.push({ inner: false });
    else if (c === ")") {
      const g = open.pop();
      const next = p[i + 1];
      const repeated = next === "*" || next === "+" || (next === "{" && /^\{\d*,\d*\}/.test(p.slice(i + 1)));
      if (g && g.inner && repeated) return true;
      // The group itself is a quantified or alternating thing inside its parent.
      if (open.length > 0 && (repeated || g?.inner)) open[open.length - 1]!.inner = true;
    } else if (open.length > 0 && (c === "*" || c === "+" || c === "?" || c === "{" || c === "|")) {
      open[open.length - 1]!.inner = true;
    }
  }
  return false;
}

/**
 * The pattern matching what `source` matches with the `i` flag, without it: each cased
 * letter becomes a class of both cases, and classes gain the other case of their letters
 * and letter ranges. Escapes, group names and `\p{...}` are copied as written.
 */
export function foldCase(source: string): string {
  let out = "";
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\") {
      const named = /^\\[pPuk][{<][^}>]*[}>]/.exec(source.slice(i));
      const take = named ? named[0].length : 2;
      out += source.slice(i, i + take);
      i += take - 1;
    } else if (c === "(" && /^\(\?P?<[A-Za-z_]/.test(source.slice(i))) {
      const end = source.indexOf(">", i);
      out += source.slice(i, end + 1);
      i = end;
    } else if (c === "[") {
      const end = classEnd(source, i);
      out += foldClass(source.slice(i, end + 1));
      i = end;
    } else out += cased(c) ? `[${c}${swap(c)}]` : c;
  }
  return out;
}

function cased(c: string): boolean {
  return c.toLowerCase() !== c.toUpperCase() && swap(c).length === 1;
}

function swap(c: string): string {
  return c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase();
}

/** Index of the `]` closing the class opened at `start` (a leading `]` or `^]` is literal). */
function classEnd(p: string, start: number): number {
  let i = start + 1;
  if (p[i] === "^") i++;
  if (p[i] === "]") i++;
  for (; i < p.length; i++) {
    if (p[i] === "\\") i++;
    else if (p[i] === "]") return i;
  }
  return p.length - 1;
}

function foldClass(cls: string): string {
  let extra = "";
  const body = cls.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === "\\") {
      i++;
      continue;
    }
    const range = /^([A-Za-z])-([A-Za-z])/.exec(body.slice(i));
    if (range && (range[1]! <= "Z") === (range[2]! <= "Z")) {
      extra += `${swap(range[1]!)}-${swap(range[2]!)}`;
      i += 2;
    } else if (cased(c)) extra += swap(c);
  }
  return extra === "" ? cls : `${cls.slice(0, -1)}${extra}]`;
}

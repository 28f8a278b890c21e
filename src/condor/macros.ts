/**
 * `$(NAME)` macro expansion, shared by the config reader and the transform engine.
 *
 * The expander knows the syntax; a `MacroScope` knows where names come from (the config
 * table, a transform's local macros, the ad being transformed) and how to evaluate a ClassAd
 * expression for `$INT`/`$REAL`/`$STRING`/`$EVAL`. Expansion is recursive at use time and a
 * macro that reaches itself again is an error naming the chain.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import { expandFunctionMacro } from "./macro-functions.js";

/** A macro's raw (not yet expanded) text and where it was defined, for error messages. */
export interface RawMacro {
  value: string;
  where?: string;
}

/** The result of evaluating a ClassAd expression for a function macro. */
export type EvaluatedMacro =
  | { kind: "string"; value: string }
  | { kind: "number"; value: number; integer: boolean; /** An integer exactly. */ exact?: bigint }
  | { kind: "bool"; value: boolean }
  | { kind: "undefined" }
  | { kind: "error" }
  | { kind: "other"; text: string };

/** Where macro names are resolved and how function macros evaluate. */
export interface MacroScope {
  /** The raw text of `name` (already case-folded by the scope as it needs), or undefined. */
  lookup(name: string): RawMacro | undefined;
  /** Process environment for `$ENV(NAME)`. */
  env: Record<string, string | undefined>;
  /** Evaluates ClassAd expression text; without it `$INT` & co. are errors. */
  evaluate?(expression: string): EvaluatedMacro;
  /** Source of randomness for `$RANDOM_CHOICE`/`$RANDOM_INTEGER` (default Math.random). */
  random?: () => number;
  /** Error code and location prefix used when expansion fails. */
  code: typeof ErrorCode.CONDOR_CONFIG | typeof ErrorCode.CONDOR_TRANSFORM;
  where: string;
}

/** How deep `$(A)` → `$(B)` → ... may go before we call it runaway recursion. */
export const MACRO_DEPTH_LIMIT = 64;

/**
 * Longest text one expansion may produce. Macros that double at each level (`A1 = $(A0)$(A0)`,
 * `A2 = $(A1)$(A1)`, ...) are not recursive, but would otherwise run out of memory or time.
 */
export const MACRO_EXPANSION_LIMIT = 1 << 20;

/**
 * Expands every `$(...)` in `text`; `$$(...)` is left alone (it belongs to match time).
 * `expanding` names macros already being expanded (a reference back to one is recursion).
 */
export function expandMacros(text: string, scope: MacroScope, expanding: string[] = []): string {
  return new Expander(scope).expand(text, expanding.map((n) => n.toLowerCase()));
}

/** Finds the `)` matching the `(` at `open`, or -1. Quotes do not protect parentheses. */
export function matchParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")" && --depth === 0) return i;
  }
  return -1;
}

const MACRO_START = /\$([A-Za-z_]*)\(/y;

/** How deep `$(` may sit inside `$(`, macro levels included (a chain of macros alone stops
 *  at MACRO_DEPTH_LIMIT first, with its own message). */
export const MACRO_NESTING_LIMIT = 2 * MACRO_DEPTH_LIMIT;

/** One expansion run; the stack of names being expanded detects recursion. */
export class Expander {
  /** How deep `$(` sits inside `$(` right now (`$($($(X)))`), bounded like macro depth. */
  private nesting = 0;

  constructor(readonly scope: MacroScope) {}

  /** Expands `text` with `stack` holding the (lower-cased) names currently being expanded. */
  expand(text: string, stack: readonly string[]): string {
    if (this.nesting >= MACRO_NESTING_LIMIT) {
      this.fail(`$( nested deeper than ${MACRO_NESTING_LIMIT} levels inside ${stack.length > 0 ? `macro ${stack[stack.length - 1]}` : "this value"}`);
    }
    this.nesting++;
    try {
      return this.expandText(text, stack);
    } finally {
      this.nesting--;
    }
  }

  private expandText(text: string, stack: readonly string[]): string {
    let out = "";
    let i = 0;
    while (i < text.length) {
      const dollar = text.indexOf("$", i);
      if (dollar < 0) return out + text.slice(i);
      out += text.slice(i, dollar);
      if (text[dollar + 1] === "$") {
        out += "$$";
        i = dollar + 2;
        continue;
      }
      MACRO_START.lastIndex = dollar;
      const m = MACRO_START.exec(text);
      const close = m ? matchParen(text, dollar + m[0].length - 1) : -1;
      if (!m || close < 0) {
        out += "$";
        i = dollar + 1;
        continue;
      }
      const body = text.slice(dollar + m[0].length, close);
      const expanded = this.expandOne(m[1]!, body, stack);
      out += expanded ?? text.slice(dollar, close + 1);
      if (out.length > MACRO_EXPANSION_LIMIT) {
        this.fail(`expanding ${stack.length > 0 ? `macro ${stack[stack.length - 1]}` : "this value"} gives more than ${MACRO_EXPANSION_LIMIT} characters`);
      }
      i = close + 1;
    }
    return out;
  }

  /** Expands one `$fn(body)`; undefined leaves an unknown function macro as written. */
  private expandOne(fn: string, body: string, stack: readonly string[]): string | undefined {
    if (fn === "") return this.expandReference(body, stack);
    return expandFunctionMacro(this, fn, body, stack);
  }

  /** `$(NAME)` or `$(NAME:default)`: the default is used when NAME is undefined or empty. */
  private expandReference(body: string, stack: readonly string[]): string {
    const colon = body.indexOf(":");
    const name = this.expand(colon < 0 ? body : body.slice(0, colon), stack).trim();
    if (name.toUpperCase() === "DOLLAR") return "$";
    const raw = this.lookupExpanded(name, stack);
    if (raw !== undefined && raw !== "") return raw;
    return colon < 0 ? "" : this.expand(body.slice(colon + 1), stack);
  }

  /** The fully expanded value of macro `name`, or undefined when it is not defined. */
  lookupExpanded(name: string, stack: readonly string[]): string | undefined {
    const raw = this.scope.lookup(name);
    if (raw === undefined) return undefined;
    const key = name.toLowerCase();
    if (stack.includes(key)) {
      const chain = [...stack.slice(stack.indexOf(key)), key].join(" -> ");
      this.fail(`recursive macro ${name} (${chain})${raw.where ? ` defined at ${raw.where}` : ""}`);
    }
    if (stack.length >= MACRO_DEPTH_LIMIT) {
      this.fail(`macro ${name} nests deeper than ${MACRO_DEPTH_LIMIT} levels`);
    }
    return this.expand(raw.value, [...stack, key]);
  }

  /** Throws the scope's error code with its location prefix. */
  fail(problem: string): never {
    throw new JobtapError(this.scope.code, `${this.scope.where}: ${problem}`);
  }
}

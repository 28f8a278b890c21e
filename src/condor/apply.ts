/**
 * Applying a parsed transform to a job ad (HTCondor's TransformClassAd), top to bottom in
 * one pass. The input ad is never modified: the result is a new ad, or — when the transform
 * fails (an invalid if condition, a recursive macro) — no ad and the reason.
 *
 * One `TransformRun` holds the macro table that pre-route, route and post-route transforms
 * share while a job is routed, the ClassAd evaluator and the fallback configuration.
 */
import { ErrorCode, isJobtapError, JobtapError } from "../errors.js";
import {
  type ClassAd,
  type Evaluator,
  type Expr,
  isError,
  literal,
  parseExpr,
  typeOf,
  unparse,
  unparseValue,
  type Value,
} from "./classad-bridge.js";
import { evaluateCondition, DEFAULT_CONDOR_VERSION } from "./conditions.js";
import { expandSelf } from "./config-reader.js";
import { expandMacros, type EvaluatedMacro, type MacroScope, type RawMacro } from "./macros.js";
import { evaluateMacroText } from "./macro-functions.js";
import { substituteGroups, type AttrRegex } from "./regex.js";
import { transformWhere, type Transform, type TransformStep } from "./transform.js";

/** What a run of transforms needs besides the ad. */
export interface TransformRunOptions {
  /** The ClassAd evaluator (function table, clock) used for EVALSET, if conditions, $INT... */
  evaluator: Evaluator;
  /** The daemon configuration consulted after the transform's own macros. */
  fallback?: MacroScope;
  /** Extra built-in macros (default: IsLinux, IsWindows, IsClusterAd, Iterating, LateMaterialization). */
  builtins?: Record<string, string>;
  env?: Record<string, string | undefined>;
  /** HTCondor version for `if version ...`. */
  version?: string;
}

/** The outcome of one transform on one ad. */
export type TransformOutcome =
  | { ok: true; applied: boolean; ad: ClassAd; warnings: string[] }
  | { ok: false; error: string; warnings: string[] };

const ATTR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The built-in macros HTCondor defines for router transforms. */
export function defaultBuiltins(): Record<string, string> {
  return {
    IsLinux: process.platform === "linux" ? "true" : "false",
    IsWindows: process.platform === "win32" ? "true" : "false",
    IsClusterAd: "false",
    Iterating: "false",
    LateMaterialization: "false",
  };
}

/** Sequential application of transforms sharing one macro table (pre → route → post). */
export class TransformRun {
  private readonly macros = new Map<string, string>();
  private readonly builtins = new Map<string, string>();

  constructor(private readonly options: TransformRunOptions) {
    for (const [k, v] of Object.entries(options.builtins ?? defaultBuiltins())) this.builtins.set(k.toLowerCase(), v);
  }

  /** The current value of a transform macro (raw), e.g. one set by EVALMACRO. */
  macro(name: string): string | undefined {
    return this.macros.get(name.toLowerCase());
  }

  /**
   * Applies `transform` to a copy of `ad`. REQUIREMENTS is tested on `ad` as given; when
   * it is not true the result is `applied: false` with an unchanged copy.
   */
  apply(transform: Transform, ad: ClassAd): TransformOutcome {
    const out = ad.clone();
    const warnings: string[] = [];
    if (transform.requirements !== undefined && !this.requirementsHold(transform.requirements, ad)) {
      return { ok: true, applied: false, ad: out, warnings };
    }
    try {
      new StepRunner(this, transform, out, warnings).runSteps(transform.steps);
    } catch (e) {
      if (isJobtapError(e)) return { ok: false, error: e.message, warnings };
      throw e;
    }
    return { ok: true, applied: true, ad: out, warnings };
  }

  /** True when REQUIREMENTS evaluates to true or a non-zero number against `ad`. */
  requirementsHold(requirements: string, ad: ClassAd): boolean {
    const v = this.options.evaluator.evaluate(parseExpr(requirements, true), { my: ad });
    if (typeof v === "boolean") return v;
    if (typeof v === "bigint") return v !== 0n;
    return typeof v === "number" && v !== 0;
  }

  /** @internal Sets a transform macro (raw text). */
  setMacro(name: string, value: string): void {
    this.macros.set(name.toLowerCase(), value);
  }

  /** @internal A macro scope over the local table, built-ins, MY.attr and the fallback. */
  scope(ad: ClassAd, where: string): MacroScope {
    const fallback = this.options.fallback;
    return {
      lookup: (name) => this.lookup(name, ad) ?? fallback?.lookup(name),
      env: this.options.env ?? fallback?.env ?? {},
      evaluate: (text) => this.evaluateMacro(text, ad),
      // $RANDOM_CHOICE / $RANDOM_INTEGER draw from the evaluator, so tests can fix them.
      random: this.options.evaluator.random,
      code: ErrorCode.CONDOR_TRANSFORM,
      where,
    };
  }

  private lookup(name: string, ad: ClassAd): RawMacro | undefined {
    const key = name.toLowerCase();
    const local = this.macros.get(key) ?? this.builtins.get(key);
    if (local !== undefined) return { value: local };
    if (!key.startsWith("my.")) return undefined;
    const expr = ad.lookup(name.slice(3));
    if (expr === undefined) return undefined;
    // A string literal expands without quotes; anything else as its unparsed text.
    if (expr.type === "literal" && typeof expr.value === "string") return { value: expr.value };
    return { value: unparse(expr, true) };
  }

  /** @internal Evaluates expression text against `ad` (new syntax, as EVALSET parses; old accepted). */
  evaluate(text: string, ad: ClassAd): Value {
    let expr: Expr;
    try {
      expr = parseExpr(text, false);
    } catch {
      expr = parseExpr(text, true);
    }
    return this.options.evaluator.evaluate(expr, { my: ad });
  }

  private evaluateMacro(text: string, ad: ClassAd): EvaluatedMacro {
    return evaluateMacroText(text, this.options.evaluator, ad);
  }

  /** @internal */
  get version(): string {
    return this.options.version ?? DEFAULT_CONDOR_VERSION;
  }
}

/** Runs the steps of one transform on one ad. */
class StepRunner {
  constructor(
    private readonly owner: TransformRun,
    private readonly transform: Transform,
    private readonly ad: ClassAd,
    private readonly warnings: string[],
  ) {}

  runSteps(steps: readonly TransformStep[]): void {
    for (const step of steps) this.step(step);
  }

  private where(line: number): string {
    return transformWhere(this.transform.origin, line);
  }

  private expand(text: string, line: number): string {
    return expandMacros(text, this.owner.scope(this.ad, this.where(line))).trim();
  }

  private warn(line: number, message: string): void {
    this.warnings.push(`${this.where(line)}: ${message}`);
  }

  private step(step: TransformStep): void {
    switch (step.op) {
      case "macro": {
        const old = this.owner.macro(step.name) ?? "";
        const value = expandSelf(step.value, step.name, old);
        this.owner.setMacro(step.name, step.append && old !== "" ? `${old} ${value}` : value);
        return;
      }
      case "if":
        return this.conditional(step);
      case "SET":
      case "DEFAULT":
        return this.set(step.op, this.expand(step.attr, step.line), this.expand(step.value, step.line), step.line);
      case "EVALSET":
      case "EVALMACRO":
        return this.evalStep(step.op, this.expand(step.attr, step.line), this.expand(step.value, step.line), step.line);
      case "COPY":
      case "RENAME":
        return this.copy(step.op, step.from, this.expand(step.to, step.line), step.line);
      case "DELETE":
        for (const name of this.matching(step.attr, step.line)) this.ad.delete(name[0]);
        return;
    }
  }

  private conditional(step: Extract<TransformStep, { op: "if" }>): void {
    for (const branch of step.branches) {
      if (this.condition(branch.condition, branch.line)) return this.runSteps(branch.steps);
    }
    if (step.otherwise) this.runSteps(step.otherwise);
  }

  private condition(text: string, line: number): boolean {
    const where = this.where(line);
    try {
      return evaluateCondition(text, {
        expand: (t) => this.expand(t, line),
        isDefined: (name) => (this.owner.scope(this.ad, where).lookup(name)?.value ?? "").trim() !== "",
        evaluate: (expr) => this.complexCondition(expr),
        version: this.owner.version,
      });
    } catch (e) {
      if (isJobtapError(e)) throw e;
      throw new JobtapError(ErrorCode.CONDOR_TRANSFORM, `${where}: ${(e as Error).message}`);
    }
  }

  /** A ClassAd condition: booleans and numbers count; undefined/error/strings fail the transform. */
  private complexCondition(expr: string): boolean {
    let v: Value;
    try {
      v = this.owner.evaluate(expr, this.ad);
    } catch (e) {
      throw new Error(`if ${expr}: does not parse: ${(e as Error).message}`);
    }
    if (typeof v === "boolean") return v;
    if (typeof v === "bigint") return v !== 0n;
    if (typeof v === "number") return v !== 0;
    throw new Error(`if ${expr}: is not a valid if condition (it evaluates to ${typeOf(v)})`);
  }

  private set(op: "SET" | "DEFAULT", attr: string, value: string, line: number): void {
    if (!ATTR_NAME.test(attr)) return this.warn(line, `${op} ${attr}: not a valid attribute name; step skipped`);
    if (op === "DEFAULT" && this.ad.has(attr)) return;
    let expr: Expr;
    try {
      expr = parseExpr(value, true);
    } catch (e) {
      return this.warn(line, `${op} ${attr}: "${value}" is not a valid expression (${(e as Error).message}); step skipped`);
    }
    this.ad.set(attr, expr);
  }

  private evalStep(op: "EVALSET" | "EVALMACRO", target: string, value: string, line: number): void {
    let v: Value;
    try {
      v = this.owner.evaluate(value, this.ad);
    } catch (e) {
      return this.warn(line, `${op} ${target}: "${value}" is not a valid expression (${(e as Error).message}); step skipped`);
    }
    if (isError(v)) return this.warn(line, `${op} ${target}: "${value}" evaluates to error; step skipped`);
    if (op === "EVALMACRO") {
      this.owner.setMacro(target, typeof v === "string" ? v : unparseValue(v, true));
      return;
    }
    if (!ATTR_NAME.test(target)) return this.warn(line, `EVALSET ${target}: not a valid attribute name; step skipped`);
    this.ad.set(target, literal(v));
  }

  /** Attribute names matched by a name or regex: `[name, newName-substitution match]`. */
  private matching(pattern: string | AttrRegex, line: number): [string, RegExpExecArray | undefined][] {
    if (typeof pattern === "string") {
      const name = this.expand(pattern, line);
      return this.ad.has(name) ? [[name, undefined]] : [];
    }
    const found: [string, RegExpExecArray | undefined][] = [];
    for (const name of this.ad.names()) {
      const m = pattern.regex.exec(name);
      if (m) found.push([name, m]);
    }
    return found.sort((a, b) => (a[0].toLowerCase() < b[0].toLowerCase() ? -1 : 1));
  }

  private copy(op: "COPY" | "RENAME", from: string | AttrRegex, to: string, line: number): void {
    const moves = this.matching(from, line).map(([name, m]) => {
      const target = m ? substituteGroups(to, m) : to;
      return { name, target, expr: this.ad.lookup(name)! };
    });
    for (const { name, target, expr } of moves) {
      if (!ATTR_NAME.test(target)) {
        this.warn(line, `${op} ${name}: "${target}" is not a valid attribute name; skipped`);
        continue;
      }
      if (op === "RENAME") this.ad.delete(name);
      this.ad.set(target, expr);
    }
  }
}

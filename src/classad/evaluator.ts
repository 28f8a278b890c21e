/**
 * An Evaluator owns a ClassAd function table and a clock. Plugins create their own instance
 * and add functions to it without affecting anyone else's. Evaluation never throws: bad
 * input, cycles and runaway recursion give `undefined` or `error` values.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import type { ClassAd } from "./classad.js";
import { compiled, evalEntry, Frame, type Compiled, type EvalRun, type FunctionImpl, type FunctionTable } from "./compile.js";
import type { Expr } from "./expr.js";
import { registerBuiltins } from "./functions/index.js";
import { parseExpr } from "./parser.js";
import { ERROR, UNDEFINED, type Value } from "./values.js";

/** A strict function: called with its evaluated arguments. */
export type ClassAdFunction = (args: Value[], frame: Frame) => Value;
/** A lazy function: called with closures it may evaluate (or not) in `frame`. */
export type LazyClassAdFunction = (args: readonly Compiled[], frame: Frame, nodes: readonly Expr[]) => Value;

export interface EvaluatorOptions {
  /** Epoch seconds for `time()`/`CurrentTime` (default: the wall clock). */
  clock?: () => number;
  /** Source of `random()` numbers in [0,1) (default Math.random). */
  random?: () => number;
  /** Where `debug(x)` reports (default: nowhere). */
  log?: (message: string) => void;
  /** Omit the builtin table (for a minimal sandbox); default false. */
  bare?: boolean;
  /** Refuse every later addFunction/addLazyFunction (the shared builtin evaluator). */
  sealed?: boolean;
}

/** Where an evaluation happens: MY (the ad itself) and, for matchmaking, TARGET. */
export interface EvalScope {
  my?: ClassAd | null;
  target?: ClassAd | null;
}

/** Owns a function table and a clock; compiles and evaluates expressions (never throws). */
export class Evaluator implements FunctionTable {
  private tableVersion: object = {};
  private readonly sealed: boolean;
  readonly clock: () => number;
  readonly random: () => number;
  readonly log: (message: string) => void;
  private readonly functions = new Map<string, FunctionImpl>();

  constructor(opts: EvaluatorOptions = {}) {
    this.clock = opts.clock ?? (() => Date.now() / 1000);
    this.random = opts.random ?? Math.random;
    this.log = opts.log ?? (() => {});
    this.sealed = false;
    if (!opts.bare) registerBuiltins(this);
    this.sealed = opts.sealed === true;
  }

  /** Identity of the current function table; replaced by every change (see compile.ts). */
  get version(): object {
    return this.tableVersion;
  }

  /** The function registered under `key` (lower-cased name). */
  get(key: string): FunctionImpl | undefined {
    return this.functions.get(key);
  }

  /** Names (lower-cased) of every registered function. */
  functionNames(): string[] {
    return [...this.functions.keys()];
  }

  /** Adds or replaces a strict function (names are case-insensitive). */
  addFunction(name: string, fn: ClassAdFunction): this {
    return this.install(name, { lazy: false, fn });
  }

  /** Adds or replaces a lazy function that decides which arguments to evaluate. */
  addLazyFunction(name: string, fn: LazyClassAdFunction): this {
    return this.install(name, { lazy: true, fn });
  }

  private install(name: string, impl: FunctionImpl): this {
    if (this.sealed) {
      throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `this ClassAd evaluator is sealed (read-only); create your own Evaluator to add "${name}"`);
    }
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `ClassAd function name "${name}" is not an identifier`);
    }
    this.functions.set(name.toLowerCase(), impl);
    this.tableVersion = {};
    return this;
  }

  /** A fresh per-evaluation state (clock read lazily, once). */
  newRun(): EvalRun {
    return new Run(this, this.clock);
  }

  /**
   * Evaluates an expression (tree or new-syntax text) with `my` as the scope ad and an
   * optional `target`. Never throws for evaluation problems; a text that does not parse
   * throws CLASSAD_SYNTAX.
   */
  evaluate(expr: Expr | string, scope: EvalScope = {}): Value {
    const tree = typeof expr === "string" ? parseExpr(expr) : expr;
    const my = scope.my ?? null;
    try {
      return compiled(tree, this)(new Frame(my, my, scope.target ?? null, new Run(this, this.clock)));
    } catch (e) {
      return this.failed(e);
    }
  }

  /** Evaluates attribute `name` of `ad` (undefined if absent), optionally against `target`. */
  evaluateAttr(ad: ClassAd, name: string, target: ClassAd | null = null): Value {
    const entry = ad.entry(name.toLowerCase());
    if (entry === undefined) return UNDEFINED;
    try {
      return evalEntry(entry, new Frame(ad, ad, target, new Run(this, this.clock)));
    } catch (e) {
      return this.failed(e);
    }
  }

  /** Evaluates in an existing frame (for functions such as `eval()`). */
  evaluateIn(expr: Expr, frame: Frame): Value {
    return compiled(expr, this)(frame);
  }

  /**
   * Evaluation never throws: a host stack smaller than our depth bounds, or a function
   * added by a plugin that throws, gives `error` (the latter is reported through `log`).
   */
  private failed(e: unknown): Value {
    if (!(e instanceof RangeError)) this.log(`classad: evaluation failed: ${e instanceof Error ? e.message : String(e)}`);
    return ERROR;
  }
}

/** One top-level evaluation's state (a class, so creating one per evaluation is cheap). */
class Run implements EvalRun {
  depth = 0;
  steps = 0;
  records?: EvalRun["records"];
  private clockValue: number | undefined = undefined;
  constructor(
    readonly table: FunctionTable,
    private readonly clock: () => number,
  ) {}

  now(): number {
    return (this.clockValue ??= this.clock());
  }
}

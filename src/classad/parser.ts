/**
 * The ClassAd parser: recursive descent over the precedence table of htcondor.md §8.3.
 * Nesting is bounded (MAX_DEPTH) so hostile input gives a CLASSAD_SYNTAX error, never a
 * stack overflow later in the compiler, evaluator or printer.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import { Lexer, T } from "./lexer.js";
import { attrRef, callNode, literal, type BinaryOp, type Expr, type UnaryOp } from "./expr.js";
import { ERROR, UNDEFINED } from "./values.js";

/** Deepest expression tree accepted (operator chains, parentheses, nested ads/lists). A flat
 *  chain such as `x == 1 || x == 2 || ...` is a left-deep tree, so this also bounds chains:
 *  1,999 terms (generated requirements get long) still evaluate within the default stack. */
export const MAX_DEPTH = 2000;
/** Deepest parser recursion (parentheses, unary chains, calls, lists, records). */
export const MAX_NESTING = 200;

/** Binary operators by precedence level, lowest first (ternary is handled separately). */
const LEVELS: readonly (readonly string[])[] = [
  ["||"],
  ["&&"],
  ["|"],
  ["^"],
  ["&"],
  ["==", "!=", "=?=", "=!=", "is", "isnt"],
  ["<", "<=", ">", ">="],
  ["<<", ">>", ">>>"],
  ["+", "-"],
  ["*", "/", "%"],
];

const OP_LEVEL = new Map<string, number>();
LEVELS.forEach((ops, i) => ops.forEach((op) => OP_LEVEL.set(op, i)));

const CANONICAL: Record<string, BinaryOp> = { "=?=": "is", "=!=": "isnt" };

/** A recursive-descent parser over one text (reusable through `reset`). */
export class Parser {
  readonly lx: Lexer;
  /** Depth of the tree most recently returned by a production. */
  private depth = 0;
  private nesting = 0;

  constructor(src: string, oldSyntax: boolean) {
    this.lx = new Lexer(src, oldSyntax);
    this.lx.next();
  }

  /** Starts over on new text, positioned at its first token. */
  reset(src: string): void {
    this.depth = 0;
    this.nesting = 0;
    this.lx.reset(src);
    this.lx.next();
  }

  /** Parses one full expression; trailing text is the caller's business. */
  expression(): Expr {
    this.enter();
    const cond = this.binary(0);
    let out = cond;
    if (this.isOp("?")) {
      const d0 = this.depth;
      this.lx.next();
      const then = this.expression();
      const d1 = this.depth;
      this.expect(":", "the ':' of a conditional expression");
      const els = this.expression();
      out = { type: "ternary", cond, then, else: els };
      this.setDepth(Math.max(d0, d1, this.depth) + 1);
    }
    this.nesting--;
    return out;
  }

  /** Fails unless the whole input was consumed. */
  expectEnd(): void {
    if (this.lx.kind !== T.EOF) this.lx.fail(`expected end of expression, found ${this.lx.describe()}`);
  }

  /** True if the current token is the operator `op`. */
  isOp(op: string): boolean {
    return this.lx.kind === T.OP && this.lx.text === op;
  }

  /** Consumes operator `op` or fails saying what was expected. */
  expect(op: string, what: string): void {
    if (!this.isOp(op)) this.lx.fail(`expected ${what}, found ${this.lx.describe()}`);
    this.lx.next();
  }

  private enter(): void {
    if (++this.nesting > MAX_NESTING) this.lx.fail(`expression nested deeper than ${MAX_NESTING} levels`);
  }

  private setDepth(d: number): void {
    if (d > MAX_DEPTH) this.lx.fail(`expression more than ${MAX_DEPTH} levels deep (operators chained or nested)`);
    this.depth = d;
  }

  /** The binary operator at the current token (`is`/`isnt` are identifiers), or null. */
  private binaryOp(): string | null {
    const lx = this.lx;
    if (lx.kind === T.OP) return OP_LEVEL.has(lx.text) ? lx.text : null;
    if (lx.kind === T.IDENT && (lx.text.length === 2 || lx.text.length === 4)) {
      const lc = lx.text.toLowerCase();
      if (lc === "is" || lc === "isnt") return lc;
    }
    return null;
  }

  /** Precedence climbing over LEVELS: operators at `minLevel` or tighter, left-associative. */
  private binary(minLevel: number): Expr {
    let left = this.unary();
    for (;;) {
      const op = this.binaryOp();
      if (op === null) return left;
      const level = OP_LEVEL.get(op)!;
      if (level < minLevel) return left;
      const dl = this.depth;
      this.lx.next();
      const right = this.binary(level + 1);
      left = { type: "binary", op: CANONICAL[op] ?? (op as BinaryOp), left, right };
      this.setDepth(Math.max(dl, this.depth) + 1);
    }
  }

  private unary(): Expr {
    const lx = this.lx;
    if (lx.kind === T.OP && (lx.text === "-" || lx.text === "+" || lx.text === "!" || lx.text === "~")) {
      const op = lx.text as UnaryOp;
      this.enter();
      lx.next();
      const operand = this.unary();
      this.nesting--;
      this.setDepth(this.depth + 1);
      return { type: "unary", op, operand };
    }
    return this.postfix();
  }

  private postfix(): Expr {
    let e = this.primary();
    for (;;) {
      const d = this.depth;
      if (this.isOp(".")) {
        this.lx.next();
        e = attrRef(this.attributeName("an attribute name after '.'"), e);
      } else if (this.isOp("[")) {
        this.lx.next();
        const index = this.expression();
        this.expect("]", "']' after a subscript");
        e = { type: "subscript", base: e, index };
      } else if (this.isOp("?:")) {
        // As HTCondor's parser: the right operand is a whole postfix expression, so
        // `a ?: b[1]` is `a ?: (b[1])` and `a ?: b ?: c` is `a ?: (b ?: c)`.
        this.lx.next();
        this.enter();
        const right = this.postfix();
        this.nesting--;
        e = { type: "ternary", cond: e, then: null, else: right };
      } else return e;
      this.setDepth(Math.max(d, this.depth) + 1);
    }
  }

  /** An identifier or `'quoted name'`; fails naming `what` otherwise. */
  attributeName(what: string): string {
    const lx = this.lx;
    if (lx.kind !== T.IDENT && lx.kind !== T.QNAME) lx.fail(`expected ${what}, found ${lx.describe()}`);
    const name = lx.text;
    lx.next();
    return name;
  }

  private primary(): Expr {
    const lx = this.lx;
    this.depth = 1;
    switch (lx.kind) {
      case T.INT: {
        const v = lx.int;
        lx.next();
        return literal(v);
      }
      case T.REAL: {
        const v = lx.real;
        lx.next();
        return literal(v);
      }
      case T.STRING: {
        const v = lx.text;
        lx.next();
        return literal(v);
      }
      case T.QNAME:
        return attrRef(this.attributeName("an attribute name"));
      case T.IDENT:
        return this.identifier();
      case T.OP:
        return this.bracketed();
      default:
        return lx.fail(`expected an expression, found ${lx.describe()}`);
    }
  }

  private identifier(): Expr {
    const lx = this.lx;
    const name = lx.text;
    const lc = name.toLowerCase();
    lx.next();
    switch (lc) {
      case "true":
        return literal(true);
      case "false":
        return literal(false);
      case "undefined":
        return literal(UNDEFINED);
      case "error":
        return literal(ERROR);
      case "is":
      case "isnt":
        return lx.fail(`expected an expression, found "${name}"`);
    }
    if (!this.isOp("(")) return attrRef(name);
    lx.next();
    const args = this.sequence(")", "',' or ')' in the arguments of " + name + "()");
    return callNode(name, args);
  }

  /** Comma-separated expressions up to `close` (already past the opener). */
  private sequence(close: string, what: string): Expr[] {
    const items: Expr[] = [];
    let deepest = 0;
    if (!this.isOp(close)) {
      for (;;) {
        items.push(this.expression());
        deepest = Math.max(deepest, this.depth);
        if (this.isOp(",")) this.lx.next();
        else break;
      }
    }
    this.expect(close, what);
    this.setDepth(deepest + 1);
    return items;
  }

  private bracketed(): Expr {
    const lx = this.lx;
    switch (lx.text) {
      case "(": {
        lx.next();
        const inner = this.expression();
        this.expect(")", "')'");
        this.setDepth(this.depth + 1);
        return { type: "paren", inner };
      }
      case "{":
        lx.next();
        return { type: "list", items: this.sequence("}", "',' or '}' in a list") };
      case "[":
        lx.next();
        return this.record();
      case ".": {
        lx.next();
        return attrRef(this.attributeName("an attribute name after '.'"), null, true);
      }
      default:
        return lx.fail(`expected an expression, found ${lx.describe()}`);
    }
  }

  /** `[ name = expr; ... ]` after the `[`. Extra `;` are allowed. */
  record(): Expr {
    const attrs: (readonly [string, Expr])[] = [];
    let deepest = 0;
    for (;;) {
      while (this.isOp(";")) this.lx.next();
      if (this.isOp("]")) break;
      const name = this.attributeName("an attribute name or ']' in a record");
      this.expect("=", `'=' after attribute name "${name}"`);
      attrs.push([name, this.expression()]);
      deepest = Math.max(deepest, this.depth);
      if (!this.isOp(";") && !this.isOp("]")) this.lx.fail(`expected ';' or ']' in a record, found ${this.lx.describe()}`);
    }
    this.lx.next();
    this.setDepth(deepest + 1);
    return { type: "record", attrs };
  }
}

/** Parses a whole expression (new syntax unless `oldSyntax`); throws CLASSAD_SYNTAX. */
export function parseExpr(text: string, oldSyntax = false): Expr {
  return guardStack(() => {
    const p = new Parser(text, oldSyntax);
    const e = p.expression();
    p.expectEnd();
    return e;
  });
}

/** Turns a stack overflow (a host with a small stack) into a CLASSAD_SYNTAX error. */
export function guardStack<R>(parse: () => R): R {
  try {
    return parse();
  } catch (e) {
    if (e instanceof RangeError) {
      throw new JobtapError(ErrorCode.CLASSAD_SYNTAX, "ClassAd syntax error: expression nested too deeply");
    }
    throw e;
  }
}

/** Parses the first complete expression of `text` and reports where it ended. */
export function parseExprPrefix(text: string, oldSyntax: boolean): { expr: Expr; end: number } {
  return guardStack(() => {
    const p = new Parser(text, oldSyntax);
    const e = p.expression();
    return { expr: e, end: p.lx.start };
  });
}

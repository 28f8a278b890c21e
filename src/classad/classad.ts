/**
 * A ClassAd: a case-insensitive map from attribute names to unevaluated expressions.
 * Names keep the spelling they were first set with; iteration is in insertion order.
 * An ad may have a lexical `parent` (the enclosing ad of a nested record).
 */
import type { Evaluator } from "./evaluator.js";
import { literal, sameExpr, type Expr } from "./expr.js";
import { parseExpr } from "./parser.js";
import { builtinEvaluator } from "./shared.js";
import type { Value } from "./values.js";

/** One attribute slot. `active` marks an evaluation in progress (cycle detection). */
export interface AttrEntry {
  readonly name: string;
  expr: Expr;
  active: boolean;
}

/** A ClassAd (see the module comment); also the value of a nested record. */
export class ClassAd {
  readonly kind = "classad" as const;
  /** The enclosing ad for lexical scoping (`parent.x`, outward lookup), or null. */
  parent: ClassAd | null = null;
  private readonly entries: Map<string, AttrEntry>;

  /**
   * Builds an ad from `[name, expression-or-value]` pairs. `storeless` is for subclasses
   * that keep their attributes elsewhere and override every accessor (RecordAd): they share
   * one empty table instead of allocating their own.
   */
  constructor(attrs?: Iterable<readonly [string, Expr | Value]>, storeless = false) {
    this.entries = storeless ? NO_ENTRIES : new Map<string, AttrEntry>();
    if (attrs) for (const [n, v] of attrs) this.set(n, v);
  }

  /** Number of attributes. */
  get size(): number {
    return this.entries.size;
  }

  /** The expression bound to `name` (case-insensitive), or undefined. */
  lookup(name: string): Expr | undefined {
    return this.entries.get(name.toLowerCase())?.expr;
  }

  /** Same as `lookup`: the expression bound to `name`, or undefined. */
  get(name: string): Expr | undefined {
    return this.lookup(name);
  }

  /** Internal: the slot for an already lower-cased key. */
  entry(key: string): AttrEntry | undefined {
    return this.entries.get(key);
  }

  /** True if `name` is bound (case-insensitive). */
  has(name: string): boolean {
    return this.entries.has(name.toLowerCase());
  }

  /**
   * Binds `name` to an expression tree or a value (a value is stored as a literal; a nested
   * ClassAd value gets this ad as its parent). Re-binding keeps the first spelling and the
   * original position.
   */
  set(name: string, v: Expr | Value): this {
    return this.bind(name, toExpr(v, this));
  }

  /** Binds `name` to an expression tree (what `set` does once a value is made a literal). */
  bind(name: string, expr: Expr): this {
    const key = name.toLowerCase();
    const old = this.entries.get(key);
    if (old) old.expr = expr;
    else this.entries.set(key, { name, expr, active: false });
    return this;
  }

  /** Binds `name` to the parse of `text` (new syntax unless `oldSyntax`); throws CLASSAD_SYNTAX. */
  setExpr(name: string, text: string, oldSyntax = false): this {
    return this.set(name, parseExpr(text, oldSyntax));
  }

  /** Removes `name`; returns whether it was bound. */
  delete(name: string): boolean {
    return this.entries.delete(name.toLowerCase());
  }

  /** Attribute names (first spelling) in insertion order. */
  names(): string[] {
    return Array.from(this.entries.values(), (e) => e.name);
  }

  /** `[name, expression]` pairs in insertion order. */
  *attributes(): IterableIterator<[string, Expr]> {
    for (const e of this.entries.values()) yield [e.name, e.expr];
  }

  /** A shallow copy: same expression trees, no parent. */
  clone(): ClassAd {
    const ad = new ClassAd();
    for (const e of this.entries.values()) ad.entries.set(e.name.toLowerCase(), { name: e.name, expr: e.expr, active: false });
    return ad;
  }

  /** Copies every attribute of `other` into this ad (other's bindings win). */
  update(other: ClassAd): this {
    for (const [name, expr] of other.attributes()) this.set(name, expr);
    return this;
  }

  /**
   * Structural identity (what `=?=` means for ads): the same attribute names and, for
   * each, the same expression tree, literals compared with `sameValue`.
   */
  sameAs(other: ClassAd, sameValue: (a: Value, b: Value) => boolean): boolean {
    if (other === this) return true;
    if (other.size !== this.entries.size) return false;
    for (const [key, e] of this.entries) {
      const o = other.entry(key);
      if (o === undefined || !sameExpr(e.expr, o.expr, sameValue)) return false;
    }
    return true;
  }

  /**
   * Evaluates attribute `name` with MY = this ad and an optional TARGET (undefined if the
   * attribute is absent). Uses `ev`, or the shared sealed builtin evaluator. Never throws.
   */
  evaluate(name: string, target: ClassAd | null = null, ev: Evaluator = builtinEvaluator()): Value {
    return ev.evaluateAttr(this, name, target);
  }

  /** Evaluates an expression (tree or new-syntax text) with MY = this ad, optional TARGET. */
  evaluateExpr(expr: Expr | string, target: ClassAd | null = null, ev: Evaluator = builtinEvaluator()): Value {
    return ev.evaluate(expr, { my: this, target });
  }

  /** Removes every attribute. */
  clear(): void {
    this.entries.clear();
  }
}

/** The (never written) table of storeless ads. */
const NO_ENTRIES = new Map<string, AttrEntry>();

/** True if `v` is an expression node rather than a value. */
export function isExpr(v: Expr | Value): v is Expr {
  // Values never carry a `type` field; expression nodes always do.
  return typeof v === "object" && (v as { type?: unknown }).type !== undefined;
}

function toExpr(v: Expr | Value, owner: ClassAd): Expr {
  if (isExpr(v)) return v;
  if (v instanceof ClassAd && v.parent === null && v !== owner) v.parent = owner;
  return literal(v);
}

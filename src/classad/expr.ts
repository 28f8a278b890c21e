/**
 * The ClassAd expression tree. Nodes are plain immutable records built by the parser; the
 * compiler caches one closure per node per evaluator in `cache` (not part of the tree's
 * meaning, never printed).
 */
import type { Value } from "./values.js";

/** Binary operators, spelled as HTCondor's new-style printer writes them. */
export type BinaryOp =
  | "||"
  | "&&"
  | "|"
  | "^"
  | "&"
  | "=="
  | "!="
  | "is"
  | "isnt"
  | "<"
  | "<="
  | ">"
  | ">="
  | "<<"
  | ">>"
  | ">>>"
  | "+"
  | "-"
  | "*"
  | "/"
  | "%";

export type UnaryOp = "-" | "+" | "!" | "~";

/** A per-evaluator compiled closure cached on a node. */
export interface CompiledCache {
  owner: object;
  fn: unknown;
}

interface NodeBase {
  /** Compiled-closure cache; owned by the compiler. */
  cache?: CompiledCache | undefined;
}

export interface LiteralNode extends NodeBase {
  readonly type: "literal";
  readonly value: Value;
}
/** `name`, `.name` (absolute) or `base.name` (selection). */
export interface AttrNode extends NodeBase {
  readonly type: "attr";
  readonly name: string;
  /** Lower-cased name, computed once at parse time so lookups never re-fold it. */
  readonly key: string;
  readonly base: Expr | null;
  readonly absolute: boolean;
}
export interface UnaryNode extends NodeBase {
  readonly type: "unary";
  readonly op: UnaryOp;
  readonly operand: Expr;
}
export interface BinaryNode extends NodeBase {
  readonly type: "binary";
  readonly op: BinaryOp;
  readonly left: Expr;
  readonly right: Expr;
}
/** `cond ? then : else`; `then` is null for Elvis `cond ?: else`. */
export interface TernaryNode extends NodeBase {
  readonly type: "ternary";
  readonly cond: Expr;
  readonly then: Expr | null;
  readonly else: Expr;
}
export interface SubscriptNode extends NodeBase {
  readonly type: "subscript";
  readonly base: Expr;
  readonly index: Expr;
}
/** `( expr )`: kept so printing reproduces the author's parentheses, as HTCondor does. */
export interface ParenNode extends NodeBase {
  readonly type: "paren";
  readonly inner: Expr;
}
export interface CallNode extends NodeBase {
  readonly type: "call";
  /** The name as written (printed as written). */
  readonly name: string;
  readonly key: string;
  readonly args: readonly Expr[];
}
export interface ListNode extends NodeBase {
  readonly type: "list";
  readonly items: readonly Expr[];
}
/** A record literal `[ a = 1; b = 2 ]`. */
export interface RecordNode extends NodeBase {
  readonly type: "record";
  readonly attrs: readonly (readonly [string, Expr])[];
}

export type Expr =
  | LiteralNode
  | AttrNode
  | UnaryNode
  | BinaryNode
  | TernaryNode
  | SubscriptNode
  | ParenNode
  | CallNode
  | ListNode
  | RecordNode;

/** A literal node holding `value`. */
export function literal(value: Value): LiteralNode {
  return { type: "literal", value };
}

/** An unscoped attribute reference `name`. */
export function attrRef(name: string, base: Expr | null = null, absolute = false): AttrNode {
  return { type: "attr", name, key: name.toLowerCase(), base, absolute };
}

/** A function call node. */
export function callNode(name: string, args: readonly Expr[]): CallNode {
  return { type: "call", name, key: name.toLowerCase(), args };
}

/** Structural equality of two trees; literals compare with `sameValue` (identity `=?=`). */
export function sameExpr(a: Expr, b: Expr, sameValue: (x: Value, y: Value) => boolean): boolean {
  if (a.type !== b.type) return false;
  const eq = (x: Expr | null, y: Expr | null) => (x === null || y === null ? x === y : sameExpr(x, y, sameValue));
  const all = (xs: readonly Expr[], ys: readonly Expr[]) => xs.length === ys.length && xs.every((x, i) => eq(x, ys[i]!));
  switch (a.type) {
    case "literal":
      return sameValue(a.value, (b as LiteralNode).value);
    case "attr": {
      const o = b as AttrNode;
      return a.key === o.key && a.absolute === o.absolute && eq(a.base, o.base);
    }
    case "unary":
      return a.op === (b as UnaryNode).op && eq(a.operand, (b as UnaryNode).operand);
    case "binary": {
      const o = b as BinaryNode;
      return a.op === o.op && eq(a.left, o.left) && eq(a.right, o.right);
    }
    case "ternary": {
      const o = b as TernaryNode;
      return eq(a.cond, o.cond) && eq(a.then, o.then) && eq(a.else, o.else);
    }
    case "subscript":
      return eq(a.base, (b as SubscriptNode).base) && eq(a.index, (b as SubscriptNode).index);
    case "paren":
      return eq(a.inner, (b as ParenNode).inner);
    case "call":
      return a.key === (b as CallNode).key && all(a.args, (b as CallNode).args);
    case "list":
      return all(a.items, (b as ListNode).items);
    case "record": {
      const o = b as RecordNode;
      return (
        a.attrs.length === o.attrs.length &&
        a.attrs.every(([n, x], i) => n.toLowerCase() === o.attrs[i]![0].toLowerCase() && eq(x, o.attrs[i]![1]))
      );
    }
  }
}

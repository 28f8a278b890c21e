/**
 * A read-only ClassAd over a shared layout: many ads with (mostly) the same attribute names
 * — job ads — keep one name table (`AdLayout`) and only an array of values or expressions
 * each. Entries are made on first lookup, so building an ad costs an array, not a hash
 * table of entry objects; that is what lets the manager build job ads for every job at
 * every poll. It behaves as a ClassAd everywhere (evaluation, printing, matchmaking);
 * writes throw FROZEN_AD, and `clone()` gives an ordinary writable ClassAd.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import { ClassAd, isExpr, type AttrEntry } from "./classad.js";
import { literal, type Expr } from "./expr.js";
import type { Value } from "./values.js";

/** The attribute names of a family of record ads, in order; built once and shared. */
export class AdLayout {
  readonly names: readonly string[];
  private readonly index = new Map<string, number>();
  private readonly integer: boolean[];

  /**
   * Names must be distinct ignoring case. A JS number in a slot listed in `integerSlots` is
   * a ClassAd integer (converted when the entry is made), so building an ad allocates no
   * bigints; elsewhere a JS number is a real.
   */
  constructor(names: readonly string[], integerSlots: readonly number[] = []) {
    this.names = names;
    names.forEach((n, i) => this.index.set(n.toLowerCase(), i));
    this.integer = names.map((_, i) => integerSlots.includes(i));
  }

  /** True if a JS number in slot `i` stands for a ClassAd integer. */
  isInteger(i: number): boolean {
    return this.integer[i] === true;
  }

  /** The slot of a lower-cased name, or -1. */
  slotOf(key: string): number {
    return this.index.get(key) ?? -1;
  }

  get length(): number {
    return this.names.length;
  }
}

/** A slot's content: a value, an expression, or JS `undefined` for an absent attribute. */
export type RecordSlot = Value | Expr | undefined;

/**
 * A read-only ClassAd over a layout. Attribute i is `own[i]` for i < own.length, else
 * `base[i]`: a family of ads shares one `base` (what they have in common) and each keeps
 * only its own first slots.
 */
export class RecordAd extends ClassAd {
  private made: Array<AttrEntry | undefined> | undefined;

  /** `own` is owned by the ad from now on (not copied); `base` is shared, never written. */
  constructor(
    private readonly layout: AdLayout,
    private readonly base: readonly RecordSlot[],
    private readonly own: readonly RecordSlot[] = [],
  ) {
    super(undefined, true);
  }

  private slot(i: number): RecordSlot {
    return i < this.own.length ? this.own[i] : this.base[i];
  }

  override get size(): number {
    let n = 0;
    for (let i = 0; i < this.layout.length; i++) if (this.slot(i) !== undefined) n++;
    return n;
  }

  override entry(key: string): AttrEntry | undefined {
    const i = this.layout.slotOf(key);
    if (i < 0) return undefined;
    const made = (this.made ??= new Array<AttrEntry | undefined>(this.layout.length));
    let e = made[i];
    if (e !== undefined) return e;
    const s = this.slot(i);
    if (s === undefined) return undefined;
    const v = typeof s === "number" && this.layout.isInteger(i) ? BigInt(s) : s;
    e = { name: this.layout.names[i]!, expr: isExpr(v) ? v : literal(v), active: false };
    made[i] = e;
    return e;
  }

  override lookup(name: string): Expr | undefined {
    return this.entry(name.toLowerCase())?.expr;
  }

  override get(name: string): Expr | undefined {
    return this.lookup(name);
  }

  override has(name: string): boolean {
    const i = this.layout.slotOf(name.toLowerCase());
    return i >= 0 && this.slot(i) !== undefined;
  }

  override names(): string[] {
    return this.layout.names.filter((_, i) => this.slot(i) !== undefined);
  }

  override *attributes(): IterableIterator<[string, Expr]> {
    for (let i = 0; i < this.layout.length; i++) {
      const e = this.slot(i) === undefined ? undefined : this.entry(this.layout.names[i]!.toLowerCase());
      if (e) yield [e.name, e.expr];
    }
  }

  override clone(): ClassAd {
    const ad = new ClassAd();
    for (const [n, e] of this.attributes()) ad.set(n, e);
    return ad;
  }

  override sameAs(other: ClassAd, sameValue: (a: Value, b: Value) => boolean): boolean {
    return other === this || this.clone().sameAs(other, sameValue);
  }

  override set(name: string, _v: Expr | Value): this {
    throw readOnly(name);
  }

  override bind(name: string, _expr: Expr): this {
    throw readOnly(name);
  }

  override delete(name: string): boolean {
    throw readOnly(name);
  }

  override clear(): void {
    throw readOnly("*");
  }
}

function readOnly(name: string): JobtapError {
  return new JobtapError(ErrorCode.FROZEN_AD, `ClassAd is read-only (shared by the manager): cannot change ${name}; clone() it first`);
}

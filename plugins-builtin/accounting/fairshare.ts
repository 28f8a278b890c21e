/**
 * Decayed usage and the fair-share factor of every user association: Slurm's Fair Tree
 * (level by level, ranked) or the classic 2^(-U/S). docs/accounting.md works an example.
 */
import type { Associations, User } from "./tree.js";
import { assocKey } from "./tree.js";

/** An association's usage, decayed as of `t` (ms on the manager's clock). */
export interface Usage {
  /** Core-seconds. */
  core: number;
  /** GPU-seconds. */
  gpu: number;
  t: number;
}

/** `u` decayed to `now` with the half-life `halfLifeMs` (Slurm's PriorityDecayHalfLife). */
export function decayed(u: Usage | undefined, now: number, halfLifeMs: number): Usage {
  if (u === undefined) return { core: 0, gpu: 0, t: now };
  if (now <= u.t || !(halfLifeMs > 0) || halfLifeMs === Infinity) return { ...u, t: Math.max(u.t, now) };
  const f = Math.pow(2, -(now - u.t) / halfLifeMs);
  return { core: u.core * f, gpu: u.gpu * f, t: now };
}

/** The usage fair share is computed from: core-seconds plus GPU-seconds × gpuFactor. */
export const billed = (u: Usage, gpuFactor: number): number => u.core + u.gpu * gpuFactor;

/** A node of the association tree as the algorithms walk it. */
interface Node {
  /** Bank name, or the association key of a user. */
  id: string;
  user?: User;
  shares: number;
  usage: number;
  kids: Node[];
}

/** Builds the tree from the root bank, each bank's usage the sum of its subtree's. */
function build(t: Associations, usageOf: (key: string) => number): Node | undefined {
  const root = Object.values(t.banks).find((b) => b.parent === null);
  if (root === undefined) return undefined;
  const kidsOf = new Map<string, Node[]>();
  const push = (bank: string, n: Node) => (kidsOf.get(bank) ?? kidsOf.set(bank, []).get(bank)!).push(n);
  for (const u of Object.values(t.users)) {
    const key = assocKey(u.uid, u.bank);
    push(u.bank, { id: key, user: u, shares: u.shares, usage: usageOf(key), kids: [] });
  }
  const make = (name: string, shares: number): Node => {
    const banks = Object.values(t.banks).filter((b) => b.parent === name).map((b) => make(b.name, b.shares));
    const kids = [...(kidsOf.get(name) ?? []), ...banks];
    return { id: name, shares, usage: kids.reduce((s, k) => s + k.usage, 0), kids };
  };
  return make(root.name, root.shares);
}

/** Level fair share of each sibling: normalized shares over normalized usage (∞ for none). */
function levelFairShare(kids: readonly Node[]): number[] {
  const s = kids.reduce((a, k) => a + k.shares, 0);
  const u = kids.reduce((a, k) => a + k.usage, 0);
  return kids.map((k) => (u === 0 || k.usage === 0 ? Infinity : k.shares / s / (k.usage / u)));
}

/** Sort key among tied siblings: users (by uid) before banks (by name). */
const tieOrder = (a: Node, b: Node): number =>
  a.user && b.user ? a.user.uid - b.user.uid : a.user ? -1 : b.user ? 1 : a.id.localeCompare(b.id);

/**
 * Fair Tree: a depth-first walk taking siblings by level fair share, highest first. Users
 * are ranked in the order reached; users tied at one level share a rank. The factor is
 * rank / N, N the number of users: the first user gets 1, the last 1/N or more.
 */
export function fairTree(t: Associations, usageOf: (key: string) => number): Map<string, number> {
  const groups: string[][] = [];
  const visit = (n: Node): void => {
    const lf = levelFairShare(n.kids);
    const order = n.kids.map((k, i) => ({ k, lf: lf[i]! })).sort((a, b) => b.lf - a.lf || tieOrder(a.k, b.k));
    for (let i = 0; i < order.length; ) {
      let j = i;
      while (j < order.length && order[j]!.lf === order[i]!.lf) j++;
      const tied = order.slice(i, j).map((x) => x.k);
      const users = tied.filter((k) => k.user !== undefined).map((k) => k.id);
      if (users.length) groups.push(users);
      for (const k of tied) if (k.user === undefined) visit(k);
      i = j;
    }
  };
  const root = build(t, usageOf);
  if (root !== undefined) visit(root);
  const n = groups.reduce((a, g) => a + g.length, 0);
  const out = new Map<string, number>();
  let rank = n;
  for (const g of groups) {
    for (const key of g) out.set(key, rank / n);
    rank -= g.length;
  }
  return out;
}

/**
 * Classic: 2^(-U/S), S the association's share of the machine (the product of its and its
 * banks' shares among their siblings), U its fraction of all usage.
 */
export function classic(t: Associations, usageOf: (key: string) => number): Map<string, number> {
  const out = new Map<string, number>();
  const root = build(t, usageOf);
  if (root === undefined) return out;
  const total = root.usage;
  const walk = (n: Node, share: number): void => {
    const sum = n.kids.reduce((a, k) => a + k.shares, 0);
    for (const k of n.kids) {
      const s = (share * k.shares) / sum;
      if (k.user === undefined) walk(k, s);
      else out.set(k.id, Math.pow(2, -(total === 0 ? 0 : k.usage / total) / s));
    }
  };
  walk(root, 1);
  return out;
}

/** Normalized shares (fraction of the machine) of every bank and association, for `show`. */
export function normalizedShares(t: Associations): Map<string, number> {
  const out = new Map<string, number>();
  const root = build(t, () => 0);
  if (root === undefined) return out;
  out.set(root.id, 1);
  const walk = (n: Node, share: number): void => {
    const sum = n.kids.reduce((a, k) => a + k.shares, 0);
    for (const k of n.kids) {
      out.set(k.id, (share * k.shares) / sum);
      walk(k, (share * k.shares) / sum);
    }
  };
  walk(root, 1);
  return out;
}

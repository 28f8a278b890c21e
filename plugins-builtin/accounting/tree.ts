/**
 * The association table: banks in one tree (a single root), users in banks with shares,
 * and limits per bank and per user association. Pure data and checks; index.ts persists
 * it in the plugin's store. Every error names the field and the value at fault, and a
 * failed change leaves the table as it was (each mutation checks before it writes).
 */

/** Limits of a bank or an association; absent: unlimited. */
export interface Limits {
  /** Jobs past DEPEND (pending in PRIORITY/SCHED, running, cleaning up). */
  maxRunningJobs?: number;
  /** Jobs from submission to INACTIVE. */
  maxActiveJobs?: number;
  /** Cores of the jobs counted by maxRunningJobs. */
  maxCores?: number;
}

export const LIMIT_KEYS = ["maxRunningJobs", "maxActiveJobs", "maxCores"] as const;
/** The names the CLI and TOML use for the limits. */
export const LIMIT_NAMES: Record<(typeof LIMIT_KEYS)[number], string> = {
  maxRunningJobs: "max-running-jobs",
  maxActiveJobs: "max-active-jobs",
  maxCores: "max-cores",
};

export interface Bank {
  name: string;
  parent: string | null;
  shares: number;
  limits: Limits;
}

/** A user's association with one bank. */
export interface User {
  uid: number;
  bank: string;
  shares: number;
  limits: Limits;
  /** The bank the user's jobs go to when they name none. */
  default: boolean;
}

export interface Associations {
  banks: Record<string, Bank>;
  /** Keyed by assocKey(uid, bank). */
  users: Record<string, User>;
}

/** The key of a user association (also its usage key). */
export const assocKey = (uid: number, bank: string): string => `${uid}@${bank}`;

export const emptyTable = (): Associations => ({ banks: {}, users: {} });

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** Checks a bank name; throws naming `field`. */
export function checkName(v: unknown, field: string): string {
  if (typeof v !== "string" || !NAME.test(v)) {
    throw new Error(`${field}: must be a name of letters, digits, '_', '.', '-', got ${JSON.stringify(v)}`);
  }
  return v;
}

/** Checks shares: an integer >= 1. */
export function checkShares(v: unknown, field = "shares"): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v <= 0) {
    throw new Error(`${field}: must be an integer > 0, got ${JSON.stringify(v)}`);
  }
  return v;
}

/** Checks a uid: an integer >= 0. */
export function checkUid(v: unknown, field = "uid"): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
    throw new Error(`${field}: must be a uid (an integer >= 0), got ${JSON.stringify(v)}`);
  }
  return v;
}

/**
 * Merges limit changes (CLI/TOML names) into `base`: a number >= 0 sets a limit, `null` or
 * -1 clears it; throws naming the field.
 */
export function mergeLimits(base: Limits, raw: Record<string, unknown>, where: string): Limits {
  const out: Limits = { ...base };
  for (const key of LIMIT_KEYS) {
    const v = raw[LIMIT_NAMES[key]];
    if (v === undefined) continue;
    if (v === null || v === -1) delete out[key];
    else if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) out[key] = v;
    else throw new Error(`${where}${LIMIT_NAMES[key]}: must be an integer >= 0 (or -1 for no limit), got ${JSON.stringify(v)}`);
  }
  return out;
}

/** The bank, or an error naming the field and the known banks. */
export function bankOf(t: Associations, name: string, field = "bank"): Bank {
  const b = t.banks[name];
  if (b === undefined) {
    const known = Object.keys(t.banks);
    throw new Error(`${field}: unknown bank "${name}"${known.length ? ` (banks: ${known.join(", ")})` : " (no banks yet: add-bank first)"}`);
  }
  return b;
}

/** The user's association with `bank`, or an error naming both. */
export function userOf(t: Associations, uid: number, bank: string): User {
  const u = t.users[assocKey(uid, bank)];
  if (u === undefined) {
    const banks = userBanks(t, uid).map((x) => x.bank);
    throw new Error(`user ${uid}: no association with bank "${bank}"${banks.length ? ` (banks: ${banks.join(", ")})` : " (unknown user)"}`);
  }
  return u;
}

/** Every association of a user, default first. */
export function userBanks(t: Associations, uid: number): User[] {
  return Object.values(t.users)
    .filter((u) => u.uid === uid)
    .sort((a, b) => Number(b.default) - Number(a.default) || a.bank.localeCompare(b.bank));
}

/** The root bank's name, if any. */
export const rootOf = (t: Associations): string | undefined => Object.values(t.banks).find((b) => b.parent === null)?.name;

/** The bank and its ancestors, nearest first. */
export function ancestry(t: Associations, bank: string): string[] {
  const out: string[] = [];
  for (let b: string | null = bank; b !== null && out.length <= Object.keys(t.banks).length; b = t.banks[b]?.parent ?? null) out.push(b);
  return out;
}

/** Adds a bank; the first has no parent (the root), every other one names an existing parent. */
export function addBank(t: Associations, name: unknown, parent: unknown, shares: unknown, limits: Record<string, unknown> = {}): Bank {
  const n = checkName(name, "bank");
  if (t.banks[n] !== undefined) throw new Error(`bank: "${n}" already exists`);
  const root = rootOf(t);
  let p: string | null = null;
  if (parent === undefined || parent === null) {
    if (root !== undefined) throw new Error(`parent: required (the root bank is "${root}")`);
  } else p = bankOf(t, checkName(parent, "parent"), "parent").name;
  const bank: Bank = { name: n, parent: p, shares: checkShares(shares ?? 1), limits: mergeLimits({}, limits, "") };
  t.banks[n] = bank;
  return bank;
}

/** Changes a bank's shares, limits or parent; a new parent may not be the bank or below it. */
export function editBank(t: Associations, name: string, change: { shares?: unknown; parent?: unknown; limits?: Record<string, unknown> }): Bank {
  const b = bankOf(t, name);
  const shares = change.shares === undefined ? b.shares : checkShares(change.shares);
  const limits = mergeLimits(b.limits, change.limits ?? {}, "");
  let parent = b.parent;
  if (change.parent !== undefined) {
    if (b.parent === null) throw new Error(`parent: "${name}" is the root bank and cannot move`);
    parent = bankOf(t, checkName(change.parent, "parent"), "parent").name;
    if (ancestry(t, parent).includes(name)) throw new Error(`parent: moving "${name}" under "${parent}" would make a cycle`);
  }
  Object.assign(b, { shares, limits, parent });
  return b;
}

/** Deletes a bank with no sub-banks and no users. */
export function deleteBank(t: Associations, name: string): void {
  bankOf(t, name);
  const kids = Object.values(t.banks).filter((b) => b.parent === name).map((b) => b.name);
  if (kids.length) throw new Error(`bank: "${name}" has sub-banks (${kids.join(", ")}): delete or move them first`);
  const users = Object.values(t.users).filter((u) => u.bank === name).map((u) => u.uid);
  if (users.length) throw new Error(`bank: "${name}" has users (${users.join(", ")}): delete them first`);
  delete t.banks[name];
}

/** Adds a user to a bank; the first association of a user is its default. */
export function addUser(t: Associations, uid: unknown, bank: unknown, shares: unknown, limits: Record<string, unknown> = {}): User {
  const id = checkUid(uid);
  const b = bankOf(t, checkName(bank, "bank")).name;
  if (t.users[assocKey(id, b)] !== undefined) throw new Error(`user ${id}: already in bank "${b}"`);
  const u: User = { uid: id, bank: b, shares: checkShares(shares ?? 1), limits: mergeLimits({}, limits, ""), default: userBanks(t, id).length === 0 };
  t.users[assocKey(id, b)] = u;
  return u;
}

/** Changes a user association's shares, limits, or makes it the user's default. */
export function editUser(t: Associations, uid: number, bank: string, change: { shares?: unknown; limits?: Record<string, unknown>; default?: unknown }): User {
  const u = userOf(t, uid, bank);
  const shares = change.shares === undefined ? u.shares : checkShares(change.shares);
  const limits = mergeLimits(u.limits, change.limits ?? {}, "");
  if (change.default !== undefined && change.default !== true) throw new Error(`default: only true may be set (make another bank the default instead), got ${JSON.stringify(change.default)}`);
  Object.assign(u, { shares, limits });
  if (change.default === true) for (const x of userBanks(t, uid)) x.default = x.bank === bank;
  return u;
}

/** Deletes a user association; the user's next one becomes its default. */
export function deleteUser(t: Associations, uid: number, bank: string): void {
  const u = userOf(t, uid, bank);
  delete t.users[assocKey(uid, bank)];
  const next = userBanks(t, uid)[0];
  if (u.default && next !== undefined) next.default = true;
}

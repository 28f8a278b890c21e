/**
 * The `accounting.*` services `jobtap account` calls: changes are owner-only (the host
 * refuses anyone else before the handler runs), `show`, `usage` and `export` are open to
 * every user. A change is checked in full before anything is written, then saved, the
 * factors recomputed and held jobs re-checked against the new limits.
 */
import { billed, normalizedShares } from "./fairshare.js";
import type { Accounting } from "./index.js";
import {
  addBank,
  addUser,
  ancestry,
  assocKey,
  bankOf,
  deleteBank,
  deleteUser,
  editBank,
  editUser,
  checkName,
  checkUid,
  rootOf,
  userBanks,
  type Associations,
  type Limits,
} from "./tree.js";

type Req = Record<string, unknown>;

const req = (payload: unknown): Req => (typeof payload === "object" && payload !== null && !Array.isArray(payload) ? (payload as Req) : {});
const limitsOf = (r: Req): Req => req(r.limits);

/** The user's named bank, or the default one. */
function bankFor(a: Accounting, uid: number, bank: unknown): string {
  if (bank !== undefined) return checkName(bank, "bank");
  const own = userBanks(a.table, uid)[0];
  if (own === undefined) throw new Error(`uid: user ${uid} has no association`);
  return own.bank;
}

/** Registers every service of the plugin. */
export function registerServices(a: Accounting): void {
  const { p } = a;
  const change = (method: string, fn: (r: Req) => { moved?: boolean } | void) =>
    p.serviceRegister(method, (payload) => {
      const out = fn(req(payload));
      a.saveTable();
      if (out?.moved) a.ledger.rebuild(a.table, a.jobs.values());
      a.recompute();
      a.releaseHeld();
      return {};
    });
  change("add-bank", (r) => void addBank(a.table, r.name, r.parent, r.shares, limitsOf(r)));
  change("edit-bank", (r) => {
    const name = checkName(r.name, "name");
    bankOf(a.table, name, "name");
    if (r.parent !== undefined) mayMove(a, name);
    editBank(a.table, name, { shares: r.shares, parent: r.parent, limits: limitsOf(r) });
    return { moved: r.parent !== undefined };
  });
  change("delete-bank", (r) => deleteBank(a.table, checkName(r.name, "name")));
  change("add-user", (r) => void addUser(a.table, r.uid, r.bank, r.shares, limitsOf(r)));
  change("edit-user", (r) => {
    const uid = checkUid(r.uid);
    editUser(a.table, uid, bankFor(a, uid, r.bank), { shares: r.shares, limits: limitsOf(r), default: r.default });
  });
  change("delete-user", (r) => {
    const uid = checkUid(r.uid);
    const bank = bankFor(a, uid, r.bank);
    const active = a.ledger.of(uid, bank).active;
    if (active > 0) throw new Error(`uid: user ${uid} has ${active} active jobs in bank "${bank}"; cancel them or wait before deleting`);
    deleteUser(a.table, uid, bank);
  });
  change("import", (r) => importTable(a, r));
  p.serviceRegister("recompute", () => {
    a.recompute();
    return {};
  });
  p.serviceRegister("show", () => ({ rows: showRows(a), algorithm: a.cfg.algorithm }), { guests: true });
  p.serviceRegister("usage", (payload) => usageOf(a, checkUid(req(payload).uid)), { guests: true });
  p.serviceRegister("export", () => exportTable(a.table), { guests: true });
}

/** Refuses to move a bank with active jobs: their counts are charged along its old path. */
function mayMove(a: Accounting, name: string): void {
  const busy = a.ledger.of(undefined, name).active;
  if (busy > 0) throw new Error(`parent: bank "${name}" has ${busy} active jobs; a bank moves only when it has none`);
}

/** The tree depth-first, banks then their users, as `show` prints it (sshare -l). */
function showRows(a: Accounting): Req[] {
  const t = a.table;
  const norm = normalizedShares(t);
  const rows: Req[] = [];
  const use = (key: string) => billed(a.usageNow(key), a.cfg.gpuFactor);
  const bankUsage = (name: string): number =>
    Object.values(t.users).filter((u) => ancestry(t, u.bank).includes(name)).reduce((s, u) => s + use(assocKey(u.uid, u.bank)), 0);
  const walk = (name: string, depth: number): void => {
    const b = t.banks[name]!;
    rows.push({ type: "bank", name, parent: b.parent, depth, shares: b.shares, normShares: norm.get(name) ?? 0, usage: bankUsage(name), ...a.ledger.of(undefined, name), limits: b.limits });
    for (const u of Object.values(t.users).filter((x) => x.bank === name).sort((x, y) => x.uid - y.uid)) {
      const key = assocKey(u.uid, u.bank);
      rows.push({ type: "user", uid: u.uid, bank: name, depth: depth + 1, shares: u.shares, normShares: norm.get(key) ?? 0, usage: use(key), fairShare: a.fs.get(key) ?? 0, default: u.default, ...a.ledger.of(u.uid, name), limits: u.limits });
    }
    for (const k of Object.values(t.banks).filter((x) => x.parent === name).sort((x, y) => x.name.localeCompare(y.name))) walk(k.name, depth + 1);
  };
  const root = rootOf(t);
  if (root !== undefined) walk(root, 0);
  return rows;
}

/** One user's associations: decayed usage, factor, counts and limits. */
function usageOf(a: Accounting, uid: number): Req {
  const banks = userBanks(a.table, uid);
  if (banks.length === 0) throw new Error(`uid: user ${uid} has no association`);
  return {
    uid,
    associations: banks.map((u) => {
      const key = assocKey(uid, u.bank);
      const now = a.usageNow(key);
      return { bank: u.bank, default: u.default, shares: u.shares, coreSeconds: now.core, gpuSeconds: now.gpu, fairShare: a.fs.get(key) ?? 0, ...a.ledger.of(uid, u.bank), limits: u.limits };
    }),
  };
}

/** The associations as plain lists (banks parents first), for export and import. */
function exportTable(t: Associations): Req {
  const banks: Req[] = [];
  const walk = (name: string): void => {
    const b = t.banks[name]!;
    banks.push({ name, ...(b.parent === null ? {} : { parent: b.parent }), shares: b.shares, ...limitNames(b.limits) });
    for (const k of Object.values(t.banks).filter((x) => x.parent === name)) walk(k.name);
  };
  const root = rootOf(t);
  if (root !== undefined) walk(root);
  const users = Object.values(t.users).map((u) => ({ uid: u.uid, bank: u.bank, shares: u.shares, ...(u.default ? { default: true } : {}), ...limitNames(u.limits) }));
  return { banks, users };
}

function limitNames(l: Limits): Req {
  const out: Req = {};
  if (l.maxRunningJobs !== undefined) out["max-running-jobs"] = l.maxRunningJobs;
  if (l.maxActiveJobs !== undefined) out["max-active-jobs"] = l.maxActiveJobs;
  if (l.maxCores !== undefined) out["max-cores"] = l.maxCores;
  return out;
}

/**
 * Adds the banks and users of an export that are not there yet and edits those that are,
 * on a copy: the first bad entry (named by its place in the list) changes nothing.
 */
function importTable(a: Accounting, r: Req): void {
  const t = structuredClone(a.table);
  const list = (k: string): Req[] => {
    const v = r[k] ?? [];
    if (!Array.isArray(v)) throw new Error(`${k}: must be a list`);
    return v.map(req);
  };
  list("banks").forEach((b, i) => at(`banks[${i}]`, () => {
    const name = checkName(b.name, "name");
    if (t.banks[name] === undefined) addBank(t, name, b.parent, b.shares, b);
    else {
      const moves = b.parent !== undefined && b.parent !== t.banks[name]!.parent;
      if (moves && a.table.banks[name] !== undefined) mayMove(a, name);
      editBank(t, name, { shares: b.shares, limits: b, ...(moves ? { parent: b.parent } : {}) });
    }
  }));
  list("users").forEach((u, i) => at(`users[${i}]`, () => {
    const uid = checkUid(u.uid);
    const bank = checkName(u.bank, "bank");
    if (t.users[assocKey(uid, bank)] === undefined) addUser(t, uid, bank, u.shares, u);
    editUser(t, uid, bank, { shares: u.shares, limits: u, ...(u.default === true ? { default: true } : {}) });
  }));
  a.table = t;
  a.ledger.rebuild(t, a.jobs.values());
}

function at(where: string, fn: () => void): void {
  try {
    fn();
  } catch (e) {
    throw new Error(`${where}: ${(e as Error).message}`);
  }
}

/**
 * accounting: fair share with banks, users, decayed usage and limits (docs/accounting.md),
 * written only against `jobtap/plugin`. Load it with `[job-manager] plugins =
 * [{ load = "accounting" }]`; configure it in `[accounting]`.
 *
 * - Admission (job.validate): the job's association (its `attributes.system.bank` or the
 *   user's default bank) must exist, or `[accounting].default-bank` takes the user in;
 *   a max-active-jobs limit rejects with the limit and the count.
 * - job.state.depend: a job over a max-running-jobs or max-cores limit is held with a
 *   named dependency; held jobs are released, oldest first, as jobs go INACTIVE.
 * - Usage: core- and GPU-seconds of each job that ran (up to the event that ended it),
 *   charged as it goes INACTIVE, decayed with a half-life on the manager's clock and kept
 *   in the plugin's store (one key per association).
 * - Priority: the multi-factor formula of priority.ts; factors are recomputed every
 *   `recompute-period` and on demand, then every pending job is reprioritized.
 */
import type { JobArgs, JobId, PluginContext } from "jobtap/plugin";
import { jobSizeCounts } from "../common/jobspec.js";
import { checkWith, ConfigError } from "../common/config.js";
import { readAccountingConfig, type AccountingConfig } from "./config.js";
import { billed, classic, decayed, fairTree, type Usage } from "./fairshare.js";
import { Ledger, type JobRec } from "./limits.js";
import { bankAttr, explain, factorsOf, priorityOf } from "./priority.js";
import { registerServices } from "./services.js";
import { accountingReasons } from "./explain.js";
import { addUser, assocKey, emptyTable, userBanks, type Associations } from "./tree.js";

const TABLE_KEY = "associations";
const USAGE_PREFIX = "usage/";
const FLUSH_MS = 1000;

/** What conf.update would refuse in `[accounting]`. */
export const checkConfig = checkWith(readAccountingConfig);

/** The plugin's state, shared with services.ts. */
export interface Accounting {
  p: PluginContext;
  cfg: AccountingConfig;
  table: Associations;
  usage: Map<string, Usage>;
  /** Associations charged since the last write to the store. */
  dirty: Set<string>;
  jobs: Map<JobId, JobRec>;
  /** The jobs held by a limit, oldest first. */
  held: Map<JobId, JobRec>;
  /** Each user's default bank. */
  defaults: Map<number, string>;
  ledger: Ledger;
  /** Fair-share factor by association key, and of each user's default association. */
  fs: Map<string, number>;
  fsDefault: Map<number, number>;
  /** Cores and GPUs by jobspec: jobs submitted alike share one frozen jobspec object. */
  sizes: WeakMap<object, { ncores: number; ngpus: number }>;
  saveTable(): void;
  recompute(): void;
  releaseHeld(): void;
  usageNow(key: string): Usage;
}

/** Registers admission, limits, usage charging, priority and the `account` services. */
export default function accounting(p: PluginContext): void {
  const a: Accounting = {
    p,
    cfg: readAccountingConfig({}),
    table: emptyTable(),
    usage: new Map(),
    dirty: new Set(),
    jobs: new Map(),
    held: new Map(),
    defaults: new Map(),
    ledger: new Ledger(),
    fs: new Map(),
    fsDefault: new Map(),
    sizes: new WeakMap(),
    saveTable: () => {
      a.ledger.tableChanged();
      p.state.set(TABLE_KEY, a.table);
    },
    usageNow: (key) => decayed(a.usage.get(key), p.clock.now(), a.cfg.halfLifeMs),
    recompute() {
      const usageOf = (key: string) => billed(a.usageNow(key), a.cfg.gpuFactor);
      a.fs = (a.cfg.algorithm === "classic" ? classic : fairTree)(a.table, usageOf);
      a.fsDefault = new Map();
      a.defaults = new Map();
      for (const u of Object.values(a.table.users)) {
        if (!u.default) continue;
        a.fsDefault.set(u.uid, a.fs.get(assocKey(u.uid, u.bank)) ?? 0);
        a.defaults.set(u.uid, u.bank);
      }
      a.ledger.noteLimits(a.table);
      p.reprioritizeAll();
    },
    releaseHeld() {
      for (const r of a.held.values()) {
        if (r.held === undefined || a.ledger.overRunning(a.table, r) !== undefined) continue;
        p.dependencyRemove(r.id, r.held);
        r.held = undefined;
        a.held.delete(r.id);
        a.ledger.run(a.table, r);
      }
    },
  };
  let loaded = false;
  let timer: unknown;
  const schedule = () => {
    if (timer !== undefined) p.clock.clearTimeout(timer as never);
    timer = p.clock.setTimeout(() => {
      timer = undefined;
      a.recompute();
      schedule();
    }, a.cfg.periodMs);
  };
  p.onRemove(() => {
    if (timer !== undefined) p.clock.clearTimeout(timer as never);
    try {
      flush(a);
    } catch (e) {
      p.log.warn(`usage not saved at removal: ${(e as Error).message}`);
    }
  });

  p.on("conf.update", async ({ conf }) => {
    try {
      a.cfg = readAccountingConfig(conf);
    } catch (e) {
      if (e instanceof ConfigError) return p.reject(e.message);
      throw e;
    }
    if (!loaded) await load(a);
    loaded = true;
    a.recompute();
    schedule();
    return undefined;
  });

  p.on("job.validate", (job) => {
    if (a.jobs.has(job.id)) return undefined; // an update re-validating an accepted job
    const res = resolve(a, job);
    if ("error" in res) return p.reject(res.error);
    const over = a.ledger.overActive(a.table, job.userid, res.bank);
    return over === undefined ? undefined : p.reject(over);
  });

  p.on("job.new", (job) => {
    const res = resolve(a, job);
    if ("error" in res) return p.log.warn(`job ${String(job.id)}: not accounted: ${res.error}`);
    const bank = res.bank;
    if (a.table.users[assocKey(job.userid, bank)] === undefined) {
      addUser(a.table, job.userid, bank, 1); // taken in by [accounting].default-bank
      a.saveTable();
      a.recompute();
    }
    const { ncores, ngpus } = sizeOf(a, job);
    const r: JobRec = { id: job.id, uid: job.userid, bank, cores: ncores, gpus: ngpus, running: false };
    a.jobs.set(job.id, r);
    a.ledger.activate(a.table, r);
    replayed(a, job, r);
    return undefined;
  });

  p.on("job.state.depend", (job) => {
    const r = a.jobs.get(job.id);
    if (r === undefined || r.running || r.held !== undefined) return;
    const over = a.ledger.overRunning(a.table, r);
    if (over === undefined) return a.ledger.run(a.table, r);
    r.held = over;
    a.held.set(job.id, r);
    p.dependencyAdd(job.id, over);
  });

  // Charged as the job goes inactive, up to the event that ended it: one callback per job
  // fewer than charging at CLEANUP, for the same amount.
  p.on("job.state.inactive", (job) => {
    const r = a.jobs.get(job.id);
    if (r === undefined) return;
    charge(a, job, r);
    a.jobs.delete(job.id);
    a.held.delete(job.id);
    a.ledger.retire(a.table, r);
    a.releaseHeld();
  });

  const priority = (job: JobArgs) => ({ priority: priorityOf(a.cfg, fairShareOf(a, job), job, p.clock.now()) });
  p.on("job.state.priority", priority);
  p.on("job.priority.get", priority);

  // job why: a limit holding the job, and its priority factor by factor (explain.ts).
  p.on("job.explain", (job) => {
    const r = a.jobs.get(job.id);
    if (r === undefined || job.state === "INACTIVE" || job.state === "RUN" || job.state === "CLEANUP") return undefined;
    return { reasons: accountingReasons(a.cfg, job, r, fairShareOf(a, job), a.ledger.of(r.uid, r.bank), p.clock.now()) };
  });

  p.on("plugin.query", () => {
    const now = p.clock.now();
    const jobs: Record<string, unknown> = {};
    for (const id of [...p.jobIds("DEPEND"), ...p.jobIds("PRIORITY"), ...p.jobIds("SCHED")]) {
      const r = a.jobs.get(id);
      const job = p.lookup(id);
      if (r === undefined || job === undefined || job instanceof Promise) continue;
      jobs[String(id)] = { uid: r.uid, bank: r.bank, ...explain(a.cfg.weights, factorsOf(a.cfg, fairShareOf(a, job), job, now)), ...(r.held ? { held: r.held } : {}) };
    }
    return { algorithm: a.cfg.algorithm, weights: a.cfg.weights, jobs };
  });

  registerServices(a);
}

/** The fair-share factor of a job's association (0 when it has none yet). */
function fairShareOf(a: Accounting, job: JobArgs): number {
  const bank = bankAttr(job);
  return (typeof bank === "string" ? a.fs.get(assocKey(job.userid, bank)) : a.fsDefault.get(job.userid)) ?? 0;
}

/** The job's cores and GPUs, counted once per jobspec object. */
function sizeOf(a: Accounting, job: JobArgs): { ncores: number; ngpus: number } {
  let size = a.sizes.get(job.jobspec);
  if (size === undefined) a.sizes.set(job.jobspec, (size = jobSizeCounts(job.jobspec)));
  return size;
}

/** The job's bank, or why it has none: unknown bank, no association, no default bank. */
function resolve(a: Accounting, job: JobArgs): { bank: string } | { error: string } {
  const bank = bankAttr(job);
  const uid = job.userid;
  if (bank !== undefined) {
    if (typeof bank !== "string") return { error: `attributes.system.bank: must be a bank name, got ${JSON.stringify(bank)}` };
    if (a.table.banks[bank] === undefined) return { error: `attributes.system.bank: unknown bank "${bank}"` };
    if (a.table.users[assocKey(uid, bank)] !== undefined || bank === a.cfg.defaultBank) return { bank };
    const mine = userBanks(a.table, uid).map((u) => u.bank);
    return { error: `attributes.system.bank: user ${uid} has no association with bank "${bank}"${mine.length ? ` (banks: ${mine.join(", ")})` : ""}` };
  }
  const own = a.defaults.get(uid);
  if (own !== undefined) return { bank: own };
  const dflt = a.cfg.defaultBank;
  if (dflt === undefined) return { error: `user ${uid} has no accounting association (the owner adds one with: jobtap account add-user)` };
  if (a.table.banks[dflt] === undefined) return { error: `[accounting].default-bank: unknown bank "${dflt}"` };
  return { bank: dflt };
}

/** Rebuilds a replayed job's counts after a restart or a load at runtime. */
function replayed(a: Accounting, job: JobArgs, r: JobRec): void {
  if (job.state === "NEW") return;
  const hold = job.dependencies.find((d) => d.startsWith("accounting: "));
  if (hold !== undefined) {
    r.held = hold;
    a.held.set(r.id, r);
  } else a.ledger.run(a.table, r); // past our job.state.depend check (a DEPEND job may wait on others)
}

/**
 * Charges a job that ran: core- and GPU-seconds from the start in its R (which also holds
 * across a restart) to the event that moved it to CLEANUP (its `end_event`; now if it has
 * none). The usage is written to the store by `flush`.
 */
function charge(a: Accounting, job: JobArgs, r: JobRec): void {
  const start = (job.R as { execution?: { starttime?: unknown } } | undefined)?.execution?.starttime;
  if (typeof start !== "number") return;
  const end = job.end_event?.timestamp ?? a.p.clock.now() / 1000;
  const secs = Math.max(0, end - start);
  const key = assocKey(r.uid, r.bank);
  const u = a.usageNow(key);
  u.core += secs * r.cores;
  u.gpu += secs * r.gpus;
  a.usage.set(key, u);
  // Written within FLUSH_MS rather than per job: one store write per job cost the
  // throughput bench a third of its rate. A crash loses at most FLUSH_MS of charges.
  if (a.dirty.size === 0) a.p.clock.setTimeout(() => flush(a), FLUSH_MS);
  a.dirty.add(key);
}

/** Writes the usage charged since the last flush, one store key per association. */
function flush(a: Accounting): void {
  for (const key of a.dirty) a.p.state.set(USAGE_PREFIX + key, a.usage.get(key));
  a.dirty.clear();
}

/** Reads the association table and every association's usage from the store. */
async function load(a: Accounting): Promise<void> {
  const t = await a.p.state.get<Associations>(TABLE_KEY);
  if (t !== undefined) a.table = t;
  for (const k of await a.p.state.keys()) {
    if (!k.startsWith(USAGE_PREFIX)) continue;
    const u = await a.p.state.get<Usage>(k);
    if (u !== undefined) a.usage.set(k.slice(USAGE_PREFIX.length), u);
  }
}


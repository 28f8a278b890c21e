/**
 * What the host keeps per loaded plugin: identity, handlers with their compiled globs,
 * per-job aux data with destructors, services and the replay sort order.
 */
import { minimatch } from "minimatch";
import { ErrorCode, JobtapError } from "../errors.js";
import type { JobId } from "../manager/base/ids.js";
import type { TimerHandle } from "../manager/base/clock.js";
import type { Isolation } from "./isolate.js";
import { internalName, ownListName } from "./loader.js";
import type { AnyHandler } from "./topics.js";
import { isThenable } from "../manager/base/steps.js";

/** Name a plugin is listed, matched and removed by (`.priority-default`, `fairshare.js`). */
export type PluginName = string & { readonly __brand: "PluginName" };

/** The one constructor of a PluginName: rejects empty names and names with a `/`. */
export function pluginName(s: string): PluginName {
  if (s.length === 0 || s.includes("/")) {
    throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `invalid plugin name "${s}"`);
  }
  return s as PluginName;
}

/** Order of the job.create/job.new replay when a plugin is loaded at runtime (spec §5). */
export type LoadSortOrder = "none" | "state" | "-state";

/** A registered `p.on(glob, handler)`. */
export interface HandlerEntry {
  glob: string;
  /** Compiled once at registration. */
  matches: (topic: string) => boolean;
  fn: AnyHandler;
  /** The handler cannot read its CallInfo (stack.ts, `takesOnlyFirstArg`). */
  firstArgOnly?: boolean;
}

/** One aux value with its optional destructor. */
export interface AuxEntry {
  value: unknown;
  destructor: ((value: unknown) => void) | undefined;
}

/** Who may call a registered service (Flux: owner only unless opened to guests). */
export interface ServiceEntry {
  method: string;
  guests: boolean;
  handler: (payload: unknown, cred: ServiceCred) => unknown;
}

/** The credentials of a service request. */
export interface ServiceCred {
  userid: number;
  owner: boolean;
}

/** The host's record of one loaded plugin. */
export interface PluginRecord {
  name: PluginName;
  /** Service namespace: the plugin's own name, or the basename cut at its first `.`. */
  internalName: string;
  /** Absolute module path, "builtin", "shipped" (alloc-bypass, perilog) or "inline". */
  path: string;
  builtin: boolean;
  conf: Record<string, unknown>;
  deadlineMs: number;
  handlers: HandlerEntry[];
  aux: Map<JobId, Map<string, AuxEntry>>;
  services: Map<string, ServiceEntry>;
  sortOrder: LoadSortOrder;
  /** Run at removal; a promise one returns is awaited (bounded) by the manager's close. */
  onRemove: Array<() => unknown>;
  /** Timers the plugin armed through `p.clock` and that have not fired: cleared at unload. */
  timers: Set<TimerHandle>;
  /** True while setup runs: `on`, `serviceRegister` and `setLoadSortOrder` are allowed. */
  inSetup: boolean;
  removed: boolean;
  /** Set for a plugin running in a worker thread (isolate.ts). */
  isolation?: Isolation;
}

const GLOB_CHARS = /[*?[]/;

/** True if `s` contains a glob metacharacter (`*`, `?`, `[`). */
export function isGlob(s: string): boolean {
  return GLOB_CHARS.test(s);
}

/**
 * Compiles a topic glob once. Flux matches topics with fnmatch and no flags, so `*` also
 * matches `.`; minimatch gives the same result here because topics contain no `/`.
 */
export function compileTopicGlob(glob: string): (topic: string) => boolean {
  if (!isGlob(glob)) return (topic) => topic === glob;
  const re = minimatch.makeRe(glob, { nobrace: true, noext: true, nonegate: true, dot: true });
  if (re === false) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `invalid topic glob "${glob}"`);
  return (topic) => re.test(topic);
}

/**
 * Matches plugin names for `remove`: exact unless the pattern has glob characters, then
 * fnmatch with the leading-period rule, so `*` never matches `.priority-default`.
 */
export function compileNameGlob(pattern: string): (name: string) => boolean {
  if (!isGlob(pattern)) return (name) => name === pattern;
  return (name) => minimatch(name, pattern, { nobrace: true, noext: true, nonegate: true });
}

/** Runs one aux destructor; a throwing destructor is reported, never propagated. */
export function destroyAux(entry: AuxEntry, report: (e: unknown) => void): void {
  if (entry.destructor === undefined) return;
  try {
    entry.destructor(entry.value);
  } catch (e) {
    report(e);
  }
}

/** Destroys every aux value a plugin holds for one job (job gone or plugin removed). */
export function destroyJobAux(
  record: PluginRecord,
  id: JobId,
  report: (e: unknown) => void,
): void {
  const perJob = record.aux.get(id);
  if (perJob === undefined) return;
  record.aux.delete(id);
  for (const entry of perJob.values()) destroyAux(entry, report);
}

/**
 * Runs a removed plugin's onRemove functions in order, each guarded. Returns the promises
 * they returned (work still ending, e.g. hook processes being killed), each already caught
 * and reported, for the manager's close to wait on.
 */
export function runOnRemove(record: PluginRecord, report: (e: unknown) => void): Array<Promise<void>> {
  const ending: Array<Promise<void>> = [];
  for (const fn of record.onRemove) {
    try {
      const r = fn();
      if (isThenable(r)) ending.push(Promise.resolve(r).then(() => undefined, report));
    } catch (e) {
      report(e);
    }
  }
  return ending;
}

/** A fresh record for a plugin being loaded under `listName` (its module's own name `own`). */
export function newRecord(
  listName: string,
  own: string | undefined,
  path: string,
  conf: Record<string, unknown>,
  deadlineMs: number,
): PluginRecord {
  const builtin = path === "builtin";
  return {
    name: pluginName(listName),
    internalName: builtin ? listName.slice(1) : internalName(listName, own),
    path,
    builtin,
    conf,
    deadlineMs,
    handlers: [],
    aux: new Map(),
    services: new Map(),
    sortOrder: "none",
    onRemove: [],
    timers: new Set(),
    inSetup: false,
    removed: false,
  };
}

/** A restart's replay is over only if the new worker is alive: throws its death otherwise. */
export function restartSurvived(iso: Isolation): void {
  if (iso.restartDeath !== undefined) {
    throw new JobtapError(ErrorCode.PLUGIN_CALL, `the worker died during the replay: ${iso.restartDeath.reason}`);
  }
}

/** An isolated plugin is listed by the name its module exports (`{ name, setup }`). */
export function takeOwnName(rec: PluginRecord, listName: string, own: string, path: string): void {
  rec.internalName = internalName(listName, own);
  rec.name = pluginName(ownListName(listName, own, path));
}

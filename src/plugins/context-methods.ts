/**
 * The plugin context's method table: every member a plugin's `p` has, by its path on `p`
 * (`state.get`, `log.info`), with when it may be called, its arguments, whether it returns
 * a value and how it reaches the manager from an isolated plugin's worker thread.
 *
 * In process, context.ts implements each member and checks its phase. For an isolated
 * plugin nothing else is written by hand per method: the worker's proxy (isolate-worker.ts)
 * makes one function per crossing row, the protocol's `ContextMethod` is this table's
 * crossing keys, and the host (isolate.ts) runs each call on the plugin's in-process
 * context at the row's path. So adding a context method is: declare and implement it in
 * context.ts, add its row here. test/plugins/context-methods.test.ts holds both sides to
 * the table.
 */

/**
 * When a member may be called (context.ts enforces it; a worker runs it there):
 * `any`: always (even from `onRemove`); `live`: until the plugin is removed; `setup`:
 * during setup only; `job`: live, on a job the manager knows (the failure names plugin,
 * topic and job); `current`: only for the job one of this plugin's handlers is running for.
 */
export type Phase = "any" | "live" | "setup" | "job" | "current";

/**
 * How a call reaches the manager from a worker: `sync` blocks the worker until the host
 * answers (so a failure throws at the call site, as in process); `async` returns a Promise;
 * `oneway` expects no answer (calls that cannot fail); `local` never leaves the worker
 * (plain values, the plugin's own handlers, timers' and aux values' functions).
 */
export type Crossing = "sync" | "async" | "oneway" | "local";

/**
 * An argument's shape: `id` a job id; `ad` a ClassAd (crosses as its JSON form); `fn` a
 * function (never crosses); the others are plain data.
 */
export type Arg = "id" | "string" | "number" | "boolean" | "object" | "ad" | "fn" | "any";

/**
 * What a member returns: `none`; `value` plain data; `ad` / `ads` / `ad?` a ClassAd, a list
 * of them, or one or undefined (cross as JSON); `args` a job's args, whose jobspec the
 * worker freezes as the host does.
 */
export type Returns = "none" | "value" | "ad" | "ads" | "ad?" | "args";

/** One row of the table. */
export interface MethodRow {
  readonly phase: Phase;
  readonly cross: Crossing;
  readonly args: readonly Arg[];
  readonly returns: Returns;
  /** Worker plumbing, not a member of `p`: the host's session runs it (isolate.ts). */
  readonly session?: true;
}

/** A row, keeping its crossing's literal type (the protocol's types are derived from it). */
const row = <C extends Crossing>(phase: Phase, cross: C, args: readonly Arg[], returns: Returns = "none") =>
  ({ phase, cross, args, returns }) as MethodRow & { readonly cross: C };
const job = (...args: Arg[]) => row("job", "sync", ["id", ...args]);
const log = row("any", "oneway", ["string"]);
const plumbing = <C extends Crossing>(r: MethodRow & { readonly cross: C }) => ({ ...r, session: true as const });

/** Every member of the plugin context, and the worker's plumbing calls. */
export const CONTEXT_METHODS = {
  // Plain values and what shapes the plugin: kept in the worker.
  name: row("any", "local", [], "value"),
  conf: row("any", "local", [], "value"),
  owner: row("any", "local", [], "value"),
  hookUsers: row("any", "local", [], "value"),
  "clock.now": row("any", "local", [], "value"),
  "clock.setTimeout": row("any", "local", ["fn", "number"], "value"),
  "clock.clearTimeout": row("any", "local", ["any"]),
  on: row("setup", "local", ["string", "fn"]),
  setLoadSortOrder: row("setup", "local", ["string"]),
  serviceRegister: row("setup", "local", ["string", "fn", "object"]),
  onRemove: row("live", "local", ["fn"]),
  registerExecutor: row("setup", "local", ["string", "object"]),
  reject: row("any", "local", ["string"], "value"),
  priorityUnavailable: row("any", "local", [], "value"),
  auxGet: row("any", "local", ["id", "string"], "value"),
  auxSet: row("job", "local", ["id", "string", "any", "fn"]),
  auxDelete: row("any", "local", ["id", "string"]),
  // The Flux job API and the reads: run by the host.
  "log.debug": log,
  "log.info": log,
  "log.warn": log,
  "log.error": log,
  "state.get": row("any", "sync", ["string"], "value"),
  "state.set": row("live", "sync", ["string", "any"]),
  "state.delete": row("live", "sync", ["string"]),
  "state.keys": row("any", "sync", [], "value"),
  reprioritizeJob: job("number"),
  reprioritizeAll: row("live", "sync", []),
  setQueueStarted: row("any", "sync", ["string", "boolean"]),
  setDefaultQueue: row("any", "sync", ["string"]),
  dependencyAdd: job("string"),
  dependencyRemove: job("string"),
  raiseException: job("string", "number", "string"),
  postEvent: job("string", "object"),
  subscribe: job(),
  unsubscribe: row("any", "sync", ["id"]),
  prologStart: row("current", "sync", ["id", "string"]),
  prologFinish: job("string", "number"),
  epilogStart: row("current", "sync", ["id", "string"]),
  epilogFinish: job("string", "number"),
  lookup: row("live", "sync", ["id"], "args"),
  jobResult: row("job", "sync", ["id"], "value"),
  eventPosted: row("job", "sync", ["id", "string"], "value"),
  execSaved: row("job", "sync", ["id"], "value"),
  setFlag: job("string"),
  jobspecUpdate: job("object"),
  jobIds: row("live", "sync", ["string"], "value"),
  submit: row("live", "async", ["object", "object"], "value"),
  call: row("live", "async", ["string", "object", "id"], "value"),
  jobAd: row("job", "sync", ["id"], "ad"),
  machineAd: row("live", "sync", [], "ad"),
  slotAds: row("live", "sync", [], "ads"),
  slotAd: row("live", "sync", ["number"], "ad?"),
  publishAd: row("live", "sync", ["string", "ad", "any"]),
  withdrawAd: row("live", "sync", ["string"], "value"),
  // Worker plumbing: a job whose aux values live in the worker (the host checks the job
  // and says when it is gone), and the plugin's timers, which fire on the host's clock.
  auxTrack: plumbing(row("job", "sync", ["id"])),
  timerSet: plumbing(row("live", "oneway", ["number", "number"])),
  timerClear: plumbing(row("live", "oneway", ["number"])),
} as const satisfies Record<string, MethodRow>;

type Table = typeof CONTEXT_METHODS;

/** The names that cross the thread: the protocol's context calls. */
export type ContextMethod = { [K in keyof Table]: Table[K]["cross"] extends "local" ? never : K }[keyof Table];

/** The plumbing calls the host's session answers itself. */
export type SessionMethod = { [K in keyof Table]: Table[K] extends { session: true } ? K : never }[keyof Table];

/** The table's rows, typed for iteration. */
export function contextRows(): Array<[keyof Table, MethodRow]> {
  return Object.entries(CONTEXT_METHODS) as Array<[keyof Table, MethodRow]>;
}

/** The rows that cross the thread (sync, async or oneway). */
export function crossingRows(): Array<[ContextMethod, MethodRow]> {
  return contextRows().filter(([, r]) => r.cross !== "local") as Array<[ContextMethod, MethodRow]>;
}

/** The member at a dotted path of a context (`state.get` → `p.state.get`), bound to its owner. */
export function memberAt(ctx: object, path: string): unknown {
  const parts = path.split(".");
  let owner: unknown = ctx;
  for (const part of parts.slice(0, -1)) owner = (owner as Record<string, unknown>)[part];
  const v = (owner as Record<string, unknown>)[parts[parts.length - 1]!];
  return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(owner) : v;
}

/** Sets the member at a dotted path, creating the objects on the way. */
export function setMemberAt(ctx: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  let owner = ctx;
  for (const part of parts.slice(0, -1)) owner = (owner[part] ??= {}) as Record<string, unknown>;
  owner[parts[parts.length - 1]!] = value;
}

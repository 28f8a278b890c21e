/**
 * The job ad: HTCondor's ClassAd view of a job (DESIGN "How HTCondor's model maps onto the
 * Flux manager"), built here and nowhere else from the job's jobspec, its folded state, its
 * eventlog and the attributes its user attached (`attributes.user.classad`).
 *
 * The computed attributes and what they mean are listed in docs/ads.md. The eventlog is
 * folded once per build; the manager caches the result per job (see JobAds in jobads.ts),
 * so a build happens at most once per event of a job.
 */
import { isAbsolute, join } from "node:path";
import type { ClassAd } from "../../classad/classad.js";
import type { Expr } from "../../classad/expr.js";
import { AdLayout, RecordAd, type RecordSlot } from "../../classad/record-ad.js";
import { literal } from "../../classad/expr.js";
import { quoteV2 } from "../../classad/functions/env.js";
import { parseExpr } from "../../classad/parser.js";
import { ERROR } from "../../classad/values.js";
import { ErrorCode, JobtapError, isJobtapError } from "../../errors.js";
import { waitStatus } from "../port/executor.js";
import { formatJobId } from "../base/ids.js";
import { isPlainObject, resourceRequest, type ResourceRequest } from "../core/jobspec.js";
import type { EventEntry, Jobspec } from "../port/records.js";
import type { JobCore } from "../core/transition.js";

import { foldEventlog, HOLD_REASON_CODE, JOB_STATUS, type AdUpdates } from "./jobad-fold.js";

export { HOLD_REASON_CODE, JOB_STATUS, type AdUpdates };

/** HTCondor's vanilla universe: every jobtap job. */
export const VANILLA_UNIVERSE = 5;

/**
 * Names of the attributes the manager computes. A user attribute may not use one of them
 * (submit rejects it): the computed value would hide it.
 */
export const JOB_AD_ATTRIBUTES: readonly string[] = [
  // Changed by events (rebuilt per event): the first DYNAMIC of them.
  "JobStatus", "EnteredCurrentStatus", "JobStartDate", "CompletionDate", "ExitCode", "ExitBySignal",
  "ExitSignal", "RemoteWallClockTime", "NumJobStarts", "HoldReason", "HoldReasonCode", "HoldReasonSubCode",
  "LastMatchTime", "LastRejMatchTime",
  // Fixed at submit (kept per job while its jobspec is the same).
  "JobId", "ClusterId", "ProcId", "GlobalJobId", "Owner", "User", "QDate", "RequestCpus",
  "RequestGpus", "RequestMemory", "Cmd", "Arguments", "Iwd", "Out", "Err", "JobUniverse",
];
const DYNAMIC = 14;
/** Distinct user-attribute name lists whose layouts are interned (bounds the table). */
const MAX_LAYOUTS = 4096;
/** Attributes of integer type (slots hold JS numbers; see AdLayout). */
const INTEGER_ATTRIBUTES = [
  "JobStatus", "EnteredCurrentStatus", "JobStartDate", "CompletionDate", "ExitCode", "ExitSignal",
  "NumJobStarts", "HoldReasonCode", "HoldReasonSubCode", "LastMatchTime", "LastRejMatchTime", "ClusterId", "ProcId", "QDate", "RequestCpus", "RequestGpus",
  "RequestMemory", "JobUniverse",
];
const RESERVED = new Set(JOB_AD_ATTRIBUTES.map((n) => n.toLowerCase()));

/** What a job ad is built from: an active job, or an inactive one read back from the store. */
export interface JobAdInput {
  readonly core: JobCore;
  readonly eventlog: readonly EventEntry[];
  /** The resource request, when the manager already computed it. */
  readonly request?: ResourceRequest | undefined;
  /** When a scheduling pass last passed over the job (matchmaking; memory only). */
  readonly matchTimes?: MatchTimes | undefined;
}

/** Clock seconds of the last scheduling pass that looked at the job and did not place it. */
export interface MatchTimes {
  readonly rejected: number;
}

/** What the host contributes: names and the default output directory. */
export interface JobAdHost {
  /** This host's name: `GlobalJobId` and the domain of `User`. */
  readonly hostname: string;
  /** Where output goes when the jobspec names no path (the local executor's rule): the
   *  statedir's directory for the manager's own user, undefined (the job's cwd) for others. */
  outputDir(uid: number): string | undefined;
  /** The user name of a uid (`Owner`); a number when unknown. */
  userName(uid: number): string;
  /** The layout and user attributes of a jobspec (cached per jobspec object by the caller). */
  shape(jobspec: Jobspec): JobAdShape;
}

/** The attribute names of the ads of jobs sharing one jobspec, and their user attributes. */
export interface JobAdShape {
  readonly layout: AdLayout;
  /** User attribute expressions; the one for layout slot `JOB_AD_ATTRIBUTES.length + i` is `user[i]`. */
  readonly user: readonly Expr[];
}

/** The part of a job's ad fixed at submit: valid while the jobspec object is the same. */
export interface JobAdBase {
  readonly jobspec: Jobspec;
  readonly t_submit: number;
  readonly layout: AdLayout;
  readonly slots: readonly RecordSlot[];
}

/** Slot numbers of the computed attributes (their order in JOB_AD_ATTRIBUTES). */
const A = Object.fromEntries(JOB_AD_ATTRIBUTES.map((n, i) => [n, i])) as Record<string, number>;
const INTEGER_SLOTS = INTEGER_ATTRIBUTES.map((n) => A[n]!);
const BASE_LAYOUT = new AdLayout(JOB_AD_ATTRIBUTES, INTEGER_SLOTS);

/**
 * The shape of a jobspec's ads: the computed names, then its user attributes (never
 * throws). `layouts` interns layouts by their names, so jobs with the same user attribute
 * names share one.
 */
export function jobAdShape(js: Jobspec, layouts?: Map<string, AdLayout>, parse: ParseText = parseOld): JobAdShape {
  const attrs = readUserAttributes(js, parse).filter(([n]) => !RESERVED.has(n.toLowerCase()));
  if (attrs.length === 0) return { layout: BASE_LAYOUT, user: [] };
  // A name given twice (differing in case) keeps its last expression, as HTCondor's insert does.
  const last = new Map(attrs.map(([n, e]) => [n.toLowerCase(), [n, e] as const]));
  const kept = [...last.values()];
  const names = kept.map(([n]) => n);
  const key = names.join("\0");
  let layout = layouts?.get(key);
  if (layout === undefined) {
    layout = new AdLayout([...JOB_AD_ATTRIBUTES, ...names], INTEGER_SLOTS);
    if (layouts !== undefined && layouts.size < MAX_LAYOUTS) layouts.set(key, layout);
  }
  return { layout, user: kept.map(([, e]) => e) };
}

/** The submit-time part of a job's ad (ids, owner, request, command, paths, user attributes). */
export function jobAdBase(job: JobAdInput, host: JobAdHost): JobAdBase {
  const c = job.core;
  const js = c.jobspec;
  const shape = host.shape(js);
  const slots: RecordSlot[] = new Array<RecordSlot>(shape.layout.length);
  shape.user.forEach((e, i) => (slots[JOB_AD_ATTRIBUTES.length + i] = e));
  const cluster = clusterOf(c);
  const f58 = formatJobId(c.id);
  const owner = host.userName(c.userid);
  const qdate = qdateOf(c);
  slots[A.JobId!] = f58;
  slots[A.ClusterId!] = cluster;
  slots[A.ProcId!] = 0;
  slots[A.GlobalJobId!] = `${host.hostname}#${cluster}.0#${qdate}`;
  slots[A.Owner!] = owner;
  slots[A.User!] = `${owner}@${host.hostname}`;
  slots[A.QDate!] = qdate;
  const req = job.request ?? requestOf(js);
  slots[A.RequestCpus!] = req.cores > 0 || req.gpus > 0 ? req.cores : 1;
  slots[A.RequestGpus!] = req.gpus;
  slots[A.RequestMemory!] = Math.ceil(req.memory / 1048576);
  const argv = ((js.tasks[0] as { command?: unknown } | undefined)?.command ?? []) as string[];
  const cwd = typeof js.attributes.system?.cwd === "string" ? js.attributes.system.cwd : undefined;
  slots[A.Cmd!] = argv[0] ?? "";
  slots[A.Arguments!] = argv.slice(1).map(quoteV2).join(" ");
  if (cwd !== undefined) slots[A.Iwd!] = cwd;
  const out = outputPaths(js, f58, host.outputDir(c.userid), cwd);
  slots[A.Out!] = out.stdout;
  slots[A.Err!] = out.stderr;
  slots[A.JobUniverse!] = universeOf(js);
  return { jobspec: js, t_submit: c.t_submit, layout: shape.layout, slots };
}

function clusterOf(c: JobCore): bigint {
  return BigInt.asIntN(64, c.id as bigint);
}

function qdateOf(c: JobCore): number {
  return Math.floor(c.t_submit);
}

/** Slot numbers of the computed attributes: below `DYNAMIC_SLOTS`, the event-dependent ones. */
export const DYNAMIC_SLOTS = DYNAMIC;

/** The slot of a computed attribute (lower-cased name) in every job ad, or -1. */
export function computedSlotOf(key: string): number {
  return BASE_LAYOUT.slotOf(key);
}

/** Whether a JS number in computed slot `slot` stands for a ClassAd integer. */
export function isIntegerSlot(slot: number): boolean {
  return BASE_LAYOUT.isInteger(slot);
}

/** Whether `cheapSubmitSlot` computes this submit-time slot. */
export function isCheapSubmitSlot(slot: number): boolean {
  return slot === A.QDate || slot === A.ClusterId || slot === A.ProcId || slot === A.JobId || slot === A.JobUniverse;
}

/**
 * A submit-time computed attribute that needs no other (QDate, ClusterId, ProcId, JobId,
 * JobUniverse) for a policy-only ad (policy-ad.ts); undefined for the others, which take the
 * whole submit-time part (`jobAdBase`).
 */
export function cheapSubmitSlot(job: JobAdInput, slot: number): RecordSlot | undefined {
  const c = job.core;
  switch (slot) {
    case A.QDate: return qdateOf(c);
    case A.ClusterId: return clusterOf(c);
    case A.ProcId: return 0;
    case A.JobId: return formatJobId(c.id);
    case A.JobUniverse: return universeOf(c.jobspec);
    default: return undefined;
  }
}

/**
 * `attributes.system.universe` (HTCondor's number, set from a job ad's JobUniverse by
 * jobspecFromAd: a router's copy takes its route's), else vanilla.
 */
function universeOf(js: Jobspec): number {
  const u = js.attributes.system?.universe;
  return typeof u === "number" && Number.isInteger(u) && u > 0 ? u : VANILLA_UNIVERSE;
}

/**
 * Builds the job ad: a read-only ClassAd (writes throw FROZEN_AD; `clone()` to change it).
 * `base` is the job's submit-time part when the caller kept it (see JobAds).
 */
export function buildJobAd(job: JobAdInput, host: JobAdHost, base: JobAdBase = jobAdBase(job, host)): ClassAd {
  const { own, adUpdates } = jobAdState(job, host);
  if (adUpdates !== undefined) return withAdUpdates(base, own, adUpdates);
  return new RecordAd(base.layout, base.slots, own);
}

/**
 * The event-dependent part of a job's ad: its first `DYNAMIC_SLOTS` slots (JobStatus, its
 * times and counters, hold reason, match times) and the `classad-update` attributes, from
 * one fold of the eventlog. The job ad and the policy-only ad (policy-ad.ts) both read it.
 */
export function jobAdState(job: JobAdInput, host: JobAdHost): { own: RecordSlot[]; adUpdates: AdUpdates | undefined } {
  const f = foldEventlog(job.eventlog, host.userName);
  const own = new Array<RecordSlot>(DYNAMIC);
  own[A.JobStatus!] = f.status;
  own[A.EnteredCurrentStatus!] = f.entered;
  if (f.starts > 0) own[A.JobStartDate!] = f.startDate;
  own[A.CompletionDate!] = f.completion;
  if (f.finish !== undefined) {
    const signal = waitStatus.signal(f.finish);
    own[A.ExitBySignal!] = signal !== undefined;
    if (signal !== undefined) own[A.ExitSignal!] = signal;
    else own[A.ExitCode!] = waitStatus.exitCode(f.finish) ?? 0;
  }
  own[A.RemoteWallClockTime!] = f.wallClock;
  own[A.NumJobStarts!] = f.starts;
  if (f.status === JOB_STATUS.held) {
    own[A.HoldReason!] = f.holdReason;
    own[A.HoldReasonCode!] = f.holdCode;
    own[A.HoldReasonSubCode!] = f.holdSubCode;
  }
  // LastMatchTime: the last allocation (the negotiator's match), read from the eventlog.
  if (f.lastAlloc > 0) own[A.LastMatchTime!] = f.lastAlloc;
  const t = job.matchTimes;
  if (t !== undefined) own[A.LastRejMatchTime!] = t.rejected;
  return { own, adUpdates: f.adUpdates };
}

/**
 * The ad with a `classad-update` event's attributes over its user attributes: how a plugin
 * changes the ad of a running job, whose jobspec is fixed (a router's JOB_FINALIZE and
 * UPDATE_JOB_INFO output). A computed name is left alone; null deletes.
 */
function withAdUpdates(base: JobAdBase, own: RecordSlot[], updates: AdUpdates): ClassAd {
  const names = [...base.layout.names];
  const slots = [...base.slots];
  for (const [key, { name, expr }] of updates) {
    if (RESERVED.has(key)) continue;
    let i = base.layout.slotOf(key);
    if (i < 0) {
      if (expr === null) continue;
      i = names.push(name) - 1;
    }
    slots[i] = expr ?? undefined;
  }
  return new RecordAd(new AdLayout(names, INTEGER_SLOTS), slots, own);
}

function requestOf(js: Jobspec): ResourceRequest {
  try {
    return resourceRequest(js);
  } catch {
    return { nnodes: 0, cores: 0, gpus: 0, memory: 0, slots: 0 };
  }
}

/**
 * Where a job's stdout and stderr go: the jobspec's `attributes.system.shell.options.output`
 * paths (`{{id}}` is the f58 id; relative to the job's cwd), else `<outputDir>/<f58>/stdout`
 * and `.../stderr`, or with no `outputDir` (a job of another user than the manager's, which
 * may not write in the statedir) `<cwd>/jobtap-<f58>.out` and `.err`. The local executor
 * writes exactly there.
 */
export function outputPaths(js: Jobspec, f58: string, outputDir: string | undefined, cwd = process.cwd()): { stdout: string; stderr: string } {
  const output = ((js.attributes.system?.shell as Record<string, unknown> | undefined)?.options as
    | Record<string, unknown>
    | undefined)?.output as Record<string, { path?: unknown }> | undefined;
  const pick = (stream: "stdout" | "stderr"): string => {
    const p = output?.[stream]?.path;
    if (typeof p !== "string") {
      return outputDir === undefined ? join(cwd, `jobtap-${f58}.${stream === "stdout" ? "out" : "err"}`) : join(outputDir, f58, stream);
    }
    const expanded = p.replaceAll("{{id}}", f58);
    return isAbsolute(expanded) ? expanded : join(cwd, expanded);
  };
  return { stdout: pick("stdout"), stderr: pick("stderr") };
}

// --- user attributes (`attributes.user.classad`) --------------------------------------

/** Parses old-syntax expression text; throws CLASSAD_SYNTAX. */
export type ParseText = (text: string) => Expr;

const parseOld: ParseText = (text) => parseExpr(text, true);

/**
 * Parses the user attributes of a jobspec: `attributes.user.classad` is a table of
 * attribute name → old-syntax ClassAd expression text (null: deleted by a jobspec-update,
 * absent from the ad). Throws BAD_JOBSPEC naming the
 * attribute, its text and the column of a syntax error; a name the manager computes is
 * refused. Absent: no attributes.
 */
export function parseUserAttributes(js: Jobspec, parse: ParseText = parseOld): Array<[string, Expr]> {
  const table = js.attributes.user?.classad;
  if (table === undefined) return [];
  const where = "attributes.user.classad";
  if (!isPlainObject(table)) throw badAttr(where, "must be a table of attribute name = expression text");
  const out: Array<[string, Expr]> = [];
  for (const [name, text] of Object.entries(table)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw badAttr(`${where}.${name}`, "not a ClassAd attribute name");
    // null: an attribute a jobspec-update deleted (an update cannot remove a key).
    if (text === null) continue;
    if (RESERVED.has(name.toLowerCase())) throw badAttr(`${where}.${name}`, `${name} is computed by jobtap and cannot be set`);
    if (typeof text !== "string") throw badAttr(`${where}.${name}`, "must be ClassAd expression text (a string)");
    out.push([name, parseValueText(text, `jobspec: ${where}.${name}`, `${name} = `, ErrorCode.BAD_JOBSPEC, parse)]);
  }
  return out;
}

/** Like parseUserAttributes but never throws: a bad entry becomes `error` (jobspec updates). */
export function readUserAttributes(js: Jobspec, parse: ParseText = parseOld): Array<[string, Expr]> {
  try {
    return parseUserAttributes(js, parse);
  } catch {
    const table = js.attributes.user?.classad;
    if (!isPlainObject(table)) return [];
    return Object.entries(table).filter(([, text]) => text !== null).map(([name, text]): [string, Expr] => {
      try {
        return [name, parseExpr(String(text), true)];
      } catch {
        return [name, literal(ERROR)];
      }
    });
  }
}

/**
 * Splits one `--classad` argument: `Name = expr`, HTCondor's `+Name = expr` or
 * `MY.Name = expr`. Checks the expression; a syntax error names the text and its column.
 * Returns the name and the expression text as written.
 */
export function parseClassadAssignment(arg: string): { name: string; text: string } {
  const m = /^\s*(?:\+|MY\.)?([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)\s*/i.exec(arg);
  if (!m) throw new JobtapError(ErrorCode.CLASSAD_SYNTAX, `--classad '${arg}': expected Name = expression`);
  const name = m[1]!;
  const text = arg.slice(m[0].length).trimEnd();
  if (RESERVED.has(name.toLowerCase())) {
    throw new JobtapError(ErrorCode.CLASSAD_SYNTAX, `--classad '${arg}': ${name} is computed by jobtap and cannot be set`);
  }
  if (text === "") throw new JobtapError(ErrorCode.CLASSAD_SYNTAX, `--classad '${arg}': missing expression after '='`);
  parseValueText(text, `--classad '${arg}'`, arg.slice(0, m[0].length), ErrorCode.CLASSAD_SYNTAX);
  return { name, text };
}

/** Parses old-syntax text; a syntax error names `where` and the column within `prefix + text`. */
function parseValueText(text: string, where: string, prefix: string, code: ErrorCode, parse: ParseText = parseOld): Expr {
  try {
    return parse(text);
  } catch (e) {
    if (!isJobtapError(e) || e.code !== ErrorCode.CLASSAD_SYNTAX) throw e;
    const col = (e.details as { column?: number; line?: number } | undefined)?.column;
    const line = (e.details as { line?: number } | undefined)?.line ?? 1;
    const at = col === undefined ? "" : ` at column ${line === 1 ? col + prefix.length : col}${line > 1 ? ` of line ${line}` : ""}`;
    const why = e.message.replace(/^ClassAd syntax error( at \d+:\d+)?: /, "");
    throw new JobtapError(code, `${where}: ClassAd syntax error${at}: ${why}`, { column: col });
  }
}

function badAttr(where: string, why: string): JobtapError {
  return new JobtapError(ErrorCode.BAD_JOBSPEC, `jobspec: ${where}: ${why}`, { where });
}

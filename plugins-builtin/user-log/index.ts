/**
 * .user-log: HTCondor's job event log for any job whose ad names one — `UserLog` (what
 * condor_submit's `log` sets; `jobtap submit --log FILE`) or `StarterUserLog` (a fetched
 * ad's starter log). Events, with HTCondor's numbers: 000 submitted, 001 executing,
 * 005 terminated, 009 aborted (cancelled, or ended without running), 012 held, 013 released.
 * The text is written by src/condor/user-log.ts, the one writer (docs/condor-fetch.md).
 *
 * A log path must be absolute, and a guest's job is refused one at submit: the log would
 * be written with the daemon's rights. A write that fails is logged, never the job's fault.
 */
import { hostname } from "node:os";
import { ClassAd, appendUserLog, formatJobId, formatUserLogEvent, waitStatus } from "jobtap/plugin";
import type { JobArgs, JobId, PluginContext, UserLogEvent } from "jobtap/plugin";

const ATTRS = ["UserLog", "StarterUserLog"] as const;

/** What the plugin remembers of a job with a log. */
interface Logged {
  paths: string[];
  cluster: bigint;
  /** A final event (005, 009) was written, or the job is held (012) and may be released. */
  ended: boolean;
  held: boolean;
  lastException?: string;
}

const NONE: ReadonlyArray<{ attr: string; value: unknown }> = Object.freeze([]) as ReadonlyArray<{ attr: string; value: unknown }>;

/** The log paths a jobspec's user ClassAd names (strings as the ClassAd text evaluates them). */
function logPaths(classad: Record<string, string> | undefined): ReadonlyArray<{ attr: string; value: unknown }> {
  // Most jobs carry no user ClassAd: one shared empty answer, no entries array per job.
  if (classad === undefined) return NONE;
  const out: Array<{ attr: string; value: unknown }> = [];
  for (const [name, text] of Object.entries(classad)) {
    const attr = ATTRS.find((a) => a.toLowerCase() === name.toLowerCase());
    if (attr === undefined) continue;
    const ad = new ClassAd();
    try {
      ad.setExpr(attr, text, true);
      out.push({ attr, value: ad.evaluate(attr) });
    } catch {
      out.push({ attr, value: undefined });
    }
  }
  return out;
}

/** Registers validation and the event writers. */
export default function userLog(p: PluginContext): void {
  const jobs = new Map<JobId, Logged>();
  const host = `<${hostname()}>`;
  const self = process.getuid?.() ?? 0;

  const write = (id: JobId, job: Logged, time: number, e: UserLogEvent, uid: number): void => {
    const text = formatUserLogEvent({ cluster: job.cluster, proc: 0 }, time, e);
    for (const path of job.paths) {
      try {
        appendUserLog(path, text, uid === p.owner ? self : uid);
      } catch (err) {
        p.log.warn(`job ${formatJobId(id)}: ${(err as Error).message}`);
      }
    }
  };

  p.on("job.validate", (job) => {
    const classad = (job.jobspec.attributes.user as { classad?: Record<string, string> } | undefined)?.classad;
    for (const { attr, value } of logPaths(classad)) {
      if (typeof value !== "string" || !value.startsWith("/")) return p.reject(`${attr}: must be an absolute path (a string), got ${JSON.stringify(classad?.[attr] ?? value)}`);
      if (job.userid !== p.owner) return p.reject(`${attr}: a guest's job cannot have a user log on this instance (it would be written with the daemon's rights)`);
    }
    return undefined;
  });

  p.on("job.new", (job) => {
    const classad = (job.jobspec.attributes.user as { classad?: Record<string, string> } | undefined)?.classad;
    const found = logPaths(classad);
    if (found.length === 0) return undefined;
    const paths = found.flatMap((x) => (typeof x.value === "string" ? [x.value] : []));
    if (paths.length === 0 || job.state === "INACTIVE") return undefined;
    const cluster = p.jobAd(job.id).evaluate("ClusterId");
    const logged: Logged = { paths: [...new Set(paths)], cluster: typeof cluster === "bigint" ? cluster : 0n, ended: false, held: job.urgency === 0 };
    jobs.set(job.id, logged);
    p.subscribe(job.id);
    // A restart (or a load) sees jobs already submitted: their 000 was written then.
    if (job.state !== "NEW") return undefined;
    write(job.id, logged, job.t_submit, { type: "submit", host }, job.userid);
    // HTCondor's hold = true: the submit event, then a hold with code 15 (SubmittedOnHold).
    if (logged.held) write(job.id, logged, job.t_submit, { type: "held", reason: "submitted on hold", code: 15, subcode: 0 }, job.userid);
    return undefined;
  });

  p.on("job.event.*", (job) => {
    const logged = jobs.get(job.id);
    if (logged === undefined || logged.ended) return;
    const e = job.entry;
    const ctx = e.context ?? {};
    const put = (ev: UserLogEvent) => write(job.id, logged, e.timestamp, ev, job.userid);
    if (e.name === "start") put({ type: "execute", host, ...slotName(p, job) });
    else if (e.name === "finish") {
      const st = Number(ctx.status ?? 0);
      const signal = waitStatus.signal(st);
      put(signal === undefined ? { type: "terminated", exitCode: waitStatus.exitCode(st) ?? 0 } : { type: "terminated", signal });
      logged.ended = true;
    } else if (e.name === "exception" && Number(ctx.severity) === 0) {
      const note = String(ctx.note ?? "");
      logged.lastException = note === "" ? String(ctx.type) : `${String(ctx.type)}: ${note}`;
      if (ctx.type === "cancel") {
        put({ type: "aborted", reason: note === "" ? "via jobtap cancel" : note });
        logged.ended = true;
      } else if (ctx.type === "hold") {
        put({ type: "held", reason: note, code: 3, subcode: 0 });
        logged.ended = true;
      }
    } else if (e.name === "urgency") {
      const urgency = Number(ctx.urgency);
      if (urgency === 0 && !logged.held) {
        logged.held = true;
        put({ type: "held", reason: typeof ctx.hold_reason === "string" ? ctx.hold_reason : "via jobtap urgency", code: Number(ctx.hold_reason_code ?? 1), subcode: Number(ctx.hold_reason_subcode ?? 0) });
      } else if (urgency > 0 && logged.held) {
        logged.held = false;
        put({ type: "released", reason: "via jobtap urgency" });
      }
    }
  });

  p.on("job.state.inactive", (job) => {
    // Jobs with a log are few: no lookup by bigint id per ending job while none has one.
    if (jobs.size === 0) return;
    const logged = jobs.get(job.id);
    jobs.delete(job.id);
    // Ended without a finish and without a cancel (an exception before it ran): aborted.
    if (logged !== undefined && !logged.ended) write(job.id, logged, p.clock.now() / 1000, { type: "aborted", reason: logged.lastException ?? "job ended without running" }, job.userid);
  });
}

/** `SlotName` of the execute event: the slot the job was pinned to, when the host has slot ads. */
function slotName(p: PluginContext, job: JobArgs): { slotName?: string } {
  const slot = (job.jobspec.attributes.system as { slot?: unknown } | undefined)?.slot;
  if (typeof slot !== "number") return {};
  const name = p.slotAd(slot)?.evaluate("Name");
  return typeof name === "string" ? { slotName: name } : {};
}

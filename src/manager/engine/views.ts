/**
 * What the manager shows of a job: the listing record (`flux jobs`-like) and wait results.
 */
import type { JobId } from "../base/ids.js";
import type { InactiveRecord } from "./inactive.js";
import { resultName } from "./inactive.js";
import { jobName, type ActiveJob, type WaitResult } from "./job.js";
import type { EventEntry } from "../port/records.js";
import type { JobResult, State } from "../base/states.js";
import { waitStatus } from "../port/executor.js";
import { resultOf, type JobCore } from "../core/transition.js";

/** A job as listed by `jobs()` and returned by `job(id)`. */
export interface JobInfo {
  id: JobId;
  userid: number;
  state: State;
  urgency: number;
  /** -1 until assigned. */
  priority: number;
  t_submit: number;
  t_clean?: number;
  name: string;
  /** Present once the job has an end event (CLEANUP, INACTIVE). */
  result?: JobResult;
  /** Wait status from `finish`, when the job finished. */
  waitstatus?: number;
  annotations?: Record<string, unknown> | null;
  dependencies?: string[];
}

/** The public view of an active job. */
export function activeInfo(job: ActiveJob): JobInfo {
  const c = job.core;
  const info: JobInfo = {
    id: c.id,
    userid: c.userid,
    state: c.state,
    urgency: c.urgency,
    priority: c.priority,
    t_submit: c.t_submit,
    name: jobName(c.jobspec),
    annotations: c.annotations,
    dependencies: [...c.dependencies],
  };
  const r = resultOf(c);
  if (r) info.result = r;
  // A finish ends RUN: only a job in CLEANUP has one (a waiting job's eventlog may be
  // in the store only, and stays there for a listing).
  const finish = c.state === "CLEANUP" ? job.eventlog.find((e) => e.name === "finish") : undefined;
  if (typeof finish?.context?.status === "number") info.waitstatus = finish.context.status;
  return info;
}

/** The public view of an inactive job, from its compact record. */
export function inactiveInfo(r: InactiveRecord): JobInfo {
  const info: JobInfo = {
    id: r.id,
    userid: r.userid,
    state: "INACTIVE",
    urgency: r.urgency,
    priority: r.priority,
    t_submit: r.t_submit,
    t_clean: r.t_clean,
    name: r.name,
    result: resultName(r),
    annotations: r.annotations,
  };
  if (r.waitStatus >= 0) info.waitstatus = r.waitStatus;
  return info;
}

/** The wait result of a finished job, from its folded core. */
export function waitResultOf(core: JobCore): WaitResult {
  const result = resultOf(core) ?? "FAILED";
  const out: WaitResult = { id: core.id, result, success: result === "COMPLETED" };
  if (!out.success) out.errstr = describeEnd(core.endEvent);
  return out;
}

function describeEnd(end: EventEntry | undefined): string {
  if (!end) return "job ended without an end event";
  const c = end.context ?? {};
  if (end.name === "exception") return `Fatal exception type=${String(c.type)} ${String(c.note ?? "")}`.trim();
  const st = typeof c.status === "number" ? c.status : 0;
  const sig = waitStatus.signal(st);
  return sig !== undefined ? `task(s) terminated by signal ${sig}` : `task(s) exited with exit code ${waitStatus.exitCode(st)}`;
}

/**
 * The `jobs` table, like `flux jobs`: a default column set (JOBID USER NAME ST URG PRI TIME
 * INFO) and `-o FORMAT` strings of `{field}` / `{field:>8}` / `{field:<10.10}` items.
 */
import { formatFSD } from "../manager/base/fsd.js";
import type { JobView } from "../server/protocol.js";
import { usage } from "./args.js";
import { describeWaitStatus, termSignal } from "./endstatus.js";
import type { UserTable } from "../manager/base/users.js";

export const DEFAULT_FORMAT =
  "{id:>12} {user:<8.8} {name:<10.10} {status:>2} {urgency:>3} {priority:>10} {runtime:>8} {info}";

/** Everything a field needs besides the job: names and the current time. */
export interface FormatEnv {
  users: UserTable;
  /** Seconds since the epoch. */
  now: number;
}

type Field = (job: JobView, env: FormatEnv) => string;

const STATUS_ABBREV: Record<string, string> = {
  NEW: "N", DEPEND: "D", PRIORITY: "P", SCHED: "S", RUN: "R", CLEANUP: "C",
  COMPLETED: "CD", FAILED: "F", CANCELED: "CA", TIMEOUT: "TO",
};

const FIELDS: Record<string, { header: string; get: Field }> = {
  id: { header: "JOBID", get: (j) => j.id },
  userid: { header: "UID", get: (j) => String(j.userid) },
  user: { header: "USER", get: (j, e) => e.users.name(j.userid) },
  name: { header: "NAME", get: (j) => j.name },
  queue: { header: "QUEUE", get: (j) => j.queue ?? "" },
  state: { header: "STATE", get: (j) => j.state },
  status: { header: "ST", get: (j) => STATUS_ABBREV[statusOf(j)] ?? statusOf(j) },
  result: { header: "RESULT", get: (j) => j.result ?? "" },
  returncode: { header: "RC", get: (j) => (j.returncode === undefined ? "" : String(j.returncode)) },
  urgency: { header: "URG", get: (j) => String(j.urgency) },
  priority: { header: "PRI", get: (j) => (j.priority < 0 ? "-" : String(j.priority)) },
  ntasks: { header: "NTASKS", get: (j) => String(j.ntasks) },
  t_submit: { header: "T_SUBMIT", get: (j) => j.t_submit.toFixed(3) },
  runtime: { header: "TIME", get: (j, e) => formatRuntime(runtimeOf(j, e.now)) },
  dependencies: { header: "DEPENDENCIES", get: (j) => j.dependencies.join(",") },
  info: { header: "INFO", get: (j) => contextualInfo(j) },
  reason: { header: "REASON", get: (j) => j.reason ?? "" },
};

/** True if a format shows a pending job's reason (the listing must ask the daemon for it). */
export function wantsReasons(format: string): boolean {
  return /\{(reason|info)[:}]/.test(format);
}

/** The names `-o` accepts (documented in docs/cli.md). */
export const FORMAT_FIELDS = Object.keys(FIELDS);

interface Item {
  literal?: string;
  field?: string;
  align?: "<" | ">";
  width?: number;
  truncate?: number;
}

/** Parses a `-o` format; an unknown field is a USAGE error naming it. */
export function parseFormat(format: string): Item[] {
  const items: Item[] = [];
  const re = /\{([a-z_]+)(?::([<>])?(\d+)?(?:\.(\d+))?)?\}/g;
  let last = 0;
  for (let m = re.exec(format); m !== null; m = re.exec(format)) {
    if (m.index > last) items.push({ literal: format.slice(last, m.index) });
    const field = m[1] as string;
    if (!(field in FIELDS)) throw usage(`-o: unknown field "${field}" (known: ${FORMAT_FIELDS.join(", ")})`);
    const item: Item = { field };
    if (m[2] !== undefined) item.align = m[2] as "<" | ">";
    if (m[3] !== undefined) item.width = Number(m[3]);
    if (m[4] !== undefined) item.truncate = Number(m[4]);
    items.push(item);
    last = re.lastIndex;
  }
  if (last < format.length) items.push({ literal: format.slice(last) });
  return items;
}

/** Renders the header line and one line per job; trailing blanks trimmed, as flux does. */
export function formatTable(jobs: JobView[], format: string, env: FormatEnv, header = true): string {
  const items = parseFormat(format);
  const lines: string[] = [];
  if (header) lines.push(renderLine(items, (f) => (FIELDS[f] as { header: string }).header));
  for (const job of jobs) lines.push(renderLine(items, (f) => (FIELDS[f] as { get: Field }).get(job, env)));
  return lines.map((l) => l.trimEnd() + "\n").join("");
}

function renderLine(items: Item[], value: (field: string) => string): string {
  return items
    .map((it) => {
      if (it.field === undefined) return it.literal ?? "";
      let text = value(it.field);
      if (it.truncate !== undefined && text.length > it.truncate) {
        text = text.slice(0, Math.max(0, it.truncate - 1)) + "+";
      }
      const width = it.width ?? 0;
      return it.align === ">" ? text.padStart(width) : text.padEnd(width);
    })
    .join("");
}

/** The ST column's source: the result once inactive, else the state. */
function statusOf(job: JobView): string {
  return job.state === "INACTIVE" && job.result !== undefined ? job.result : job.state;
}

/** Seconds from `alloc` to the end; undefined (TIME `-`) for a job that never started. */
function runtimeOf(job: JobView, now: number): number | undefined {
  if (job.t_run === undefined || job.t_start === undefined) return undefined;
  const end = job.t_cleanup ?? (job.state === "INACTIVE" ? job.t_inactive : undefined) ?? now;
  return Math.max(0, end - job.t_run);
}

/** A duration the way `flux jobs` prints one (an FSD), or "-" if the job never ran. */
export function formatRuntime(seconds: number | undefined): string {
  return seconds === undefined ? "-" : formatFSD(seconds);
}

/** The INFO column: why a pending job waits, or how an inactive one ended. */
function contextualInfo(job: JobView): string {
  // A pending job's first `job why` reason, when the listing asked for it.
  if (job.reason !== undefined && job.state !== "INACTIVE") return job.reason;
  switch (job.state) {
    case "DEPEND":
      return "depends:" + job.dependencies.map(beginAt).join(",");
    case "PRIORITY":
      return "priority-wait";
    case "SCHED":
      return job.urgency === 0 ? "held" : schedReason(job);
    case "INACTIVE":
      if (job.exception) return `${job.exception.type}${job.exception.note ? ": " + job.exception.note : ""}`;
      if (job.routed !== undefined) return `routed: ${job.routed}`;
      if (job.result !== "FAILED" || job.waitstatus === undefined) return "";
      // A signal is no exit status: `killed by SIGTERM`, not the `status=0` of ws >> 8.
      return termSignal(job.waitstatus) !== 0 ? describeWaitStatus(job.waitstatus)! : `status=${(job.waitstatus >> 8) & 0xff}`;
    default:
      return "";
  }
}

function beginAt(dep: string): string {
  const m = /^begin-time=(\d+(?:\.\d+)?)$/.exec(dep);
  return m ? `begin@${new Date(Number(m[1]) * 1000).toISOString()}` : dep;
}

function schedReason(job: JobView): string {
  const sched = job.annotations?.sched as { reason_pending?: unknown } | undefined;
  return typeof sched?.reason_pending === "string" ? sched.reason_pending : "";
}

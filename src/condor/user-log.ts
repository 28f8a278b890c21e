/**
 * HTCondor's job event log ("user log") in its default text form, as condor_submit's `log`
 * and the starter's `StarterUserLog` produce it: each event is a header line
 * `NNN (CLUSTER.PROC.SUBPROC) YYYY-MM-DD HH:MM:SS <text>` (three-digit fields zero-padded,
 * local time, HTCondor's default ISO_DATE format), body lines starting with a tab, and a
 * line `...` closing the event. HTCondor's readers (condor_wait, the Python JobEventLog,
 * DAGMan) key on the event number, the id and the first body words.
 *
 * The only writer of user logs: the file is opened here (append, never following a link,
 * an ordinary file only), so whoever needs to write as another user changes one place.
 */
import { closeSync, constants, fstatSync, openSync, writeSync } from "node:fs";
import { isAbsolute } from "node:path";
import { ErrorCode, JobtapError } from "../errors.js";

/** Which job an event is about: HTCondor's cluster.proc.subproc. */
export interface UserLogJob {
  cluster: bigint | number;
  proc: number;
  subproc?: number;
}

/** Usage in seconds of CPU, for a terminated event. */
export interface UserLogUsage {
  userCpu: number;
  sysCpu: number;
}

/** The events jobtap writes, with HTCondor's numbers. */
export type UserLogEvent =
  | { type: "submit"; host: string; notes?: string }
  | { type: "execute"; host: string; slotName?: string }
  | { type: "terminated"; exitCode?: number; signal?: number; usage?: UserLogUsage }
  | { type: "aborted"; reason?: string }
  | { type: "held"; reason?: string; code: number; subcode: number }
  | { type: "released"; reason?: string };

const NUMBERS = { submit: 0, execute: 1, terminated: 5, aborted: 9, held: 12, released: 13 } as const;

const pad = (n: number | bigint, w: number): string => String(n).padStart(w, "0");

/** `Usr D HH:MM:SS, Sys D HH:MM:SS` of HTCondor's rusage lines. */
function rusage(u: UserLogUsage): string {
  const part = (secs: number): string => {
    let s = Math.max(0, Math.floor(secs));
    const d = Math.floor(s / 86400);
    s %= 86400;
    return `${d} ${pad(Math.floor(s / 3600), 2)}:${pad(Math.floor((s % 3600) / 60), 2)}:${pad(s % 60, 2)}`;
  };
  return `Usr ${part(u.userCpu)}, Sys ${part(u.sysCpu)}`;
}

/** The body of an event after the header's timestamp (first line without its tab). */
function body(e: UserLogEvent): string[] {
  switch (e.type) {
    case "submit":
      return [`Job submitted from host: ${e.host}`, ...(e.notes ? [`    ${e.notes}`] : [])];
    case "execute":
      return [`Job executing on host: ${e.host}`, ...(e.slotName ? [`\tSlotName: ${e.slotName}`] : [])];
    case "terminated": {
      const run = rusage(e.usage ?? { userCpu: 0, sysCpu: 0 });
      const zero = rusage({ userCpu: 0, sysCpu: 0 });
      const how = e.signal === undefined ? [`\t(1) Normal termination (return value ${e.exitCode ?? 0})`] : [`\t(0) Abnormal termination (signal ${e.signal})`, "\t(0) No core file"];
      return [
        "Job terminated.",
        ...how,
        `\t\t${run}  -  Run Remote Usage`,
        `\t\t${zero}  -  Run Local Usage`,
        `\t\t${run}  -  Total Remote Usage`,
        `\t\t${zero}  -  Total Local Usage`,
        "\t0  -  Run Bytes Sent By Job",
        "\t0  -  Run Bytes Received By Job",
        "\t0  -  Total Bytes Sent By Job",
        "\t0  -  Total Bytes Received By Job",
      ];
    }
    case "aborted":
      return ["Job was aborted.", ...(e.reason ? [`\t${e.reason}`] : [])];
    case "held":
      return ["Job was held.", `\t${e.reason || "Reason unspecified"}`, `\tCode ${e.code} Subcode ${e.subcode}`];
    case "released":
      return ["Job was released.", ...(e.reason ? [`\t${e.reason}`] : [])];
  }
}

/** One event as HTCondor writes it, `...` line included; `time` in seconds since the epoch. */
export function formatUserLogEvent(job: UserLogJob, time: number, e: UserLogEvent): string {
  const t = new Date(Math.floor(time) * 1000);
  const date = `${t.getFullYear()}-${pad(t.getMonth() + 1, 2)}-${pad(t.getDate(), 2)} ${pad(t.getHours(), 2)}:${pad(t.getMinutes(), 2)}:${pad(t.getSeconds(), 2)}`;
  const [first, ...rest] = body(e);
  const header = `${pad(NUMBERS[e.type], 3)} (${pad(job.cluster, 3)}.${pad(job.proc, 3)}.${pad(job.subproc ?? 0, 3)}) ${date} ${first!}`;
  return [header, ...rest, "...", ""].join("\n");
}

/**
 * Appends `text` to the user log `path` with this process's rights: absolute paths only,
 * never through a symbolic link, never a FIFO or device. `uid` is the job's user: a user
 * other than this process's is refused (a log must not be written with the daemon's
 * rights for someone else). Throws PERMISSION_DENIED naming the path and why.
 */
export function appendUserLog(path: string, text: string, uid: number): void {
  const self = process.getuid?.() ?? 0;
  const refuse = (why: string) => new JobtapError(ErrorCode.PERMISSION_DENIED, `user log "${path}": ${why}`, { path });
  if (!isAbsolute(path)) throw refuse("not an absolute path");
  if (uid !== self) throw refuse(`the job's user (uid ${uid}) is not the daemon's (uid ${self}): a user log is only written for the daemon's own user's jobs`);
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY, 0o644);
  } catch (e) {
    throw refuse(`cannot open it: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    if (!fstatSync(fd).isFile()) throw refuse("not a regular file");
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

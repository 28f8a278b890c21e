/**
 * The privileged launcher (a multi-user instance's only root process besides its keeper):
 * started by the daemon before it drops to the service user, it reads requests from its
 * stdin and answers on its stdout (launcher-proto.ts) and does nothing else.
 *
 * What it refuses, whatever the daemon asks:
 * - a task of a job for a uid other than the one authorised for that job;
 * - uid 0 unless started with `--allow-root` (`[exec] allow-root = true`, read by root
 *   before the daemon dropped its rights);
 * - a user missing from the password database (a user deleted after submitting);
 * - a signal to any process it did not start (pid and start time from /proc) or adopt
 *   (after a restart: same uid, same start time, and the job's JOBTAP_JOB_ID in its
 *   environment).
 * Tasks start through run-as.ts (setpriv: uid, gid, initgroups; files opened as the user);
 * hook programs through launcher-hooks.ts, under the same authorisation.
 */
import { readFileSync } from "node:fs";
import { rootHooksArg, startHook, type HookSide } from "./launcher-hooks.js";
import { lineReader, parseMessage, type LauncherAnswer, type LauncherRequest } from "./launcher-proto.js";
import { procStartTime } from "./proc.js";
import { processLauncher, signalGroup } from "./run-as.js";

type Start = Extract<LauncherRequest, { op: "start" }>;

const allowRoot = process.argv.includes("--allow-root");
const launcher = processLauncher();
/** job (f58) → the uid its tasks may run as. */
const authorised = new Map<string, number>();
/** pid → what this launcher started (or adopted) there. */
const tasks = new Map<number, { starttime: number | undefined; job: string }>();
let synced = false;
const hookSide: HookSide = { send, authorised, allowRoot, rootHooks: rootHooksArg(process.argv), tasks };

function send(m: LauncherAnswer): void {
  process.stdout.write(`${JSON.stringify(m)}\n`);
}

/** Why `m` may not start, or undefined. */
function refusal(m: Start): string | undefined {
  const ok = authorised.get(m.job);
  if (ok !== m.uid) return `launcher: job ${m.job} is not authorised to run as uid ${m.uid}${ok === undefined ? "" : ` (its user is uid ${ok})`}`;
  if (m.uid === 0 && !allowRoot) return "launcher: jobs of root are refused ([exec] allow-root is false; see docs/site.md)";
  return undefined;
}

function start(m: Start): void {
  const why = refusal(m);
  if (why !== undefined) {
    send({ op: "error", req: m.req, message: why, code: "PERMISSION_DENIED" });
    return;
  }
  let child;
  try {
    const task = { argv: m.argv, cwd: m.cwd, env: m.env, stdout: m.stdout, stderr: m.stderr, ...(m.umask === undefined ? {} : { umask: m.umask }), ...(m.stdin === undefined ? {} : { stdin: m.stdin }) };
    child = launcher.spawn(m.uid, task, (text) => send({ op: "setup", req: m.req, why: text }));
  } catch (e) {
    send({ op: "error", req: m.req, message: (e as Error).message, ...codeOf(e) });
    return;
  }
  const pid = child.pid;
  if (pid !== undefined) {
    const starttime = procStartTime(pid);
    tasks.set(pid, { starttime, job: m.job });
    send({ op: "spawned", req: m.req, pid, starttime });
  }
  child.on("error", (e: Error) => {
    if (child.pid === undefined) send({ op: "error", req: m.req, message: e.message, ...codeOf(e) });
  });
  child.on("close", (code: number | null, signal: NodeJS.Signals | null) => {
    if (pid !== undefined) tasks.delete(pid);
    if (pid !== undefined) send({ op: "exit", req: m.req, code, signal });
  });
}

function codeOf(e: unknown): { code?: string } {
  const code = (e as { code?: unknown }).code;
  return typeof code === "string" ? { code } : {};
}

/** Signals a task only if it is one of ours, still the same process. */
function signal(m: Extract<LauncherRequest, { op: "signal" }>): void {
  const t = tasks.get(m.pid);
  if (!t || t.starttime !== m.starttime || procStartTime(m.pid) !== m.starttime) {
    send({ op: "log", level: "warn", message: `launcher: refused to signal pid ${m.pid}: not a task this launcher started` });
    return;
  }
  signalGroup(m.pid, m.starttime, m.signal as NodeJS.Signals | number);
}

/** Takes over tasks an earlier launcher started, after checking each is the job's. */
function adopt(m: Extract<LauncherRequest, { op: "adopt" }>): void {
  for (const t of m.tasks) {
    if (procStartTime(t.pid) !== t.starttime || uidOf(t.pid) !== m.uid || !jobOf(t.pid, m.job)) {
      send({ op: "log", level: "warn", message: `launcher: pid ${t.pid} is not a task of job ${m.job}; not adopted` });
      continue;
    }
    tasks.set(t.pid, { starttime: t.starttime, job: m.job });
  }
}

function uidOf(pid: number): number | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/status`, "latin1").split("\n").find((l) => l.startsWith("Uid:"));
    return line === undefined ? undefined : Number(line.split(/\s+/)[1]);
  } catch {
    return undefined;
  }
}

function jobOf(pid: number, job: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`JOBTAP_JOB_ID=${job}`);
  } catch {
    return false;
  }
}

function handle(m: LauncherRequest): void {
  if (m.op === "sync") {
    synced = true;
    send({ op: "synced", n: m.n });
    return;
  }
  if (!synced) return;
  if (m.op === "authorise" && Number.isInteger(m.uid)) authorised.set(m.job, m.uid);
  else if (m.op === "forget") authorised.delete(m.job);
  else if (m.op === "start") start(m);
  else if (m.op === "hook") startHook(m, hookSide);
  else if (m.op === "signal") signal(m);
  else if (m.op === "adopt") adopt(m);
}

// The terminal's ^C and a hangup are the daemon's to act on: it stops us by closing the channel.
for (const s of ["SIGINT", "SIGHUP"] as const) process.on(s, () => undefined);
process.stdin.on(
  "data",
  lineReader((text) => {
    const m = parseMessage<LauncherRequest>(text);
    if (m) handle(m);
  }),
);
// The daemon is gone: the tasks run on in their own sessions; the next launcher adopts them.
process.stdin.on("end", () => process.exit(0));
process.stdout.on("error", () => process.exit(0));

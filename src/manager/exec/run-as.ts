/**
 * Starting one job task as its user: the only place that decides whose rights a local
 * job's process and its output files get (issue 34 swaps the mechanism for a privileged
 * launcher behind this same interface).
 *
 * - The job's user is this process's user: the output files are opened here
 *   (output-files.ts: ordinary files only, never blocking) and the command is spawned.
 * - Another user, and this process is root: `setpriv` takes the user's uid, primary gid and
 *   supplementary groups (initgroups), then a small `sh` wrapper, already running as the
 *   user, enters the working directory and opens the output files, so a path the user may
 *   not write fails exactly as it would for that user. The paths and the command are
 *   positional arguments, never part of the script text. Setup failures come back on
 *   descriptor 3, closed before the command is executed.
 * - Another user, and this process is not root: refused (no job ever runs as someone else).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync } from "node:fs";
import { ErrorCode, JobtapError } from "../../errors.js";
import { openForAppend, openForRead } from "./output-files.js";

/** One task to start. `stdout`/`stderr` are absolute paths. */
export interface TaskLaunch {
  argv: readonly string[];
  cwd: string;
  env: Record<string, string>;
  stdout: string;
  stderr: string;
  /** The submitter's umask (another user's task only; this process's own keep its umask). */
  umask?: number;
  /** The task's stdin file (absolute); none: stdin is empty. */
  stdin?: string;
  /** The job (f58), for a launcher that checks which user each job may run as. */
  job?: string;
}

/**
 * A started task as the executor sees it: a child process here, or a task the privileged
 * launcher started (launcher-client.ts). Events: `spawn` (pid known), `error` (before
 * `spawn`: it never started), `close` (code, signal), `lost` (its launcher died: the task
 * runs on, no longer anyone's child here).
 */
export interface TaskHandle {
  readonly pid?: number | undefined;
  on(event: "spawn" | "lost", listener: () => void): unknown;
  on(event: "error", listener: (err: Error) => void): unknown;
  on(event: "close", listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
}

/** Starts processes as a given user. */
export interface UserLauncher {
  /** True when tasks may run as users other than this process's (it is root). */
  readonly canSwitchUsers: boolean;
  /** True when jobs of root are refused at submit (a multi-user instance without `[exec] allow-root`). */
  readonly refusesRoot?: boolean;
  /** True when `spawn` returns before the pid is known (wait for `spawn` or `error`). */
  readonly deferred?: boolean;
  /**
   * Starts `task` as `uid` in a new session. Throws (a JobtapError naming the path, or the
   * spawn error) when it cannot start at all; a failure found once running as the user
   * (cwd, output files, program not found) is handed to `setupFailed` before the child's
   * `close` event, and the child exits with status 126.
   */
  spawn(uid: number, task: TaskLaunch, setupFailed: (why: string) => void): TaskHandle;
  /** Sends `signal` to the process group of a task this launcher started (pid + start time). */
  signal(pid: number, starttime: number | undefined, signal: NodeJS.Signals | number): void;
  /** The job `job` (f58) may start tasks as `uid` (called when its resources are allocated). */
  authorise?(job: string, uid: number): void;
  /** The job ended: its authorisation goes. */
  forget?(job: string): void;
  /** After a restart: tasks of `job` started by an earlier launcher are its to signal now. */
  adopt?(job: string, uid: number, tasks: ReadonlyArray<{ pid: number; starttime: number }>): void;
}

const SETPRIV = "/usr/bin/setpriv";

/** The wrapper run as the user: $1 cwd, $2 stdout path, $3 stderr path, $4 umask (octal or ""), $5 stdin path or "", then the command. */
const WRAPPER = `
fail() { printf '%s\\n' "$1" >&3; exit 126; }
[ -z "$4" ] || umask "$4" || fail "cannot set umask \\"$4\\""
cd -- "$1" 2>/dev/null || fail "cannot enter working directory \\"$1\\""
for f in "$2" "$3"; do
  if [ -e "$f" ] && [ ! -f "$f" ]; then fail "output \\"$f\\": not a regular file (FIFOs, devices and directories are refused)"; fi
  if ! { true >>"$f"; } 2>/dev/null; then r=$( { true >>"$f"; } 2>&1 ); fail "output \\"$f\\": cannot open it: \${r##*: }"; fi
done
exec 4>>"$2" 5>>"$3"
t=$(stat -L -f -c %T /proc/self/fd/4 /proc/self/fd/5 2>/dev/null) || fail "output: cannot check the output files"
for fs in $t; do case $fs in proc|sysfs|cgroup*|debugfs|securityfs|tracefs) fail "output: a /proc or /sys file (refused)";; esac; done
if [ -n "$5" ]; then
  [ -f "$5" ] || fail "input \\"$5\\": not a regular file or not there"
  exec 0<"$5" 2>/dev/null || fail "input \\"$5\\": cannot open it"
fi
shift 5
command -v -- "$1" >/dev/null 2>&1 || fail "cannot execute \\"$1\\": not found"
exec >&4 2>&5 4>&- 5>&- 3>&-
exec "$@"
`;

/** How long a user's password entry is trusted before the database is asked again. */
const PASSWD_TTL_MS = 60_000;

/** A user's entry in the password database: what a job of theirs starts with. */
export interface PasswdEntry {
  name: string;
  uid: number;
  gid: number;
  home: string;
  shell: string;
}

/** Looks `user` (a name or uid) up in the password database (getent: NSS too); undefined if absent. */
export function passwdEntry(user: string | number): PasswdEntry | undefined {
  const r = spawnSync("getent", ["passwd", String(user)], { encoding: "utf8" });
  const f = r.status === 0 ? r.stdout.split("\n")[0]!.split(":") : [];
  const uid = Number(f[2]);
  const gid = Number(f[3]);
  if (f.length < 7 || !Number.isInteger(uid) || !Number.isInteger(gid)) return undefined;
  return { name: f[0]!, uid, gid, home: f[5]!, shell: f[6]! };
}

/** The launcher of this process: switches users only when running as root (or never, if told). */
export function processLauncher(opts: { canSwitchUsers?: boolean } = {}): UserLauncher {
  const self = process.getuid?.() ?? 0;
  const canSwitchUsers = opts.canSwitchUsers ?? self === 0;
  const cache = new Map<number, { entry: PasswdEntry; until: number }>();
  const lookup = (uid: number): PasswdEntry => {
    const hit = cache.get(uid);
    if (hit && hit.until > Date.now()) return hit.entry;
    const entry = passwdEntry(uid);
    // A user deleted after submitting: this job's exception, never a run as someone else.
    if (!entry) throw new JobtapError(ErrorCode.PERMISSION_DENIED, `the job's user (uid ${uid}) is not in the password database`);
    cache.set(uid, { entry, until: Date.now() + PASSWD_TTL_MS });
    return entry;
  };
  return {
    canSwitchUsers,
    spawn(uid, task, setupFailed) {
      if (uid === self) return spawnDirect(task);
      if (!canSwitchUsers) throw cannotSwitch(uid, self);
      return spawnSwitched(lookup(uid), task, setupFailed);
    },
    signal: signalGroup,
  };
}

/** Signals a task's process group (its pid: it leads one), or the pid alone; gone is fine. */
export function signalGroup(pid: number, _starttime: number | undefined, signal: NodeJS.Signals | number): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // Gone already: its exit is on its way (or the poll sees it).
    }
  }
}

/** Why a job of `uid` cannot run on an instance whose daemon runs as `self`. */
export function cannotSwitch(uid: number, self: number): JobtapError {
  return new JobtapError(
    ErrorCode.PERMISSION_DENIED,
    `this instance cannot run jobs as uid ${uid}: its daemon runs as uid ${self}, not root, and never runs a job as another user (a multi-user instance does: see docs/site.md)`,
    { userid: uid },
  );
}

/** This process's own user: output opened here (checked), the command spawned directly. */
function spawnDirect(task: TaskLaunch): ChildProcess {
  const fds: number[] = [];
  const keep = (fd: number): number => (fds.push(fd), fd);
  try {
    const input = task.stdin === undefined ? "ignore" : keep(openForRead(task.stdin));
    const out = keep(openForAppend(task.stdout));
    const err = keep(openForAppend(task.stderr));
    // spawn throws synchronously for some errors (E2BIG, EINVAL): the caller reports them.
    return spawn(task.argv[0]!, task.argv.slice(1), { cwd: task.cwd, env: task.env, stdio: [input, out, err], detached: true });
  } finally {
    for (const fd of fds) closeSync(fd);
  }
}

/**
 * Another user: setpriv, then the wrapper opens the files as that user. HOME, USER, LOGNAME
 * and SHELL come from the password database (they say who the job runs as), whatever the
 * submitted environment held.
 */
function spawnSwitched(user: PasswdEntry, task: TaskLaunch, setupFailed: (why: string) => void): ChildProcess {
  const umask = task.umask === undefined ? "" : (task.umask & 0o777).toString(8).padStart(4, "0");
  const head = [`--reuid=${user.uid}`, `--regid=${user.gid}`, "--init-groups", "--", "/bin/sh", "-c", WRAPPER, "jobtap-task"];
  const argv = [...head, task.cwd, task.stdout, task.stderr, umask, task.stdin ?? "", ...task.argv];
  const env = { ...task.env, HOME: user.home, USER: user.name, LOGNAME: user.name, SHELL: user.shell };
  // cwd "/": the working directory is entered by the wrapper, as the user.
  // stderr too: setpriv's own failure (say, a user without a password entry) lands there.
  const child = spawn(SETPRIV, argv, { cwd: "/", env, stdio: ["ignore", "ignore", "pipe", "pipe"], detached: true });
  const streams = [child.stdio[2], child.stdio[3]].filter((s) => s !== null && s !== undefined);
  let text = "";
  let open = streams.length;
  for (const s of streams) {
    s.on("data", (b: Buffer) => (text += b.toString("utf8")));
    s.on("error", () => undefined);
    s.on("end", () => {
      if (--open === 0 && text.trim() !== "") setupFailed(text.trim().replace(/^setpriv: /, ""));
    });
  }
  return child;
}

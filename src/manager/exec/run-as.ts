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
  /** The task's stdin file (absolute); none: stdin is empty. */
  stdin?: string;
}

/** Starts processes as a given user. */
export interface UserLauncher {
  /** True when tasks may run as users other than this process's (it is root). */
  readonly canSwitchUsers: boolean;
  /**
   * Starts `task` as `uid` in a new session. Throws (a JobtapError naming the path, or the
   * spawn error) when it cannot start at all; a failure found once running as the user
   * (cwd, output files, program not found) is handed to `setupFailed` before the child's
   * `close` event, and the child exits with status 126.
   */
  spawn(uid: number, task: TaskLaunch, setupFailed: (why: string) => void): ChildProcess;
}

const SETPRIV = "/usr/bin/setpriv";

/** The wrapper run as the user: $1 cwd, $2 stdout path, $3 stderr path, $4 stdin path or "", then the command. */
const WRAPPER = `
fail() { printf '%s\\n' "$1" >&3; exit 126; }
cd -- "$1" 2>/dev/null || fail "cannot enter working directory \\"$1\\""
for f in "$2" "$3"; do
  if [ -e "$f" ] && [ ! -f "$f" ]; then fail "output \\"$f\\": not a regular file (FIFOs, devices and directories are refused)"; fi
  if ! { true >>"$f"; } 2>/dev/null; then r=$( { true >>"$f"; } 2>&1 ); fail "output \\"$f\\": cannot open it: \${r##*: }"; fi
done
exec 4>>"$2" 5>>"$3"
t=$(stat -L -f -c %T /proc/self/fd/4 /proc/self/fd/5 2>/dev/null) || fail "output: cannot check the output files"
for fs in $t; do case $fs in proc|sysfs|cgroup*|debugfs|securityfs|tracefs) fail "output: a /proc or /sys file (refused)";; esac; done
if [ -n "$4" ]; then
  [ -f "$4" ] || fail "input \\"$4\\": not a regular file or not there"
  exec 0<"$4" 2>/dev/null || fail "input \\"$4\\": cannot open it"
fi
shift 4
command -v -- "$1" >/dev/null 2>&1 || fail "cannot execute \\"$1\\": not found"
exec >&4 2>&5 4>&- 5>&- 3>&-
exec "$@"
`;

/** How long a user's primary gid is trusted before the password database is asked again. */
const PASSWD_TTL_MS = 60_000;

/** The launcher of this process: switches users only when running as root (or never, if told). */
export function processLauncher(opts: { canSwitchUsers?: boolean } = {}): UserLauncher {
  const self = process.getuid?.() ?? 0;
  const canSwitchUsers = opts.canSwitchUsers ?? self === 0;
  const gids = new Map<number, { gid: number; until: number }>();
  const primaryGid = (uid: number): number => {
    const hit = gids.get(uid);
    if (hit && hit.until > Date.now()) return hit.gid;
    const r = spawnSync("getent", ["passwd", String(uid)], { encoding: "utf8" });
    const gid = Number(r.status === 0 ? r.stdout.split(":")[3] : NaN);
    if (!Number.isInteger(gid)) throw new JobtapError(ErrorCode.PERMISSION_DENIED, `the job's user (uid ${uid}) is not in the password database`);
    gids.set(uid, { gid, until: Date.now() + PASSWD_TTL_MS });
    return gid;
  };
  return {
    canSwitchUsers,
    spawn(uid, task, setupFailed) {
      if (uid === self) return spawnDirect(task);
      if (!canSwitchUsers) throw cannotSwitch(uid, self);
      return spawnSwitched(uid, primaryGid(uid), task, setupFailed);
    },
  };
}

/** Why a job of `uid` cannot run on an instance whose daemon runs as `self`. */
export function cannotSwitch(uid: number, self: number): JobtapError {
  return new JobtapError(
    ErrorCode.PERMISSION_DENIED,
    `this instance cannot run jobs as uid ${uid}: its daemon runs as uid ${self}, not root, and never runs a job as another user`,
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

/** Another user: setpriv, then the wrapper opens the files as that user. */
function spawnSwitched(uid: number, gid: number, task: TaskLaunch, setupFailed: (why: string) => void): ChildProcess {
  const argv = [`--reuid=${uid}`, `--regid=${gid}`, "--init-groups", "--", "/bin/sh", "-c", WRAPPER, "jobtap-task", task.cwd, task.stdout, task.stderr, task.stdin ?? "", ...task.argv];
  // cwd "/": the working directory is entered by the wrapper, as the user.
  // stderr too: setpriv's own failure (say, a user without a password entry) lands there.
  const child = spawn(SETPRIV, argv, { cwd: "/", env: task.env, stdio: ["ignore", "ignore", "pipe", "pipe"], detached: true });
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

/**
 * The launcher's hook runs (a multi-user instance, docs/hooks.md "Who hooks run as"): a hook
 * program started as a job's user, or as root for perilog's configured commands, its stdin
 * written, its stdout and stderr sent back (up to the caps the daemon's runner asked for),
 * then its exit and the end of its output. The daemon's runner keeps the time limits and
 * decides the kills, which come back as `signal` requests for the hook's process group.
 *
 * Who may be run: a job's hook only as the uid the daemon authorised for that job (the same
 * rule as its tasks; root only with `--allow-root`); a root hook only when its whole argv is
 * one the launcher was given at start (`--root-hooks`, read by root from the configuration
 * before the daemon dropped its rights), as Flux's IMP runs only its configured prolog.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { OUT_CHUNK, type LauncherAnswer, type LauncherRequest } from "./launcher-proto.js";
import { procStartTime } from "./proc.js";
import { passwdEntry } from "./run-as.js";

type Hook = Extract<LauncherRequest, { op: "hook" }>;

/** What the launcher shares with its hook runs. */
export interface HookSide {
  send(m: LauncherAnswer): void;
  authorised: ReadonlyMap<string, number>;
  allowRoot: boolean;
  /** The argvs root may run (perilog's prolog and epilog commands). */
  rootHooks: readonly (readonly string[])[];
  /** pid → what the launcher started, so that `signal` reaches the hook's group. */
  tasks: Map<number, { starttime: number | undefined; job: string }>;
}

/** The `--root-hooks=BASE64(JSON)` argument's argvs; none when absent or unreadable. */
export function rootHooksArg(argv: readonly string[]): string[][] {
  const arg = argv.find((a) => a.startsWith("--root-hooks="));
  if (arg === undefined) return [];
  try {
    const v: unknown = JSON.parse(Buffer.from(arg.slice("--root-hooks=".length), "base64").toString("utf8"));
    return Array.isArray(v) ? v.filter((c): c is string[] => Array.isArray(c) && c.every((w) => typeof w === "string")) : [];
  } catch {
    return [];
  }
}

/** Why `m` may not run, or undefined. */
export function hookRefusal(m: Hook, side: HookSide): string | undefined {
  const argv = [m.path, ...m.args];
  if (m.uid === 0 && m.job === "") {
    const ok = side.rootHooks.some((c) => c.length === argv.length && c.every((w, i) => w === argv[i]));
    return ok ? undefined : `launcher: refused to run hook ${m.path} as root: only the configured perilog commands run as root`;
  }
  const ok = side.authorised.get(m.job);
  if (ok !== m.uid) return `launcher: hook ${m.path} of job ${m.job} is not authorised to run as uid ${m.uid}${ok === undefined ? "" : ` (its user is uid ${ok})`}`;
  if (m.uid === 0 && !side.allowRoot) return `launcher: hook ${m.path} of job ${m.job}: root's jobs are refused ([exec] allow-root is false)`;
  return undefined;
}

/** Starts one hook run, or answers `error` naming why it cannot. */
export function startHook(m: Hook, side: HookSide): void {
  const why = hookRefusal(m, side);
  if (why !== undefined) {
    side.send({ op: "log", level: "warn", message: why });
    side.send({ op: "error", req: m.req, message: why, code: "EPERM" });
    return;
  }
  let child: ChildProcess;
  try {
    child = spawnHook(m);
  } catch (e) {
    side.send({ op: "error", req: m.req, message: (e as Error).message, code: (e as { code?: string }).code ?? "EPERM" });
    return;
  }
  child.once("error", (e: NodeJS.ErrnoException) => {
    if (child.pid === undefined) side.send({ op: "error", req: m.req, message: e.message, code: e.code ?? "EUNKNOWN" });
  });
  const pid = child.pid;
  if (pid === undefined) return;
  const starttime = procStartTime(pid);
  side.tasks.set(pid, { starttime, job: m.job });
  side.send({ op: "spawned", req: m.req, pid, starttime });
  const dropped = { stdout: 0, stderr: 0 };
  for (const stream of ["stdout", "stderr"] as const) {
    let kept = 0;
    const cap = stream === "stdout" ? (m.caps.stdout ?? Infinity) : m.caps.stderr;
    child[stream]!.on("data", (b: Buffer) => {
      const part = b.subarray(0, Math.max(0, Math.min(b.length, cap - kept)));
      kept += part.length;
      dropped[stream] += b.length - part.length;
      for (let at = 0; at < part.length; at += OUT_CHUNK) {
        side.send({ op: "out", req: m.req, stream, data: part.subarray(at, at + OUT_CHUNK).toString("base64") });
      }
    });
  }
  child.once("exit", (code, signal) => {
    side.tasks.delete(pid);
    // What is left of the hook's process family goes with it, as in the daemon's own runs.
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // nothing left
    }
    side.send({ op: "hookexit", req: m.req, code, signal });
  });
  child.once("close", () => side.send({ op: "closed", req: m.req, dropped }));
  if (m.stdin !== undefined && child.stdin) {
    child.stdin.on("error", () => undefined); // EPIPE: the hook did not read all of stdin
    child.stdin.end(Buffer.from(m.stdin, "base64"));
  }
}

/**
 * Root: the program itself. Another user: setpriv (uid, gid, initgroups) execs it, with
 * HOME, USER, LOGNAME and SHELL from the password database; a program the user may not
 * execute ends with setpriv's status 126 (127: not found) and its message on stderr.
 */
function spawnHook(m: Hook): ChildProcess {
  const stdio = [m.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"] as ("pipe" | "ignore")[];
  const cwd = m.cwd ?? "/";
  if (m.uid === 0) return spawn(m.path, m.args, { env: m.env, cwd, detached: true, stdio });
  const user = passwdEntry(m.uid);
  if (!user) throw Object.assign(new Error(`the job's user (uid ${m.uid}) is not in the password database`), { code: "ENOENT" });
  const env = { ...m.env, HOME: user.home, USER: user.name, LOGNAME: user.name, SHELL: user.shell };
  const argv = [`--reuid=${user.uid}`, `--regid=${user.gid}`, "--init-groups", "--", m.path, ...m.args];
  return spawn("/usr/bin/setpriv", argv, { env, cwd, detached: true, stdio });
}

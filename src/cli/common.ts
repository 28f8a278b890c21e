/**
 * What the subcommands share: finding the daemon's socket, one client per invocation, and
 * the exit status a finished job maps to.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { connectDaemon, type DaemonClient } from "../server/client.js";
import type { JobView } from "../server/protocol.js";
import { ACTIVE } from "../manager/base/states.js";
import { usage } from "./args.js";
import type { CliIO } from "./io.js";
import { loadUserTable } from "../manager/base/users.js";

/** `$JOBTAP_STATEDIR`, else `${XDG_STATE_HOME:-~/.local/state}/jobtap`. */
export function defaultStatedir(env: NodeJS.ProcessEnv): string {
  if (env.JOBTAP_STATEDIR) return env.JOBTAP_STATEDIR;
  const stateHome = env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state");
  return join(stateHome, "jobtap");
}

/** The socket a client uses: `$JOBTAP_SOCKET` (set by `--socket`), else the statedir's. */
export function socketPathFor(env: NodeJS.ProcessEnv): string {
  return env.JOBTAP_SOCKET || join(defaultStatedir(env), "jobtap.sock");
}

/** Runs `fn` with a client for the daemon `io` points at, closing it afterwards. */
export async function withDaemon<T>(io: CliIO, fn: (client: DaemonClient) => Promise<T>): Promise<T> {
  const client = connectDaemon(socketPathFor(io.env));
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

/** The requesting user: the client's own uid (the socket's 0600 mode is the access control). */
export function currentUserid(): number {
  return typeof process.getuid === "function" ? process.getuid() : 0;
}

/**
 * The exit status `submit --wait` and `wait` report for a finished job: 0 if it completed,
 * the task's exit code (or 128+signal) if it failed with a wait status, else 1.
 */
export function exitStatusOf(job: JobView): number {
  if (job.result === "COMPLETED") return 0;
  const ws = job.waitstatus;
  if (ws !== undefined && ws !== 0) {
    const signal = ws & 0x7f;
    return signal !== 0 ? 128 + signal : (ws >> 8) & 0xff || 1;
  }
  return 1;
}

/**
 * The ids of the active jobs of `user` (a name or uid; "all" for every user's; undefined
 * for the caller's own), for `cancel --all` and `wait --all`.
 */
export async function activeJobIds(client: DaemonClient, user: string | undefined): Promise<string[]> {
  let userid: number | undefined = currentUserid();
  if (user === "all") userid = undefined;
  else if (user !== undefined) {
    userid = loadUserTable().uid(user);
    if (userid === undefined) throw usage(`--user: no such user "${user}"`);
  }
  const { jobs } = await client.call("list", { states: [...ACTIVE], ...(userid === undefined ? {} : { userid }) });
  return (jobs as JobView[]).map((j) => j.id);
}

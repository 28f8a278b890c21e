/**
 * The daemon's wire protocol: HTTP/1.1 + JSON over a Unix socket.
 *
 * Every call is `POST /v1/<method>` with a JSON object body; the answer is `200` with
 * `{"result": ...}` or a 4xx/5xx with `{"error": {code, message, details?}}` (a
 * JobtapErrorData). `eventlog` with `follow: true` streams RFC 18 JSON lines instead, one
 * entry per line, until the job is inactive or the client hangs up.
 *
 * Job ids cross the wire as f58 strings (JSON has no 64-bit integers); the daemon accepts any
 * encoding `parseJobId` does. Who calls is never taken from a request: the client proves
 * its uid with a proof file named in its first request (`authorization: Proof NONCE`, or
 * in two steps with `auth.challenge` and `auth.prove`: see auth.ts) and sends the token it
 * got in an `authorization: Bearer TOKEN` header; every method except `ping` and the two
 * auth methods needs one of the two (see docs/cli.md, "Who may do what").
 */
import type { EventEntry, Jobspec } from "../manager/port/records.js";
import type { Explanation } from "../manager/port/reasons.js";

export type { Explanation, Reason, ReasonLayer, Figure } from "../manager/port/reasons.js";
import type { Scope, TokenView } from "./http/tokens.js";
import type { StatsView } from "./http/stats.js";

/** The path prefix of every call; bumped if a method changes incompatibly. */
export const API_PREFIX = "/v1/";

/** Default cap on a request body: large enough for a 10,000-job `--cc` batch. */
export const DEFAULT_MAX_REQUEST_BYTES = 32 * 1024 * 1024;

/** One job as `jobs --json` and `job info` show it (documented in docs/cli.md). */
export interface JobView {
  id: string;
  userid: number;
  name: string;
  queue?: string;
  state: string;
  urgency: number;
  priority: number;
  t_submit: number;
  t_depend?: number;
  t_run?: number;
  t_cleanup?: number;
  t_inactive?: number;
  ntasks: number;
  /** Present once the job is inactive (or in CLEANUP with an end event). */
  result?: string;
  waitstatus?: number;
  /** Flux's returncode: the exit code, or minus the signal that killed the job. */
  returncode?: number;
  /** When the job's `start` event was posted (absent: it never started). */
  t_start?: number;
  /** A routed original: the id of its routed copy (`RoutedToJobId`). */
  routed?: string;
  exception?: { type: string; severity: number; note: string };
  annotations: Record<string, unknown> | null;
  dependencies: string[];
  /** A pending job's first reason in one line (`job why`'s), when the listing asked for `reasons`. */
  reason?: string;
}

/** A ClassAd on the wire: old-style text (sorted by name, like `condor_q -l`) and JSON. */
export interface PrintedAd {
  text: string;
  json: Record<string, unknown>;
}

/** A plugin as `plugin list --json` shows it. */
export interface PluginView {
  name: string;
  path: string;
  /** An isolated plugin's state: `running`, `restarting`, or `failed` (with `reason`). */
  isolated?: "running" | "restarting" | "failed";
  reason?: string;
}

/** The request and result types of every method, one table for server and client. */
export interface Methods {
  ping: { req: Record<string, never>; res: { version: string; pid: number; uptime: number } };
  submit: {
    /** `count` (with exactly one jobspec): submit that jobspec `count` times (`--cc`). */
    req: { jobspecs: Jobspec[]; count?: number; urgency?: number; flags?: number };
    /** Ids of the accepted jobs in order; `errors` names rejected ones by request index. */
    res: { ids: string[]; errors?: Array<{ index: number; message: string }> };
  };
  list: {
    /**
     * `constraint`: a ClassAd expression over each job's ad (`condor_q -constraint`).
     * `stream: true`: the jobs come as JSON lines, one JobView each, written in chunks
     * between which the daemon serves other requests (`jobtap jobs` over a big store);
     * no job: the plain reply.
     */
    req: { states?: string[]; results?: string[]; userid?: number; limit?: number; constraint?: string; stream?: boolean; reasons?: boolean; cursor?: string };
    /**
     * With `cursor` (the REST API's pagination): jobs by id, newest first, starting below
     * the cursor's id ("" for the first page); `next_cursor` is set when more may follow.
     */
    res: { jobs: JobView[]; next_cursor?: string };
  };
  info: { req: { id: string }; res: { job: JobView; jobspec: Jobspec; R?: unknown } };
  /** Why the job is not running, or how it ended: every layer's reasons (docs/why.md). Visible as `info`. */
  why: { req: { id: string }; res: Explanation };
  /** `path`: "eventlog" (the default, RFC 21's events) or "exec" (executor state, as Flux's exec eventlog). */
  eventlog: { req: { id: string; follow?: boolean; path?: string }; res: { eventlog: EventEntry[] } };
  /** A job's ad (docs/ads.md): `text` as `condor_q -l` prints it, `json` as adToJSON. */
  jobad: { req: { id: string }; res: PrintedAd };
  /** Host ads (docs/ads.md): the slot ads (default), the machine ad, or one slot's ad. */
  ads: { req: { machine?: boolean; slot?: number; constraint?: string }; res: { ads: PrintedAd[] } };
  wait: { req: { id: string }; res: { job: JobView } };
  cancel: { req: { ids: string[]; note?: string }; res: { canceled: string[] } };
  urgency: { req: { id: string; urgency: number }; res: { old_urgency: number } };
  /**
   * A local job's output from byte `offset` (`submit --watch`); `done`: the job had ended.
   * `tail` (1..65536): the file's last `tail` bytes instead, `offset` ignored (the dashboard).
   */
  output: { req: { id: string; stream: "stdout" | "stderr"; offset: number; tail?: number }; res: { data: string; offset: number; done: boolean } };
  /** `flux job kill`: a signal number to a running job's processes. */
  kill: { req: { id: string; signum: number }; res: Record<string, never> };
  /** `flux job purge`: ids, or `age_limit` (seconds) / `num_limit`; only with `force`. */
  purge: {
    req: { ids?: string[]; age_limit?: number; num_limit?: number; force?: boolean };
    res: { ids: string[]; purged: boolean };
  };
  /** Jobspec updates (`flux update`): period-delimited keys, all applied or none. */
  update: { req: { id: string; updates: Record<string, unknown> }; res: Record<string, never> };
  raise: {
    req: { id: string; type: string; severity: number; note?: string };
    res: Record<string, never>;
  };
  /** Flux's job-exec-override for test-executor jobs in override mode: start, or finish with status. */
  "exec-override": { req: { id: string; event: string; status?: number }; res: Record<string, never> };
  "plugin.list": { req: { all?: boolean }; res: { plugins: PluginView[] } };
  /** `remove` (a name, glob or "all") is removed before the load. */
  /** `isolate`: run the plugin in a worker thread (docs/plugins.md, "Isolated plugins"). */
  "plugin.load": { req: { path: string; conf?: Record<string, unknown>; remove?: string; isolate?: boolean }; res: { name: string } };
  "plugin.remove": { req: { name: string }; res: { removed: string[] } };
  "plugin.query": { req: { name: string }; res: Record<string, unknown> };
  /**
   * Streams plugin handler calls and job state transitions (one JSON line each, a
   * TraceRecord) until the client hangs up. Owner only.
   */
  "plugin.trace": { req: { plugin?: string; topic?: string; job?: string }; res: Record<string, never> };
  /**
   * Calls a plugin service `<plugin>.<method>` (registered with `p.serviceRegister`) with
   * the caller's uid: owner-only unless the plugin opened it to guests. The result is
   * whatever the service returns.
   */
  "plugin.call": { req: { plugin: string; method: string; payload?: unknown }; res: unknown };
  /** Re-reads the daemon's `--config` file; `plugins_reapplied` if the plugin list changed. */
  "config.reload": { req: Record<string, never>; res: { source: string; plugins_reapplied: boolean } };
  /**
   * A bearer token for the HTTP listener (docs/api.md): for the caller, or (owner only) for
   * `userid`; `ttl` in seconds. The token text is in this reply only; the daemon keeps its hash.
   */
  "token.create": { req: { userid?: number; scope?: Scope; ttl?: number }; res: { token: string; info: TokenView } };
  /** The caller's tokens (the owner's: everyone's). */
  "token.list": { req: Record<string, never>; res: { tokens: TokenView[] } };
  /** Revokes a token by id (its user's or the owner's); later requests with it get 401. */
  "token.revoke": { req: { id: string }; res: { info: TokenView } };
  /** A one-time dashboard login URL for the caller (`jobtap web`); `expires` in seconds since the epoch. */
  "web.code": { req: Record<string, never>; res: { url: string; expires: number } };
  /** Trades a login code (once) for a session token of its user (HTTP: the one route without a token). */
  "web.login": { req: { code: string }; res: { token: string; user: string; userid: number; owner: boolean; scope: Scope; expires: number } };
  /** Who the caller's token stands for. */
  "web.whoami": { req: Record<string, never>; res: { user: string; userid: number; owner: boolean; scope: Scope } };
  /**
   * Streams job state changes, at most one message per 100 ms (`{cursor, changes}` or
   * `{cursor, reset}`), from now or from `since` (a cursor), until the client hangs up.
   */
  "web.events": { req: { since?: string }; res: Record<string, never> };
  /** The last hour of throughput, queue depth and latency in 10-second buckets. */
  "web.stats": { req: Record<string, never>; res: StatsView };
  /** Step 1 of proving who you are: a fresh nonce and the directory to write its proof in. */
  "auth.challenge": { req: Record<string, never>; res: { nonce: string; dir: string } };
  /** Step 3: the proof file is checked; the token authenticates later requests. */
  "auth.prove": { req: { nonce: string }; res: { token: string; userid: number } };
}

/** The reply header carrying the token a `Proof` authorization earned (lowercase, as Node reads it). */
export const TOKEN_HEADER = "x-jobtap-token";

/** Methods the socket server answers itself (authentication), not the service handlers. */
export type AuthMethod = "auth.challenge" | "auth.prove";

/** Methods served without a token. */
export const PUBLIC_METHODS: readonly MethodName[] = ["ping", "auth.challenge", "auth.prove"];

export type MethodName = keyof Methods;

export const METHOD_NAMES: readonly MethodName[] = [
  "ping",
  "submit",
  "list",
  "info",
  "why",
  "eventlog",
  "jobad",
  "ads",
  "wait",
  "cancel",
  "urgency",
  "kill",
  "purge",
  "output",
  "raise",
  "update",
  "exec-override",
  "plugin.list",
  "plugin.load",
  "plugin.remove",
  "plugin.query",
  "plugin.trace",
  "plugin.call",
  "config.reload",
  "token.create",
  "token.list",
  "token.revoke",
  "web.code",
  "web.login",
  "web.whoami",
  "web.events",
  "web.stats",
  "auth.challenge",
  "auth.prove",
];

/** True if `name` is a method the daemon serves. */
export function isMethodName(name: string): name is MethodName {
  return (METHOD_NAMES as readonly string[]).includes(name);
}

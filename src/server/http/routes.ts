/**
 * The REST API's route table: each route is a protocol method (protocol.ts) reached by an
 * HTTP verb and path, with the scope it needs and how its request is built from the path,
 * the query string and the body. The same service handlers serve it as serve the socket, so
 * owner/guest rules cannot differ; the OpenAPI document (openapi.ts) is generated from it.
 */
import { ErrorCode, JobtapError } from "../../errors.js";
import { PENDING, RESULTS, RUNNING, ACTIVE, STATES } from "../../manager/base/states.js";
import { loadUserTable } from "../../manager/base/users.js";
import type { Methods } from "../protocol.js";
import type { ServedMethod } from "../server.js";
import { BODIES, RESPONSES, type JsonSchema } from "./schemas.js";
import { WEB_ROUTES } from "./web-routes.js";
import type { Scope } from "./tokens.js";

/** What a route's request is built from. */
export interface RouteInput {
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown>;
}

export interface QueryParam {
  name: string;
  schema: JsonSchema;
  description: string;
}

export interface Route<M extends ServedMethod = ServedMethod> {
  verb: "GET" | "POST" | "DELETE";
  /** Under /api/v1, with `{name}` path parameters. */
  path: string;
  method: M;
  scope: Scope;
  summary: string;
  body?: JsonSchema;
  query?: QueryParam[];
  response: JsonSchema;
  /** `?follow=1` turns the reply into Server-Sent Events of the lines the handler streams ("always": every reply). */
  sse?: boolean | "always";
  /** Served without a token (the login: its body is the credential); rate-limited by address. */
  public?: boolean;
  build(input: RouteInput): Methods[M]["req"];
}

/** Keeps each route's `build` typed by its own method. */
function route<M extends ServedMethod>(r: Route<M>): Route {
  return r as unknown as Route;
}

const flag = (q: URLSearchParams, name: string) => {
  const v = q.get(name);
  return v === "1" || v === "true";
};

const UPDATE_QUEUE = "update-queue";

/** Every REST route (the OpenAPI document lists them in this order). */
export const ROUTES: readonly Route[] = [
  route({
    verb: "POST", path: "/login", method: "web.login", scope: "read", public: true, summary: "trade a one-time code from `jobtap web` for a 12-hour session token (no token needed)",
    body: BODIES.login, response: RESPONSES.login, build: ({ body }) => ({ code: body.code as string }),
  }),
  route({ verb: "GET", path: "/whoami", method: "web.whoami", scope: "read", summary: "the user, owner flag and scope the token stands for", response: RESPONSES.whoami, build: () => ({}) }),
  route({ verb: "GET", path: "/ping", method: "ping", scope: "read", summary: "the daemon's version, pid and uptime", response: RESPONSES.ping, build: () => ({}) }),
  route({
    verb: "POST", path: "/jobs", method: "submit", scope: "submit", summary: "submit one job or a batch (as the token's user)",
    body: BODIES.submit, response: RESPONSES.submit,
    build: ({ body }) => body as Methods["submit"]["req"],
  }),
  route({
    verb: "GET", path: "/jobs", method: "list", scope: "read", summary: "list jobs, newest first, a page at a time",
    query: [
      { name: "state", schema: { type: "string" }, description: "comma-separated states or results, as `jobtap jobs -f` (default: active)" },
      { name: "user", schema: { type: "string" }, description: "a user name or uid, or `all` (default: all)" },
      { name: "constraint", schema: { type: "string" }, description: "a ClassAd expression over each job's ad" },
      { name: "limit", schema: { type: "integer", minimum: 1, maximum: 1000 }, description: "jobs per page (default 100)" },
      { name: "cursor", schema: { type: "string" }, description: "the next_cursor of the previous page" },
    ],
    response: RESPONSES.list,
    build: ({ query }) => listRequest(query),
  }),
  route({ verb: "GET", path: "/jobs/{id}/why", method: "why", scope: "read", summary: "why the job is not running, or how it ended (docs/why.md)", response: RESPONSES.why, build: ({ params }) => ({ id: params.id as string }) }),
  route({ verb: "GET", path: "/jobs/{id}", method: "info", scope: "read", summary: "one job, its jobspec and resources", response: RESPONSES.info, build: ({ params }) => ({ id: params.id as string }) }),
  route({
    verb: "GET", path: "/jobs/{id}/eventlog", method: "eventlog", scope: "read", summary: "a job's eventlog; ?follow=1 streams it as Server-Sent Events until the job is inactive",
    query: [{ name: "follow", schema: { type: "integer", enum: [0, 1] }, description: "1: text/event-stream, one `data:` line per entry" }],
    response: RESPONSES.eventlog, sse: true,
    build: ({ params, query }) => ({ id: params.id as string, ...(flag(query, "follow") ? { follow: true } : {}) }),
  }),
  route({
    verb: "POST", path: "/jobs/{id}/cancel", method: "cancel", scope: "submit", summary: "cancel a job", body: BODIES.cancel, response: RESPONSES.cancel,
    build: ({ params, body }) => ({ ids: [params.id as string], ...(body.note === undefined ? {} : { note: body.note as string }) }),
  }),
  route({
    verb: "POST", path: "/jobs/{id}/urgency", method: "urgency", scope: "submit", summary: "set a job's urgency (0 holds, 31 expedites)", body: BODIES.urgency, response: RESPONSES.urgency,
    build: ({ params, body }) => ({ id: params.id as string, urgency: body.urgency as number }),
  }),
  route({
    verb: "POST", path: "/jobs/{id}/update", method: "update", scope: "submit", summary: "update a pending job's jobspec (`flux update`)", body: BODIES.update, response: RESPONSES.empty,
    build: ({ params, body }) => ({ id: params.id as string, updates: body.updates as Record<string, unknown> }),
  }),
  route({
    verb: "POST", path: "/jobs/{id}/raise", method: "raise", scope: "submit", summary: "raise an exception on a job", body: BODIES.raise, response: RESPONSES.empty,
    build: ({ params, body }) => ({ id: params.id as string, ...(body as { type: string; severity: number; note?: string }) }),
  }),
  route({
    verb: "GET", path: "/plugins", method: "plugin.list", scope: "admin", summary: "loaded plugins (owner only)",
    query: [{ name: "all", schema: { type: "integer", enum: [0, 1] }, description: "1: builtins too" }],
    response: RESPONSES.pluginList, build: ({ query }) => ({ all: flag(query, "all") }),
  }),
  route({ verb: "POST", path: "/plugins", method: "plugin.load", scope: "admin", summary: "load a plugin (owner only)", body: BODIES.pluginLoad, response: RESPONSES.pluginLoad, build: ({ body }) => body as Methods["plugin.load"]["req"] }),
  route({ verb: "GET", path: "/plugins/{name}", method: "plugin.query", scope: "admin", summary: "a plugin's query answer (owner only)", response: RESPONSES.pluginQuery, build: ({ params }) => ({ name: params.name as string }) }),
  route({ verb: "DELETE", path: "/plugins/{name}", method: "plugin.remove", scope: "admin", summary: "remove plugins by name or glob (owner only)", response: RESPONSES.pluginRemove, build: ({ params }) => ({ name: params.name as string }) }),
  route({
    verb: "GET", path: "/queues", method: "plugin.call", scope: "read", summary: "whether each queue takes submissions and schedules (`jobtap queue status`)",
    response: RESPONSES.queues, build: () => ({ plugin: UPDATE_QUEUE, method: "status", payload: {} }),
  }),
  ...(["start", "stop"] as const).map((verb) =>
    route({
      verb: "POST", path: `/queues/${verb}`, method: "plugin.call", scope: "admin", summary: `${verb} scheduling a queue (owner only)`, body: BODIES.queueChange, response: RESPONSES.queueChange,
      build: ({ body }) => ({ plugin: UPDATE_QUEUE, method: verb, payload: body }),
    }),
  ),
  ...WEB_ROUTES,
];

/** `GET /jobs` query → a list request (REST pages always: see service.ts `listPage`). */
function listRequest(q: URLSearchParams): Methods["list"]["req"] {
  const filter = stateFilter(q.get("state") ?? "active");
  const user = q.get("user") ?? "all";
  const userid = user === "all" ? undefined : loadUserTable().uid(user);
  if (user !== "all" && userid === undefined) bad(`user: no such user ${JSON.stringify(user)}`);
  const limitText = q.get("limit") ?? "100";
  const limit = /^\d{1,4}$/.test(limitText) ? Number(limitText) : NaN;
  if (!(limit >= 1 && limit <= 1000)) bad(`limit must be 1..1000, got ${JSON.stringify(limitText)}`);
  const constraint = q.get("constraint");
  return {
    ...filter,
    ...(userid === undefined ? {} : { userid }),
    ...(constraint === null ? {} : { constraint }),
    limit,
    cursor: q.get("cursor") ?? "",
  };
}

/** States and results as `jobtap jobs -f` reads them (pending, running, active, STATES, RESULTS). */
function stateFilter(text: string): { states: string[]; results: string[] } {
  const states = new Set<string>();
  const results = new Set<string>();
  for (const raw of text.split(",")) {
    const word = raw.trim().toUpperCase();
    const group = word === "PENDING" ? PENDING : word === "RUNNING" ? RUNNING : word === "ACTIVE" ? ACTIVE : undefined;
    if (group) group.forEach((s) => states.add(s));
    else if ((STATES as readonly string[]).includes(word)) states.add(word);
    else if ((RESULTS as readonly string[]).includes(word)) results.add(word);
    else bad(`state: unknown state or result ${JSON.stringify(raw)}`);
  }
  return { states: [...states], results: [...results] };
}

function bad(why: string): never {
  throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `GET /api/v1/jobs: ${why}`);
}

/** A route matched against a request: the route and its decoded path parameters. */
export interface Match {
  route: Route;
  params: Record<string, string>;
}

/**
 * The route for `verb` and the path segments after /api/v1 (already split and decoded), or
 * the verbs the path accepts (for a 405-like 404 message), or nothing.
 */
export function matchRoute(verb: string, segments: string[]): Match | { verbs: string[] } | undefined {
  const verbs: string[] = [];
  for (const r of ROUTES) {
    const params = matchPath(r.path, segments);
    if (params === undefined) continue;
    if (r.verb === verb) return { route: r, params };
    verbs.push(r.verb);
  }
  return verbs.length > 0 ? { verbs } : undefined;
}

function matchPath(pattern: string, segments: string[]): Record<string, string> | undefined {
  const parts = pattern.split("/").slice(1);
  if (parts.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i] as string;
    const s = segments[i] as string;
    if (p.startsWith("{")) params[p.slice(1, -1)] = s;
    else if (p !== s) return undefined;
  }
  return params;
}

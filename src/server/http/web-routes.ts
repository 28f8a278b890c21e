/**
 * The REST routes the dashboard reads beyond the job routes (docs/api.md, "Routes for the
 * dashboard"): host ads, a job's ad and output tail, the router, cron, a plugin's query and
 * the live trace. Each is a protocol method served by the socket's own handler, so who may
 * read what is the socket's rule (ads, router and cron for everyone; a job's ad as `job
 * info`; output for the job's user and the owner; plugin query and trace for the owner).
 */
import { ErrorCode, JobtapError } from "../../errors.js";
import type { Methods } from "../protocol.js";
import type { ServedMethod } from "../server.js";
import type { Route, RouteInput } from "./routes.js";
import { RESPONSES } from "./schemas.js";
import { WEB_RESPONSES } from "./web-schemas.js";

function route<M extends ServedMethod>(r: Route<M>): Route {
  return r as unknown as Route;
}

const flag = (q: URLSearchParams, name: string) => {
  const v = q.get(name);
  return v === "1" || v === "true";
};

/** A non-negative integer query parameter, or `fallback` when absent; 400 otherwise. */
function intParam(q: URLSearchParams, name: string, what: string, fallback?: number): number | undefined {
  const v = q.get(name);
  if (v === null) return fallback;
  if (!/^\d{1,9}$/.test(v)) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `${what}: ${name} must be a non-negative integer, got ${JSON.stringify(v.slice(0, 40))}`);
  return Number(v);
}

const idOf = ({ params }: RouteInput) => params.id as string;

export const WEB_ROUTES: readonly Route[] = [
  route({
    verb: "GET", path: "/ads", method: "ads", scope: "read", summary: "the slot ads (default), the machine ad, or one slot's ad, as `jobtap ads --json` (anyone, as condor_status)",
    query: [
      { name: "machine", schema: { type: "integer", enum: [0, 1] }, description: "1: the machine ad" },
      { name: "slot", schema: { type: "integer", minimum: 0 }, description: "one slot's ad" },
      { name: "constraint", schema: { type: "string" }, description: "a ClassAd expression the slot ads must match" },
    ],
    response: WEB_RESPONSES.ads,
    build: ({ query }) => {
      const slot = intParam(query, "slot", "GET /api/v1/ads");
      const constraint = query.get("constraint");
      return { ...(flag(query, "machine") ? { machine: true } : {}), ...(slot === undefined ? {} : { slot }), ...(constraint === null ? {} : { constraint }) };
    },
  }),
  route({ verb: "GET", path: "/jobs/{id}/jobad", method: "jobad", scope: "read", summary: "the job's ClassAd (visible as `job info`)", response: WEB_RESPONSES.jobad, build: (i) => ({ id: idOf(i) }) }),
  route({
    verb: "GET", path: "/jobs/{id}/output", method: "output", scope: "read", summary: "the tail of a local job's stdout or stderr file (the job's user and the owner only)",
    query: [
      { name: "stream", schema: { type: "string", enum: ["stdout", "stderr"] }, description: "which file (default stdout)" },
      { name: "tail", schema: { type: "integer", minimum: 1, maximum: 65536 }, description: "bytes from the end (default and most: 65536)" },
    ],
    response: WEB_RESPONSES.output,
    build: (i) => {
      const tail = intParam(i.query, "tail", "GET /api/v1/jobs/{id}/output", 65536) as number;
      return { id: idOf(i), stream: (i.query.get("stream") ?? "stdout") as Methods["output"]["req"]["stream"], offset: 0, tail };
    },
  }),
  route({
    verb: "GET", path: "/router", method: "plugin.call", scope: "read", summary: "condor-router's routes, counts, throttles and routed pairs (`jobtap router q --json`)",
    response: WEB_RESPONSES.router, build: () => ({ plugin: "condor-router", method: "q", payload: {} }),
  }),
  route({
    verb: "GET", path: "/cron", method: "plugin.call", scope: "read", summary: "condor-cron's jobs: last run, its status, duration and output head, next run (`jobtap cron list --json`)",
    response: WEB_RESPONSES.cron, build: () => ({ plugin: "condor-cron", method: "list", payload: {} }),
  }),
  route({ verb: "GET", path: "/plugins/{name}/query", method: "plugin.query", scope: "admin", summary: "a plugin's query answer (owner only; the same as GET /plugins/{name})", response: RESPONSES.pluginQuery, build: ({ params }) => ({ name: params.name as string }) }),
  route({
    verb: "GET", path: "/trace", method: "plugin.trace", scope: "admin", summary: "the live plugin trace as Server-Sent Events (owner only; follow=1 required)",
    query: [
      { name: "follow", schema: { type: "integer", enum: [1] }, description: "required: the trace is a stream" },
      { name: "plugin", schema: { type: "string" }, description: "only this plugin's handler calls" },
      { name: "topic", schema: { type: "string" }, description: "only this topic (glob)" },
      { name: "job", schema: { type: "string" }, description: "only this job" },
    ],
    response: WEB_RESPONSES.trace, sse: "always",
    build: ({ query }) => {
      if (!flag(query, "follow")) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, "GET /api/v1/trace: the trace is a live stream: add ?follow=1 (text/event-stream)");
      const opt = (name: "plugin" | "topic" | "job") => (query.get(name) === null ? {} : { [name]: query.get(name) as string });
      return { ...opt("plugin"), ...opt("topic"), ...opt("job") };
    },
  }),
  route({
    verb: "GET", path: "/events", method: "web.events", scope: "read", summary: "job state changes as Server-Sent Events, batched (at most one message per 100 ms); follow=1 required",
    query: [
      { name: "follow", schema: { type: "integer", enum: [1] }, description: "required: the feed is a stream" },
      { name: "since", schema: { type: "string" }, description: "the cursor of the last message received: resume after it (or get a reset)" },
    ],
    response: WEB_RESPONSES.events, sse: "always",
    build: ({ query }) => {
      if (!flag(query, "follow")) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, "GET /api/v1/events: the feed is a live stream: add ?follow=1 (text/event-stream)");
      const since = query.get("since");
      return since === null ? {} : { since };
    },
  }),
  route({ verb: "GET", path: "/stats", method: "web.stats", scope: "read", summary: "the last hour in 10-second buckets: throughput, queue depth by state, plugin callback and hook latency", response: WEB_RESPONSES.stats, build: () => ({}) }),
];

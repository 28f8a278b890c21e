/**
 * Response schemas of the dashboard's data routes (docs/api.md, "Routes for the
 * dashboard"), typed as schemas.ts types its own: against the protocol's result types, or
 * against the shapes the builtin plugins' services answer (declared here, since the server
 * does not import plugin code).
 */
import type { Methods, PrintedAd } from "../protocol.js";
import type { Change } from "./events.js";
import { DEPTH_STATES, type Latency, type StatsBucket, type StatsView } from "./stats.js";
import { objectOf, type JsonSchema } from "./schemas.js";

const str = (description?: string): JsonSchema => ({ type: "string", ...(description ? { description } : {}) });
const int = (description?: string): JsonSchema => ({ type: "integer", ...(description ? { description } : {}) });
const bool = (): JsonSchema => ({ type: "boolean" });
const nullable = (type: "string" | "number" | "integer", description?: string): JsonSchema => ({ type: [type, "null"], ...(description ? { description } : {}) });
const arrayOf = (items: JsonSchema, description?: string): JsonSchema => ({ type: "array", items, ...(description ? { description } : {}) });

/** `condor-router.q`: what `jobtap router q --json` prints. */
export interface RouterQ {
  rows: Array<{ count: number; status: string; route: string; grid_resource: string }>;
  routes: Array<{
    name: string; grid_resource: string; max_jobs: number; max_idle_jobs: number; current: number; running: number; idle: number;
    recent_routed: number; recent_succeeded: number; recent_failed: number; throttle: string; accepting: boolean;
  }>;
  pairs: Array<{ original: string; copy: string | null; route: string; phase: string; original_state: string | null; copy_state: string | null }>;
  warnings: string[];
}

/** `condor-cron.list`: what `jobtap cron list --json` prints. */
export interface CronList {
  jobs: Array<{
    manager: string; name: string; mode: string; period: number | null; state: string; last_run: number | null; last_exit: string | null;
    last_exit_code: number | null; next_run: number | null; last_output_bytes: number; last_duration: number | null; last_output: string; runs: number; ads: string[];
  }>;
  skipped: Array<{ manager: string; job: string; reason: string }>;
}

type RouteRow = RouterQ["routes"][number];
type CronRow = CronList["jobs"][number];

const LATENCY = objectOf<Latency>()(
  { count: int(), p50: nullable("number", "seconds (the upper edge of its histogram bin, within 19%)"), p95: nullable("number", "seconds") },
  ["count", "p50", "p95"],
);

/** A ClassAd as `text` (old ClassAd syntax) and `json`. */
export const PRINTED_AD = objectOf<PrintedAd>()(
  { text: str("the ad as `condor_q -l` / `condor_status -l` print it"), json: { type: "object", additionalProperties: true, description: "the ad's attributes as JSON (what `jobtap ads --json` prints)" } },
  ["text", "json"],
);

export const WEB_RESPONSES = {
  ads: objectOf<Methods["ads"]["res"]>()({ ads: arrayOf(PRINTED_AD) }, ["ads"]),
  jobad: PRINTED_AD,
  output: objectOf<Methods["output"]["res"]>()(
    { data: str("the tail of the file, UTF-8"), offset: int("the file's size when read: the tail ends here"), done: bool() },
    ["data", "offset", "done"],
  ),
  router: objectOf<RouterQ>()(
    {
      rows: arrayOf(objectOf<RouterQ["rows"][number]>()({ count: int(), status: str("a JobStatus letter: I, R, H..."), route: str(), grid_resource: str() }, ["count", "status", "route", "grid_resource"])),
      routes: arrayOf(
        objectOf<RouteRow>()(
          {
            name: str(), grid_resource: str(), max_jobs: int(), max_idle_jobs: int(), current: int(), running: int(), idle: int(),
            recent_routed: int(), recent_succeeded: int(), recent_failed: int(), throttle: str("empty, or until when and why routing is throttled"), accepting: bool(),
          },
          ["name", "grid_resource", "max_jobs", "max_idle_jobs", "current", "running", "idle", "recent_routed", "recent_succeeded", "recent_failed", "throttle", "accepting"],
        ),
      ),
      pairs: arrayOf(
        objectOf<RouterQ["pairs"][number]>()(
          { original: str(), copy: nullable("string"), route: str(), phase: str("the router's phase for the pair"), original_state: nullable("string", "null once inactive"), copy_state: nullable("string", "null once inactive or not made") },
          ["original", "copy", "route", "phase", "original_state", "copy_state"],
        ),
        "routed originals and their copies, oldest claim first (at most 1000)",
      ),
      warnings: arrayOf(str()),
    },
    ["rows", "routes", "pairs", "warnings"],
  ),
  cron: objectOf<CronList>()(
    {
      jobs: arrayOf(
        objectOf<CronRow>()(
          {
            manager: str("startd, schedd or benchmarks"), name: str(), mode: str(), period: nullable("number"), state: str(), last_run: nullable("number", "seconds since the epoch"),
            last_exit: nullable("string"), last_exit_code: nullable("integer"), next_run: nullable("number"), last_output_bytes: int(),
            last_duration: nullable("number", "seconds"), last_output: str("the head of the last run's stdout, at most 4 KiB"), runs: int(), ads: arrayOf(str()),
          },
          ["manager", "name", "mode", "period", "state", "last_run", "last_exit", "last_exit_code", "next_run", "last_output_bytes", "last_duration", "last_output", "runs", "ads"],
        ),
      ),
      skipped: arrayOf(objectOf<CronList["skipped"][number]>()({ manager: str(), job: str(), reason: str() }, ["manager", "job", "reason"])),
    },
    ["jobs", "skipped"],
  ),
  events: {
    type: "object",
    description: "with follow=1 (required): text/event-stream, each `data:` a message {cursor, changes: [{id, state, t, userid}]} or {cursor, reset: true} (reload the list)",
    properties: {
      cursor: str("pass as ?since= to resume"),
      changes: arrayOf(objectOf<Change>()({ id: str(), state: str(), t: { type: "number", description: "seconds since the epoch" }, userid: int() }, ["id", "state", "t", "userid"])),
      reset: { type: "boolean" },
    },
  } as JsonSchema,
  stats: objectOf<StatsView>()(
    {
      bucket_seconds: int(),
      buckets: arrayOf(
        objectOf<StatsBucket>()(
          {
            t: { type: "number", description: "the bucket's start, seconds since the epoch" },
            submitted: int("jobs submitted in the bucket"),
            inactive: int("jobs that became inactive in the bucket"),
            depth: { type: "object", properties: Object.fromEntries(DEPTH_STATES.map((st) => [st, int()])), required: [...DEPTH_STATES], additionalProperties: false, description: "active jobs by state at the bucket's end" },
            callbacks: LATENCY,
            hooks: LATENCY,
          },
          ["t", "submitted", "inactive", "depth", "callbacks", "hooks"],
        ),
        "oldest first, at most 360 (an hour); the last is in progress",
      ),
    },
    ["bucket_seconds", "buckets"],
  ),
  trace: { type: "object", description: "with follow=1 (required): text/event-stream, one `data:` trace record per line" } as JsonSchema,
} satisfies Record<string, JsonSchema>;

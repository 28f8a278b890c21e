/**
 * JSON Schemas (2020-12, as OpenAPI 3.1 uses) of the REST API's bodies, each typed against
 * the protocol's TypeScript type it describes: `objectOf<T>()` requires a schema for every
 * key of T and no other, and lists exactly T's required keys, so a field added to or removed
 * from protocol.ts fails `npm run typecheck` until its schema follows. No drift, no generator.
 */
import type { EventEntry } from "../../manager/port/records.js";
import type { JobView, Methods, PluginView } from "../protocol.js";
import type { TokenView } from "./tokens.js";
import { REASON_LAYERS, type Reason } from "../../manager/port/reasons.js";

/** The subset of JSON Schema the API's documents use. */
export interface JsonSchema {
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean" | "null" | Array<"object" | "string" | "integer" | "number" | "boolean" | "null">;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: readonly string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: readonly (string | number)[];
  minimum?: number;
  maximum?: number;
  minItems?: number;
  $ref?: string;
}

/** The keys of T that are not optional. */
export type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

type Missing<T, R extends readonly unknown[]> = Exclude<RequiredKeys<T>, R[number]>;

/**
 * An object schema that must name every key of T (and only those) in `properties`, and
 * exactly T's required keys in `required`: a mismatch is a type error naming the key.
 */
export function objectOf<T>() {
  return <const R extends readonly RequiredKeys<T>[]>(
    properties: { [K in keyof T]-?: JsonSchema },
    required: R & ([Missing<T, R>] extends [never] ? unknown : { missingRequired: Missing<T, R> }),
    description?: string,
  ): JsonSchema => ({
    type: "object",
    ...(description === undefined ? {} : { description }),
    properties: properties as Record<string, JsonSchema>,
    required: [...(required as readonly string[])],
    additionalProperties: false,
  });
}

const str = (description?: string): JsonSchema => ({ type: "string", ...(description ? { description } : {}) });
const int = (description?: string): JsonSchema => ({ type: "integer", ...(description ? { description } : {}) });
const num = (description?: string): JsonSchema => ({ type: "number", ...(description ? { description } : {}) });
const bool = (description?: string): JsonSchema => ({ type: "boolean", ...(description ? { description } : {}) });
const anyObject = (description: string): JsonSchema => ({ type: "object", description, additionalProperties: true });
const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const arrayOf = (items: JsonSchema, description?: string): JsonSchema => ({ type: "array", items, ...(description ? { description } : {}) });

const SCOPE: JsonSchema = { type: "string", enum: ["read", "submit", "admin"] };
const exception = objectOf<NonNullable<JobView["exception"]>>()({ type: str(), severity: int(), note: str() }, ["type", "severity", "note"]);

/** The named schemas (components.schemas). */
export const COMPONENTS: Record<string, JsonSchema> = {
  Error: objectOf<{ error: { code: string; message: string; details?: unknown } }>()(
    { error: objectOf<{ code: string; message: string; details?: unknown }>()({ code: str("a stable code from src/errors.ts"), message: str(), details: anyObject("structured details") }, ["code", "message"]) },
    ["error"],
  ),
  Job: objectOf<JobView>()(
    {
      id: str("the job id (f58)"),
      userid: int(),
      name: str(),
      queue: str(),
      state: str(),
      urgency: int(),
      priority: int(),
      t_submit: num(),
      t_depend: num(),
      t_run: num(),
      t_cleanup: num(),
      t_inactive: num(),
      ntasks: int(),
      result: str(),
      waitstatus: int(),
      returncode: int(),
      t_start: num(),
      routed: str(),
      exception,
      annotations: { type: ["object", "null"], additionalProperties: true },
      dependencies: arrayOf(str()),
      reason: str("a pending job's first reason in one line (listings)"),
    },
    ["id", "userid", "name", "state", "urgency", "priority", "t_submit", "ntasks", "annotations", "dependencies"],
    "one job as `jobtap jobs --json` shows it",
  ),
  Reason: objectOf<Reason>()(
    {
      layer: { type: "string", enum: [...REASON_LAYERS] },
      source: str("manager, scheduler, or the plugin's name"),
      code: str("stable, kebab-case (docs/why.md)"),
      text: str(),
      figures: { type: "object", additionalProperties: { type: ["string", "number", "boolean", "null"] } },
      key: str(),
    },
    ["layer", "source", "code", "text", "figures"],
    "one reason a job waits or why it ended (docs/why.md)",
  ),
  Event: objectOf<EventEntry>()({ timestamp: num(), name: str(), context: anyObject("the event's context") }, ["timestamp", "name"], "one RFC 18 eventlog entry"),
  Jobspec: anyObject("a Flux jobspec v1 (docs/cli.md)"),
  Plugin: objectOf<PluginView>()({ name: str(), path: str(), isolated: { type: "string", enum: ["running", "restarting", "failed"] }, reason: str() }, ["name", "path"]),
  Token: objectOf<TokenView>()(
    { id: str(), userid: int(), scope: { type: "string", enum: ["read", "submit", "admin"] }, created: int(), expires: int(), revoked: int(), kind: { type: "string", enum: ["session"], description: "a dashboard login's session token" } },
    ["id", "userid", "scope", "created"],
  ),
};

type Res<M extends keyof Methods> = Methods[M]["res"];
type Req<M extends keyof Methods> = Methods[M]["req"];

/** Request bodies, by route (the path's own fields left out). */
export const BODIES = {
  submit: objectOf<Req<"submit">>()(
    {
      jobspecs: { ...arrayOf(ref("Jobspec"), "one jobspec, or a batch"), minItems: 1 },
      count: int("submit the one jobspec this many times (--cc)"),
      urgency: { type: "integer", minimum: 0, maximum: 31 },
      flags: int(),
    },
    ["jobspecs"],
  ),
  cancel: objectOf<Omit<Req<"cancel">, "ids">>()({ note: str() }, []),
  urgency: objectOf<Omit<Req<"urgency">, "id">>()({ urgency: { type: "integer", minimum: 0, maximum: 31 } }, ["urgency"]),
  update: objectOf<Omit<Req<"update">, "id">>()({ updates: anyObject("period-delimited jobspec keys and their new values") }, ["updates"]),
  raise: objectOf<Omit<Req<"raise">, "id">>()({ type: str(), severity: { type: "integer", minimum: 0, maximum: 7 }, note: str() }, ["type", "severity"]),
  pluginLoad: objectOf<Req<"plugin.load">>()({ path: str(), conf: anyObject("the plugin's conf table"), remove: str(), isolate: bool() }, ["path"]),
  login: objectOf<Req<"web.login">>()({ code: str("the code after #login= in the URL `jobtap web` prints") }, ["code"]),
  queueChange: objectOf<{ name?: string; reason?: string }>()({ name: str("a named queue (none: the default queue)"), reason: str("why (stop)") }, []),
} satisfies Record<string, JsonSchema>;

/** Response bodies (200), by route: the protocol method's result as is. */
export const RESPONSES = {
  ping: objectOf<Res<"ping">>()({ version: str(), pid: int(), uptime: num() }, ["version", "pid", "uptime"]),
  submit: objectOf<Res<"submit">>()(
    { ids: arrayOf(str()), errors: arrayOf(objectOf<{ index: number; message: string }>()({ index: int(), message: str() }, ["index", "message"])) },
    ["ids"],
  ),
  list: objectOf<Res<"list">>()({ jobs: arrayOf(ref("Job")), next_cursor: str("pass as ?cursor= for the next page") }, ["jobs"]),
  info: objectOf<Res<"info">>()({ job: ref("Job"), jobspec: ref("Jobspec"), R: anyObject("the job's resource set") }, ["job", "jobspec"]),
  why: objectOf<Res<"why">>()({ id: str(), state: str(), reasons: arrayOf(ref("Reason")) }, ["id", "state", "reasons"]),
  eventlog: objectOf<Res<"eventlog">>()({ eventlog: arrayOf(ref("Event")) }, ["eventlog"]),
  cancel: objectOf<Res<"cancel">>()({ canceled: arrayOf(str()) }, ["canceled"]),
  urgency: objectOf<Res<"urgency">>()({ old_urgency: int() }, ["old_urgency"]),
  empty: objectOf<Record<never, never>>()({}, []),
  pluginList: objectOf<Res<"plugin.list">>()({ plugins: arrayOf(ref("Plugin")) }, ["plugins"]),
  pluginLoad: objectOf<Res<"plugin.load">>()({ name: str() }, ["name"]),
  pluginRemove: objectOf<Res<"plugin.remove">>()({ removed: arrayOf(str()) }, ["removed"]),
  pluginQuery: anyObject("whatever the plugin's query handler answers"),
  queues: objectOf<{ queues: Record<string, unknown> }>()(
    { queues: { type: "object", description: 'each queue by name ("" for the default queue)', additionalProperties: anyObject("enabled, started and their reasons") } },
    ["queues"],
  ),
  queueChange: anyObject("the update-queue plugin's answer"),
  login: objectOf<Res<"web.login">>()(
    { token: str("a bearer token of kind session"), user: str(), userid: int(), owner: bool(), scope: SCOPE, expires: int("seconds since the epoch") },
    ["token", "user", "userid", "owner", "scope", "expires"],
  ),
  whoami: objectOf<Res<"web.whoami">>()({ user: str(), userid: int(), owner: bool(), scope: SCOPE }, ["user", "userid", "owner", "scope"]),
} satisfies Record<string, JsonSchema>;

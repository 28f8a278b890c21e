/**
 * The OpenAPI 3.1 document of the REST API, generated from the route table (routes.ts) and
 * the schemas typed against protocol.ts (schemas.ts): served at /api/v1/openapi.json.
 */
import { ErrorCode } from "../../errors.js";
import { ROUTES, type Route } from "./routes.js";
import { COMPONENTS, type JsonSchema } from "./schemas.js";
import { REST_PREFIX } from "./rest.js";

const ERROR_REF = { $ref: "#/components/schemas/Error" };

/** The error statuses a route may answer, with what each means. */
const ERRORS: Record<string, string> = {
  "400": "bad request: malformed JSON, an unknown field, a bad id or value",
  "401": "no bearer token, or one unknown, expired or revoked",
  "403": "the token's scope or its user's rights do not allow this",
  "404": "no such job, plugin or route",
  "409": "the job is in a state that does not allow this",
  "413": "the body exceeds [daemon] max-request-size",
  "429": "the token is over [daemon] http-rate-limit (see Retry-After)",
};

/** Builds the document (the same for every caller; `version` is jobtap's). */
export function openapiDocument(version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of ROUTES) (paths[`${REST_PREFIX}${r.path}`] ??= {})[r.verb.toLowerCase()] = operation(r);
  const json = (schema: JsonSchema) => ({ "application/json": { schema } });
  paths["/metrics"] = {
    get: {
      operationId: "metrics",
      summary: "Prometheus metrics (text exposition format); a token unless [daemon] metrics-public",
      security: [{ bearer: [] }, {}],
      responses: { "200": { description: "metrics", content: { "text/plain": { schema: { type: "string" } } } }, "401": { description: ERRORS["401"], content: json(ERROR_REF) } },
    },
  };
  paths[`${REST_PREFIX}/openapi.json`] = {
    get: { operationId: "openapi", summary: "this document", responses: { "200": { description: "the OpenAPI document", content: json({ type: "object" }) } } },
  };
  return {
    openapi: "3.1.0",
    info: { title: "jobtap REST API", version, description: `Bearer tokens from \`jobtap token create\`; errors are {"error": {"code", "message"}} with codes from ${Object.keys(ErrorCode).length} stable names.` },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }],
    paths,
    components: { schemas: COMPONENTS, securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
  };
}

function operation(r: Route): Record<string, unknown> {
  const params = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" }, description: m[1] === "id" ? "a job id (f58, decimal, hex, dothex or words)" : "a plugin name" }));
  const query = (r.query ?? []).map((q) => ({ name: q.name, in: "query", required: false, schema: q.schema, description: q.description }));
  const ok: Record<string, unknown> = { "application/json": { schema: r.response } };
  if (r.sse !== undefined) ok["text/event-stream"] = { schema: { type: "string", description: "with follow=1: `data: EVENT` per entry, then `event: end`" } };
  const responses: Record<string, unknown> = { "200": { description: "success", content: ok } };
  for (const [status, description] of Object.entries(ERRORS)) responses[status] = { description, content: { "application/json": { schema: ERROR_REF } } };
  return {
    operationId: `${r.verb.toLowerCase()}${r.path.replace(/\{(\w+)\}/g, "By-$1").split(/[/-]/).map((w) => (w ? w[0]!.toUpperCase() + w.slice(1) : "")).join("")}`,
    summary: r.summary,
    description: r.public === true ? `No token (the protocol method \`${r.method}\`); rate-limited by client address.` : `Needs a token of scope \`${r.scope}\` or wider (the protocol method \`${r.method}\`).`,
    ...(r.public === true ? { security: [] } : {}),
    parameters: [...params, ...query],
    ...(r.body === undefined ? {} : { requestBody: { required: true, content: { "application/json": { schema: r.body } } } }),
    responses,
  };
}

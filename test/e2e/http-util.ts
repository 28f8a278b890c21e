/**
 * Talking to a daemon's HTTP listener from tests: requests over real TCP on 127.0.0.1
 * (keep-alive agent, or TLS with the test's own CA), the OpenAPI document checked by
 * @seriousme/openapi-schema-validator, and every JSON response checked by ajv (2020-12)
 * against the schema the document gives for its route and status.
 */
import { request as httpRequest, Agent as HttpAgent } from "node:http";
import { request as httpsRequest, Agent as HttpsAgent } from "node:https";
import { Ajv2020 } from "ajv/dist/2020.js";
import { Validator } from "@seriousme/openapi-schema-validator";
import { expect } from "vitest";
import { waitFor } from "./harness.js";

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

export interface ApiOptions {
  /** PEM of the CA that signed the server's certificate (https only). */
  ca?: string;
}

/** A client for one listener URL; `call` never throws on an HTTP error status. */
export class Api {
  private readonly agent: HttpAgent | HttpsAgent;
  private doc: any;
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  /** The documented operations (`VERB /template`) a checked response came from. */
  readonly covered = new Set<string>();

  constructor(readonly base: string, private readonly opts: ApiOptions = {}) {
    this.agent = base.startsWith("https:") ? new HttpsAgent({ keepAlive: true, ...(opts.ca ? { ca: opts.ca } : {}) }) : new HttpAgent({ keepAlive: true });
  }

  /** Sends one request; the body is JSON unless a string (sent as is). */
  call(verb: string, path: string, token: string | undefined, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
    const url = new URL(this.base);
    const text = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
    const req = (this.base.startsWith("https:") ? httpsRequest : httpRequest)({
      host: url.hostname, port: url.port, method: verb, path: asciiPath(path), agent: this.agent,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(text === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(text) }), ...headers },
    });
    return new Promise((resolve, reject) => {
      req.on("error", reject);
      req.on("response", (res) => {
        let data = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (data += d));
        res.on("end", () => {
          let json: unknown;
          try {
            json = JSON.parse(data);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: data, json });
        });
      });
      req.end(text);
    });
  }

  /** Like `call`, then checks the JSON reply against the document's schema for it. */
  async checked_call(verb: string, path: string, token: string | undefined, body?: unknown): Promise<Reply> {
    const r = await this.call(verb, path, token, body);
    if (r.headers["content-type"] === "application/json") this.check(verb, path, r);
    return r;
  }

  /** Loads and validates the OpenAPI document (once). */
  async document(token: string): Promise<any> {
    if (this.doc) return this.doc;
    const r = await this.call("GET", "/api/v1/openapi.json", token);
    expect(r.status).toBe(200);
    const result = await new Validator().validate(r.json);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    this.doc = r.json;
    this.covered.add("GET /api/v1/openapi.json");
    return this.doc;
  }

  /** Asserts `r` matches the document's schema for the route `verb path` and its status. */
  check(verb: string, path: string, r: Reply): void {
    const doc = this.doc;
    if (!doc) throw new Error("call document() first");
    const bare = path.split("?")[0] as string;
    const template = Object.keys(doc.paths).find((t) => new RegExp(`^${t.replace(/\{\w+\}/g, "[^/]+")}$`).test(bare));
    expect(template, `no documented route for ${verb} ${bare}`).toBeDefined();
    const op = doc.paths[template as string][verb.toLowerCase()];
    expect(op, `${verb} ${template} is not documented`).toBeDefined();
    const schema = op.responses[String(r.status)]?.content?.["application/json"]?.schema;
    expect(schema, `${verb} ${template}: status ${r.status} is not documented`).toBeDefined();
    const validate = this.ajv.compile({ ...schema, components: doc.components });
    const ok = validate(r.json);
    expect(ok ? [] : validate.errors, `${verb} ${path} ${r.status}: ${r.text.slice(0, 300)}`).toEqual([]);
    this.covered.add(`${verb} ${template}`);
  }

  close(): void {
    this.agent.destroy();
  }
}

/** A Flux jobspec v1 running `argv` locally, or in the test executor with `system` attributes. */
export function jobspec(argv: string[], system: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    version: 1,
    resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
    tasks: [{ command: argv, slot: "task", count: { per_slot: 1 } }],
    attributes: { system: { duration: 0, ...system } },
  };
}

const LISTENING = /http: listening on (https?:\/\/\S+)/;

/** The listener's URL, from the daemon's log line `http: listening on URL` (once it is read). */
export async function listenerUrl(d: { log: string }): Promise<string> {
  await waitFor(() => LISTENING.test(d.log), 10_000, `the http listener in the daemon's log:\n${d.log}`);
  return (LISTENING.exec(d.log) as RegExpExecArray)[1] as string;
}

/** Job ids print as f58 with a leading "ƒ": percent-encode what is not ASCII. */
export function asciiPath(path: string): string {
  return path.replace(/[^\x00-\x7f]/g, (c) => encodeURIComponent(c));
}

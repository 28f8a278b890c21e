/**
 * Issue 37: the REST API through real TCP on 127.0.0.1, against a real daemon: every route
 * with an admin token of the owner, SSE follow of a running job, cursor pagination, and the
 * OpenAPI document validated by @seriousme/openapi-schema-validator with every response
 * checked against its schema (ajv 2020-12). HTTPS with a self-signed certificate made here.
 */
import { spawnSync } from "node:child_process";
import { request } from "node:http";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonUnderTest, ROOT, daemonForSuite, requireBuild } from "./harness.js";
import { Api, asciiPath, jobspec, listenerUrl } from "./http-util.js";

const HOLD = { exec: { test: { run_duration: "1h" } } };

describe("REST API over HTTP", { timeout: 60_000 }, () => {
  const d = daemonForSuite((d) => {
    const config = join(d.statedir, "jobtap.toml");
    writeFileSync(config, '[daemon]\nhttp = "127.0.0.1:0"\n');
    return ["--config", config];
  });
  let api: Api;
  let token: string;

  beforeAll(async () => {
    api = new Api(await listenerUrl(d));
    token = d.cli(["token", "create", "--scope", "admin"]).stdout.trim();
    await api.document(token);
  });
  afterAll(() => api?.close());

  it("prints a token once and keeps only its hash, in a 0600 file", async () => {
    expect(token).toMatch(/^jtk_[0-9a-f]{16}_/);
    const { readFileSync, statSync } = await import("node:fs");
    const file = join(d.statedir, "tokens.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8")).not.toContain(token.split("_")[2]);
    const list = JSON.parse(d.cli(["token", "list", "--json"]).stdout);
    expect(list).toEqual([expect.objectContaining({ id: token.split("_")[1], scope: "admin", userid: process.getuid?.() })]);
  });

  it("ping, submit one and a batch, info, eventlog, list with filters", async () => {
    expect((await api.checked_call("GET", "/api/v1/ping", token)).json.pid).toBeGreaterThan(0);
    const one = await api.checked_call("POST", "/api/v1/jobs", token, { jobspecs: [jobspec(["true"])] });
    expect(one.status).toBe(200);
    const [id] = one.json.ids;
    const batch = await api.checked_call("POST", "/api/v1/jobs", token, { jobspecs: [jobspec(["true"]), jobspec(["false"])] });
    expect(batch.json.ids).toHaveLength(2);
    const cc = await api.checked_call("POST", "/api/v1/jobs", token, { jobspecs: [jobspec(["true"])], count: 3 });
    expect(cc.json.ids).toHaveLength(3);
    await d.cli(["wait", id]);
    const info = await api.checked_call("GET", `/api/v1/jobs/${id}`, token);
    expect(info.json.job).toMatchObject({ id, state: "INACTIVE", result: "COMPLETED" });
    expect(info.json.jobspec.tasks[0].command).toEqual(["true"]);
    const log = await api.checked_call("GET", `/api/v1/jobs/${id}/eventlog`, token);
    expect(log.json.eventlog.map((e: { name: string }) => e.name)).toContain("clean");
    for (const j of batch.json.ids) d.cli(["wait", j]);
    const failed = await api.checked_call("GET", "/api/v1/jobs?state=failed&user=all", token);
    expect(failed.json.jobs.map((j: { id: string }) => j.id)).toEqual([batch.json.ids[1]]);
    const named = await api.checked_call("GET", `/api/v1/jobs?state=inactive&constraint=${encodeURIComponent("JobStatus == 4")}`, token);
    expect(named.json.jobs.length).toBeGreaterThanOrEqual(2);
    const bad = await api.checked_call("GET", "/api/v1/jobs?state=nonsense", token);
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toContain('"nonsense"');
  });

  it("pages through the listing with a cursor, newest first, without repeats", async () => {
    const { json } = await api.checked_call("POST", "/api/v1/jobs", token, { jobspecs: [jobspec(["true"], HOLD)], count: 5, urgency: 0 });
    const seen: string[] = [];
    let cursor = "";
    for (let page = 0; page < 10; page++) {
      const r = await api.checked_call("GET", `/api/v1/jobs?state=pending&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, token);
      expect(r.json.jobs.length).toBeLessThanOrEqual(2);
      seen.push(...r.json.jobs.map((j: { id: string }) => j.id));
      if (r.json.next_cursor === undefined) break;
      cursor = r.json.next_cursor;
    }
    expect(seen).toEqual([...json.ids].reverse());
    for (const id of json.ids) await api.checked_call("POST", `/api/v1/jobs/${id}/cancel`, token, {});
  });

  it("urgency, update, raise and cancel change the job; errors are coded JSON", async () => {
    // A stopped queue keeps the job pending (no alloc), so its urgency may change.
    expect((await api.checked_call("POST", "/api/v1/queues/stop", token, {})).status).toBe(200);
    const { json } = await api.checked_call("POST", "/api/v1/jobs", token, { jobspecs: [jobspec(["true"], HOLD)] });
    const id = json.ids[0];
    expect((await api.checked_call("POST", `/api/v1/jobs/${id}/urgency`, token, { urgency: 5 })).json).toEqual({ old_urgency: 16 });
    expect((await api.checked_call("POST", `/api/v1/jobs/${id}/urgency`, token, { urgency: 0 })).json).toEqual({ old_urgency: 5 });
    // Held (urgency 0) behind a stopped queue: `why` names both, as the CLI does.
    const why = (await api.checked_call("GET", `/api/v1/jobs/${id}/why`, token)).json;
    expect(why.id).toBe(id);
    expect(why.reasons.map((r: { code: string }) => r.code)).toEqual(expect.arrayContaining(["held", "queue-stopped"]));
    expect((await api.checked_call("POST", "/api/v1/queues/start", token, {})).status).toBe(200);
    expect((await api.checked_call("POST", `/api/v1/jobs/${id}/update`, token, { updates: { "attributes.system.duration": 60 } })).status).toBe(200);
    expect((await api.checked_call("GET", `/api/v1/jobs/${id}`, token)).json.jobspec.attributes.system.duration).toBe(60);
    expect((await api.checked_call("POST", `/api/v1/jobs/${id}/raise`, token, { type: "test", severity: 3, note: "a note" })).status).toBe(200);
    const names = (await api.checked_call("GET", `/api/v1/jobs/${id}/eventlog`, token)).json.eventlog.map((e: { name: string }) => e.name);
    expect(names).toContain("exception");
    expect((await api.checked_call("POST", `/api/v1/jobs/${id}/cancel`, token, { note: "done" })).json).toEqual({ canceled: [id] });
    await d.cli(["wait", id]);
    const again = await api.checked_call("POST", `/api/v1/jobs/${id}/cancel`, token, {});
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe("JOB_INACTIVE");
    const unknown = await api.checked_call("GET", "/api/v1/jobs/f1", token);
    expect([400, 404]).toContain(unknown.status);
    expect(typeof unknown.json.error.message).toBe("string");
  });

  it("follows a running job's eventlog as Server-Sent Events until it is inactive", async () => {
    const { json } = await api.checked_call("POST", "/api/v1/jobs", token, { jobspecs: [jobspec(["true"], HOLD)] });
    const id = json.ids[0];
    const url = new URL(api.base);
    const events: string[] = [];
    let contentType = "";
    const done = new Promise<void>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: asciiPath(`/api/v1/jobs/${id}/eventlog?follow=1`), headers: { authorization: `Bearer ${token}` } }, (res) => {
        contentType = String(res.headers["content-type"]);
        let buf = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          buf += chunk;
          let i: number;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            events.push(buf.slice(0, i));
            buf = buf.slice(i + 2);
          }
        });
        res.on("end", () => resolve());
      });
      req.on("error", reject);
      req.end();
    });
    const names = () => events.filter((e) => e.startsWith("data: ")).map((e) => JSON.parse(e.slice(6)).name as string);
    const deadline = Date.now() + 30_000;
    while (!names().includes("start") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(names()).toContain("start");
    expect(names()).not.toContain("clean");
    await api.checked_call("POST", `/api/v1/jobs/${id}/cancel`, token, {});
    await done;
    expect(contentType).toBe("text/event-stream");
    expect(names().slice(-1)).toEqual(["clean"]);
    expect(events[events.length - 1]).toBe("event: end\ndata: {}");
  });

  it("plugins load, query, list and remove; queues stop and start (owner, admin scope)", async () => {
    const path = join(ROOT, "test", "fixtures", "plugins", "annotate.js");
    const load = await api.checked_call("POST", "/api/v1/plugins", token, { path, conf: { annotations: { a: 1 } } });
    expect(load.status).toBe(200);
    const name = load.json.name;
    expect((await api.checked_call("GET", "/api/v1/plugins", token)).json.plugins.map((p: { name: string }) => p.name)).toContain(name);
    expect((await api.checked_call("GET", `/api/v1/plugins/${name}`, token)).status).toBe(200);
    const again = await api.checked_call("POST", "/api/v1/plugins", token, { path });
    expect(again.status).toBe(409);
    expect((await api.checked_call("DELETE", `/api/v1/plugins/${name}`, token)).json).toEqual({ removed: [name] });
    expect((await api.checked_call("GET", `/api/v1/plugins/${name}`, token)).status).toBe(404);
    expect((await api.checked_call("POST", "/api/v1/queues/stop", token, { reason: "maintenance" })).status).toBe(200);
    expect((await api.checked_call("GET", "/api/v1/queues", token)).json.queues[""]).toMatchObject({ started: false, stopReason: "maintenance" });
    expect(d.cli(["queue", "status"]).stdout).toMatch(/stopped/i);
    await api.checked_call("POST", "/api/v1/queues/start", token, {});
    expect((await api.checked_call("GET", "/api/v1/queues", token)).json.queues[""]).toMatchObject({ started: true });
  });

  it("the OpenAPI document lists every route, and the responses checked cover them", async () => {
    const doc = await api.document(token);
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/api/v1/jobs", "/api/v1/jobs/{id}/eventlog", "/api/v1/plugins/{name}", "/api/v1/queues/stop", "/metrics"]));
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops as object).map((verb) => `${verb.toUpperCase()} ${path}`));
    // /metrics is checked by http-metrics.test.ts, the dashboard's routes by http-web*.test.ts.
    expect([...api.covered].sort()).toEqual(operations.filter((o) => o !== "GET /metrics" && !CHECKED_BY_WEB_TESTS.includes(o)).sort());
  });
});

/** Operations the dashboard's tests (test/e2e/http-web*.test.ts) check against the document. */
const CHECKED_BY_WEB_TESTS = [
  "POST /api/v1/login", "GET /api/v1/whoami", "GET /api/v1/ads", "GET /api/v1/jobs/{id}/jobad", "GET /api/v1/jobs/{id}/output",
  "GET /api/v1/router", "GET /api/v1/cron", "GET /api/v1/plugins/{name}/query", "GET /api/v1/trace", "GET /api/v1/events", "GET /api/v1/stats",
];

describe("REST API over HTTPS", { timeout: 60_000 }, () => {
  let d: DaemonUnderTest;
  let cert: string;
  beforeAll(async () => {
    requireBuild();
    d = new DaemonUnderTest();
    const key = join(d.statedir, "key.pem");
    const certPath = join(d.statedir, "cert.pem");
    const made = spawnSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certPath, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], { encoding: "utf8" });
    expect(made.status, made.stderr).toBe(0);
    cert = (await import("node:fs")).readFileSync(certPath, "utf8");
    const config = join(d.statedir, "jobtap.toml");
    writeFileSync(config, `[daemon]\nhttp = "127.0.0.1:0"\ntls-cert = ${JSON.stringify(certPath)}\ntls-key = ${JSON.stringify(key)}\n`);
    await d.start(["--config", config]);
  });
  afterAll(async () => d?.dispose());

  it("serves the API with the configured certificate, and refuses plain HTTP on it", async () => {
    const url = await listenerUrl(d);
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const token = d.cli(["token", "create"]).stdout.trim();
    const api = new Api(url, { ca: cert });
    await api.document(token);
    const r = await api.checked_call("POST", "/api/v1/jobs", token, { jobspecs: [jobspec(["true"])] });
    expect(r.status).toBe(200);
    expect(d.cli(["wait", r.json.ids[0]]).status).toBe(0);
    api.close();
    const plain = new Api(url.replace("https:", "http:"));
    await expect(plain.call("GET", "/api/v1/ping", token)).rejects.toThrow();
    plain.close();
    expect(d.cli(["jobs", "-a"]).status).toBe(0);
  });
});

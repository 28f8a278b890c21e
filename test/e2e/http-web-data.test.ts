/**
 * Issue 40, the dashboard's data routes over real TCP with real users' tokens (jtwa1 and
 * jtwa2, guests; the owner): host ads with a real cron probe's attributes, condor-cron's
 * jobs with their last output, a job's ad, the tail of a guest job's real output file (its
 * user and the owner only), condor-router's routes and routed pairs, a plugin's query and
 * the owner-only live trace as Server-Sent Events. Every JSON reply is checked against the
 * OpenAPI document.
 */
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDaemon, type DaemonClient } from "../../src/server/client.js";
import { startDaemon, type Daemon } from "../../src/server/daemon.js";
import { requireBuild } from "./harness.js";
import { Api, jobspec, listenerUrl } from "./http-util.js";
import { realUser, type User } from "./users.js";

const alice = realUser("jtwa1");
const bob = realUser("jtwa2");
const HOLD = { exec: { test: { run_duration: "1h" } } };
const XSS = "<script>alert(1)</script>";

/** Polls an async condition until it holds (waitFor takes a synchronous one). */
async function until(cond: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Reads a Server-Sent Events stream until `until` holds for the text so far, then hangs up. */
function readSse(base: string, path: string, token: string, until: (text: string) => boolean, onOpen: () => void): Promise<{ status: number; type: string; text: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      const done = () => {
        resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"]), text });
        req.destroy();
      };
      res.on("data", (d) => {
        text += d;
        if (until(text)) done();
      });
      res.on("end", done);
      onOpen();
    });
    req.on("error", (e) => (req.destroyed ? undefined : reject(e)));
    req.end();
  });
}

describe.skipIf(!alice || !bob)("http: the dashboard's data routes", { timeout: 120_000 }, () => {
  const a = alice as User;
  const b = bob as User;
  let top: string;
  let daemon: Daemon;
  let owner: DaemonClient;
  let api: Api;
  let log = "";
  let ownerToken: string;
  let aliceToken: string;
  let bobToken: string;
  let aliceJob: string;
  let outDir: string;
  const enc = encodeURIComponent;

  beforeAll(async () => {
    requireBuild();
    top = mkdtempSync(join(tmpdir(), "jobtap-http-web-data-"));
    chmodSync(top, 0o755);
    mkdirSync(join(top, "pub"), { mode: 0o755 });
    outDir = join(top, "alice");
    mkdirSync(outDir, { mode: 0o700 });
    chownSync(outDir, a.uid, a.gid);
    const probe = join(top, "probe");
    writeFileSync(probe, `#!/bin/sh\necho 'WebProbe = "${XSS}"'\necho 'WebCount = 3'\n`);
    chmodSync(probe, 0o755);
    const cron = join(top, "50-cron");
    writeFileSync(cron, `STARTD_CRON_JOBLIST = web\nSTARTD_CRON_WEB_EXECUTABLE = ${probe}\nSTARTD_CRON_WEB_PERIOD = 1h\n`);
    const router = join(top, "60-router");
    writeFileSync(router, ["JOB_ROUTER_SOURCE_JOB_CONSTRAINT = WantJobRouter", "JOB_ROUTER_POLLING_PERIOD = 1", "JOB_ROUTER_ROUTE_NAMES = Spill", "JOB_ROUTER_ROUTE_Spill @=rt", "MaxIdleJobs = 2", "@rt", ""].join("\n"));
    const socket = join(top, "pub", "jobtap.sock");
    const config = join(top, "jobtap.toml");
    writeFileSync(
      config,
      `[daemon]\nguests = true\nsocket = ${JSON.stringify(socket)}\nhttp = "127.0.0.1:0"\n[resources]\ncores = 1\n[job-manager]\n` +
        `plugins = [{ load = "condor-cron", conf = { condor_config = ${JSON.stringify(cron)} } }, { load = "condor-router", conf = { condor_config = ${JSON.stringify(router)} } }]\n`,
    );
    daemon = await startDaemon({ statedir: join(top, "state"), configPath: config, env: {}, log: (l) => (log += l + "\n") });
    owner = connectDaemon(socket);
    api = new Api(await listenerUrl({ get log() { return log; } }));
    ownerToken = (await owner.call("token.create", { scope: "admin" })).token;
    aliceToken = (await owner.call("token.create", { userid: a.uid, scope: "submit" })).token;
    bobToken = (await owner.call("token.create", { userid: b.uid, scope: "admin" })).token;
    await api.document(ownerToken);
    // Alice's job writes 100,000 x's then END to a file of hers, as her (a root daemon runs guests' jobs as them).
    const out = join(outDir, "out.txt");
    const spec = jobspec(["sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x; echo END; echo oops >&2"], { shell: { options: { output: { stdout: { type: "file", path: out } } } }, cwd: outDir });
    const r = await api.checked_call("POST", "/api/v1/jobs", aliceToken, { jobspecs: [spec] });
    expect(r.status, r.text).toBe(200);
    aliceJob = r.json.ids[0];
    await until(async () => (await api.call("GET", `/api/v1/jobs/${enc(aliceJob)}`, ownerToken)).json?.job?.state === "INACTIVE", 30_000, "alice's job to finish");
  });
  afterAll(async () => {
    api?.close();
    owner?.close();
    await daemon?.shutdown("test done");
    rmSync(top, { recursive: true, force: true });
  });

  it("GET /ads: every user reads the slot ads with the cron probe's attributes, and the machine ad", async () => {
    await until(async () => (await api.call("GET", "/api/v1/ads", bobToken)).json?.ads?.[0]?.json?.WebCount === 3, 30_000, "the probe's attributes in the slot ad");
    const r = await api.checked_call("GET", "/api/v1/ads", bobToken);
    expect(r.status).toBe(200);
    // ClassAd strings come back as data, never interpreted.
    expect(r.json.ads[0].json).toMatchObject({ WebProbe: XSS, WebCount: 3 });
    expect(r.json.ads[0].text).toContain("WebCount = 3");
    const machine = await api.checked_call("GET", "/api/v1/ads?machine=1", bobToken);
    expect(machine.json.ads).toHaveLength(1);
    expect((await api.checked_call("GET", "/api/v1/ads?slot=1", bobToken)).json.ads).toHaveLength(1);
    expect((await api.checked_call("GET", "/api/v1/ads?slot=99", bobToken)).json.error.code).toBe("UNKNOWN_SLOT");
    expect((await api.checked_call("GET", "/api/v1/ads?constraint=WebCount%20%3D%3D%204", bobToken)).json.ads).toEqual([]);
    const bad = await api.checked_call("GET", "/api/v1/ads?slot=x", bobToken);
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toContain("slot must be a non-negative integer");
  });

  it("GET /events?follow=1: batched job state changes for any user, resumable by cursor", async () => {
    type Msg = { cursor: string; changes?: Array<{ id: string; state: string; t: number; userid: number }>; reset?: boolean };
    const messages = (text: string): Msg[] => [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as Msg);
    let ids: string[] = [];
    let submitted: Promise<unknown> = Promise.resolve();
    const finished = (text: string) => ids.length > 0 && ids.every((id) => messages(text).some((m) => m.changes?.some((c) => c.id === id && c.state === "INACTIVE")));
    const got = await readSse(api.base, "/api/v1/events?follow=1", bobToken, finished, () => {
      submitted = api.call("POST", "/api/v1/jobs", ownerToken, { jobspecs: [jobspec(["true"])], count: 40 }).then((r) => (ids = r.json.ids));
    });
    await submitted;
    expect(got.status).toBe(200);
    expect(got.type).toBe("text/event-stream");
    const all = messages(got.text);
    expect(all[0]).toEqual({ cursor: expect.stringMatching(/^[0-9a-z]+:\d+$/), changes: [] });
    const changes = all.flatMap((m) => m.changes ?? []);
    // Every job's path to INACTIVE, in order, as another user (bob) sees the listing.
    for (const id of ids) expect(changes.filter((c) => c.id === id).map((c) => c.state)).toEqual(["DEPEND", "PRIORITY", "SCHED", "RUN", "CLEANUP", "INACTIVE"]);
    expect(changes.find((c) => c.id === ids[0])).toMatchObject({ userid: process.getuid!() });
    // Batched: far fewer messages than changes.
    expect(all.length).toBeLessThan(changes.length / 2);
    // Resuming from the first batch's cursor replays everything after it.
    const resumed = await readSse(api.base, `/api/v1/events?follow=1&since=${enc(all[1]!.cursor)}`, aliceToken, (t) => t.includes("data: "), () => undefined);
    const replay = messages(resumed.text)[0]!;
    expect(replay.changes!.length).toBe(changes.length - all[1]!.changes!.length);
    const lost = await readSse(api.base, "/api/v1/events?follow=1&since=nope:1", aliceToken, (t) => t.includes("data: "), () => undefined);
    expect(messages(lost.text)[0]).toMatchObject({ reset: true });
    expect((await api.checked_call("GET", "/api/v1/events", aliceToken)).status).toBe(400);
    expect((await api.checked_call("GET", "/api/v1/events?follow=1", undefined)).status).toBe(401);
  });

  it("GET /stats: the last hour's throughput, queue depth and latencies in 10-second buckets", async () => {
    const r = await api.checked_call("GET", "/api/v1/stats", bobToken);
    expect(r.status).toBe(200);
    expect(r.json.bucket_seconds).toBe(10);
    const buckets = r.json.buckets as Array<{ t: number; submitted: number; inactive: number; depth: Record<string, number>; callbacks: { count: number }; hooks: { count: number } }>;
    expect(buckets.length).toBeGreaterThanOrEqual(1);
    expect(buckets.length).toBeLessThanOrEqual(360);
    const sum = (f: (b: (typeof buckets)[number]) => number) => buckets.reduce((s, b) => s + f(b), 0);
    // Alice's job and the 40 above.
    expect(sum((b) => b.submitted)).toBeGreaterThanOrEqual(41);
    expect(sum((b) => b.inactive)).toBeGreaterThanOrEqual(41);
    expect(sum((b) => b.callbacks.count)).toBeGreaterThan(0);
    // The cron probe is a hook program run.
    expect(sum((b) => b.hooks.count)).toBeGreaterThanOrEqual(1);
    expect(buckets[buckets.length - 1]!.depth).toEqual({ DEPEND: 0, PRIORITY: 0, SCHED: 0, RUN: 0, CLEANUP: 0 });
  });

  it("GET /cron: the cron jobs with last run, status, duration and the head of the last output", async () => {
    const r = await api.checked_call("GET", "/api/v1/cron", bobToken);
    expect(r.status).toBe(200);
    expect(r.json.jobs[0]).toMatchObject({ manager: "startd", name: "web", mode: "Periodic", period: 3600, last_exit: "exited with status 0", runs: 1 });
    expect(r.json.jobs[0].last_output).toBe(`WebProbe = "${XSS}"\nWebCount = 3\n`);
    expect(r.json.jobs[0].last_duration).toBeGreaterThanOrEqual(0);
    expect(r.json.jobs[0].next_run).toBeGreaterThan(r.json.jobs[0].last_run);
  });

  it("GET /jobs/{id}/output: the tail of the job's file for its user and the owner only", async () => {
    const path = `/api/v1/jobs/${enc(aliceJob)}/output`;
    const tail = await api.checked_call("GET", `${path}?tail=10`, aliceToken);
    expect(tail.status, tail.text).toBe(200);
    expect(tail.json).toEqual({ data: "xxxxxxEND\n", offset: 100_004, done: true });
    const whole = await api.checked_call("GET", path, aliceToken);
    expect(whole.json.data).toHaveLength(65536);
    expect(whole.json.data.endsWith("END\n")).toBe(true);
    expect((await api.checked_call("GET", `${path}?tail=4&stream=stdout`, ownerToken)).json.data).toBe("END\n");
    const other = await api.checked_call("GET", `${path}?tail=10`, bobToken);
    expect(other.status).toBe(403);
    expect(other.json.error.message).toContain("only the job's user may read its output");
    for (const q of ["tail=70000", "tail=0", "tail=-1", "stream=secret"]) {
      const r = await api.checked_call("GET", `${path}?${q}`, aliceToken);
      expect(r.status, q).toBe(400);
    }
    expect((await api.checked_call("GET", "/api/v1/jobs/f1111111/output", aliceToken)).status).toBe(404);
  });

  it("GET /jobs/{id}/jobad: the job's ad, visible as job info", async () => {
    const r = await api.checked_call("GET", `/api/v1/jobs/${enc(aliceJob)}/jobad`, aliceToken);
    expect(r.status).toBe(200);
    expect(r.json.json.Owner).toBe(a.name);
    expect(r.json.text).toContain(`Owner = "${a.name}"`);
    expect((await api.checked_call("GET", `/api/v1/jobs/${enc(aliceJob)}/jobad`, bobToken)).status).toBe(403);
    expect((await api.checked_call("GET", `/api/v1/jobs/${enc(aliceJob)}/jobad`, ownerToken)).status).toBe(200);
  });

  it("GET /router: routes with limits and routed pairs, for any user", async () => {
    // The one core is busy for an hour: the router claims the waiting job and routes a copy.
    await api.checked_call("POST", "/api/v1/jobs", ownerToken, { jobspecs: [jobspec(["true"], HOLD)] });
    const spill = { ...jobspec(["true"], HOLD), attributes: { system: { duration: 0, ...HOLD }, user: { classad: { WantJobRouter: "true" } } } };
    const original = (await api.checked_call("POST", "/api/v1/jobs", ownerToken, { jobspecs: [spill] })).json.ids[0];
    await until(async () => (await api.call("GET", "/api/v1/router", bobToken)).json?.pairs?.some((p: { copy: string | null }) => p.copy !== null), 30_000, "a routed pair");
    const r = await api.checked_call("GET", "/api/v1/router", bobToken);
    expect(r.status).toBe(200);
    expect(r.json.routes[0]).toMatchObject({ name: "Spill", max_idle_jobs: 2, max_jobs: 100 });
    expect(r.json.pairs[0]).toMatchObject({ original, route: "Spill" });
    expect(r.json.pairs[0].copy_state).toMatch(/^[A-Z]+$/);
    expect(r.json.pairs[0].original_state).toMatch(/^[A-Z]+$/);
  });

  it("GET /plugins/{name}/query: the owner's; a guest's admin token is refused", async () => {
    const r = await api.checked_call("GET", "/api/v1/plugins/condor-cron/query", ownerToken);
    expect(r.status, r.text).toBe(200);
    expect((await api.checked_call("GET", "/api/v1/plugins/condor-cron/query", bobToken)).status).toBe(403);
  });

  it("GET /trace?follow=1: the owner's live trace as Server-Sent Events; guests and plain GETs are refused", async () => {
    let submitted: Promise<unknown> = Promise.resolve();
    const got = await readSse(api.base, "/api/v1/trace?follow=1", ownerToken, (t) => t.includes("data: "), () => {
      submitted = api.call("POST", "/api/v1/jobs", ownerToken, { jobspecs: [jobspec(["true"])] });
    });
    expect((await submitted as { status: number }).status).toBe(200);
    expect(got.status).toBe(200);
    expect(got.type).toBe("text/event-stream");
    const first = JSON.parse(/^data: (.*)$/m.exec(got.text)![1]!);
    expect(typeof first).toBe("object");
    const guest = await api.checked_call("GET", "/api/v1/trace?follow=1", bobToken);
    expect(guest.status).toBe(403);
    const plain = await api.checked_call("GET", "/api/v1/trace", ownerToken);
    expect(plain.status).toBe(400);
    expect(plain.json.error.message).toContain("?follow=1");
  });
});

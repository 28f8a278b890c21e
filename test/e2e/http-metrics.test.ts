/**
 * Issue 37: `/metrics` in the Prometheus text format, checked by `promtool check metrics`,
 * and scraped by a real Prometheus (Debian's `prometheus`: temp config and storage, a free
 * port) whose query API then answers a jobtap series. In CI (CI=true, or
 * JOBTAP_REQUIRE_PROMETHEUS=1 as .ci/run sets) a missing Prometheus fails these tests;
 * elsewhere they are skipped.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { daemonForSuite } from "./harness.js";
import { Api, listenerUrl } from "./http-util.js";

const required = process.env.CI === "true" || process.env.JOBTAP_REQUIRE_PROMETHEUS === "1";
const present = existsSync("/usr/bin/promtool") && existsSync("/usr/bin/prometheus");
if (required && !present) throw new Error("Prometheus is required here (CI or JOBTAP_REQUIRE_PROMETHEUS=1) but /usr/bin/prometheus or /usr/bin/promtool is missing: apt-get install prometheus");

describe.skipIf(!present)("metrics", { timeout: 120_000 }, () => {
  const d = daemonForSuite((d) => {
    const config = join(d.statedir, "jobtap.toml");
    writeFileSync(config, '[daemon]\nhttp = "127.0.0.1:0"\n');
    return ["--config", config];
  });
  let api: Api;
  let token: string;
  let ids: string[];

  beforeAll(async () => {
    api = new Api(await listenerUrl(d));
    token = d.cli(["token", "create", "--scope", "read"]).stdout.trim();
    await api.document(token);
    ids = [d.submit(["true"]), d.submit(["false"]), d.submit(["--urgency", "0", "true"])];
    for (const id of ids.slice(0, 2)) d.cli(["wait", id]);
  });
  afterAll(() => api?.close());

  it("serves jobtap's metrics to a token, refuses without one, and names no job", async () => {
    expect((await api.call("GET", "/metrics", undefined)).status).toBe(401);
    const r = await api.call("GET", "/metrics", token);
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(r.text).toMatch(/^jobtap_jobs_submitted_total 3$/m);
    expect(r.text).toMatch(/^jobtap_jobs_inactive_total\{result="COMPLETED"\} 1$/m);
    expect(r.text).toMatch(/^jobtap_jobs_inactive_total\{result="FAILED"\} 1$/m);
    expect(r.text).toMatch(/^jobtap_jobs\{state="SCHED",queue=""\} 1$/m);
    expect(r.text).toMatch(/^jobtap_plugin_callback_seconds_count\{plugin="\.priority-default",topic="[^"]+"\} \d+$/m);
    expect(r.text).toMatch(/^jobtap_event_loop_lag_seconds\{stat="p99"\} /m);
    for (const id of ids) expect(r.text).not.toContain(id);
  });

  it("passes promtool check metrics", async () => {
    const r = await api.call("GET", "/metrics", token);
    const check = spawnSync("/usr/bin/promtool", ["check", "metrics"], { input: r.text, encoding: "utf8" });
    expect(check.stderr + check.stdout).toBe("");
    expect(check.status).toBe(0);
  });

  it("is scraped by a real Prometheus, which answers a jobtap series through its query API", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jobtap-prom-"));
    const port = await freePort();
    const target = new URL(api.base).host;
    writeFileSync(join(dir, "token"), token);
    writeFileSync(
      join(dir, "prometheus.yml"),
      `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: jobtap\n    authorization:\n      credentials_file: ${join(dir, "token")}\n    static_configs:\n      - targets: ["${target}"]\n`,
    );
    let prom: ChildProcess | undefined;
    let log = "";
    try {
      prom = spawn("/usr/bin/prometheus", [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ["ignore", "pipe", "pipe"] });
      prom.stderr?.on("data", (c) => (log += c));
      let value: string | undefined;
      const ask = async () => {
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=jobtap_jobs_submitted_total`).catch(() => undefined);
        const body = (await res?.json().catch(() => undefined)) as { data?: { result?: Array<{ value: [number, string]; metric: Record<string, string> }> } } | undefined;
        value = body?.data?.result?.[0]?.value[1];
      };
      const end = Date.now() + 60_000;
      while (value === undefined && Date.now() < end) {
        await ask();
        if (value === undefined) await new Promise((r) => setTimeout(r, 250));
      }
      expect(value, `prometheus log:\n${log.slice(-3000)}`).toBe("3");
    } finally {
      if (prom && prom.exitCode === null) {
        const closed = new Promise((r) => prom!.once("close", r));
        prom.kill("SIGTERM");
        await closed;
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}



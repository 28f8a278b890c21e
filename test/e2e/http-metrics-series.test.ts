/**
 * Issue 37: the manager's own series on a real daemon's `/metrics` (scheduling passes, store
 * batches, restart replay, hook runs), each read back after work that must move it, and the
 * whole page still passing `promtool check metrics`. Skipped where Prometheus's promtool is
 * missing, as test/e2e/http-metrics.test.ts is (required in CI).
 */
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { daemonForSuite } from "./harness.js";
import { Api, listenerUrl } from "./http-util.js";

const required = process.env.CI === "true" || process.env.JOBTAP_REQUIRE_PROMETHEUS === "1";
const present = existsSync("/usr/bin/promtool");
if (required && !present) throw new Error("promtool is required here (CI or JOBTAP_REQUIRE_PROMETHEUS=1) but /usr/bin/promtool is missing: apt-get install prometheus");

/** The value of the one sample `series` (name and labels exactly as exposed). */
function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  if (line === undefined) throw new Error(`no sample ${series} in:\n${text}`);
  return Number(line.slice(series.length + 1));
}

describe.skipIf(!present)("metrics: the manager's series", { timeout: 120_000 }, () => {
  const args = (statedir: string) => ["--config", join(statedir, "jobtap.toml")];
  const d = daemonForSuite((d) => {
    // perilog's prolog succeeds and its epilog fails: one run of each per job.
    const toml = ['[daemon]\nhttp = "127.0.0.1:0"', '[job-manager]\nplugins = [{ load = "perilog" }]', '[job-manager.prolog]\ncommand = ["true"]', '[job-manager.epilog]\ncommand = ["false"]'];
    writeFileSync(join(d.statedir, "jobtap.toml"), toml.join("\n") + "\n");
    return args(d.statedir);
  });
  let api: Api;
  let token: string;
  let text: string;

  beforeAll(async () => {
    // Jobs from before a restart, so the replay has something to read.
    for (const id of [d.submit(["true"]), d.submit(["true"])]) d.cli(["wait", id]);
    await d.stop();
    d.log = ""; // the listener's port is new: read it from this start's log
    await d.start(args(d.statedir));
    api = new Api(await listenerUrl(d));
    token = d.cli(["token", "create", "--scope", "read"]).stdout.trim();
    await api.document(token);
    const ids = [d.submit(["true"]), d.submit(["true"]), d.submit(["true"])];
    for (const id of ids) d.cli(["wait", id]);
    const r = await api.call("GET", "/metrics", token);
    expect(r.status).toBe(200);
    text = r.text;
  });
  afterAll(() => api?.close());

  it("counts scheduling passes and the jobs they placed, and times each pass", () => {
    const passes = sample(text, "jobtap_scheduler_passes_total");
    expect(passes).toBeGreaterThanOrEqual(1);
    // Only the three jobs submitted since this start were placed by its passes.
    expect(sample(text, "jobtap_scheduler_jobs_placed_total")).toBe(3);
    expect(sample(text, "jobtap_scheduler_pass_seconds_count")).toBe(passes);
    expect(sample(text, 'jobtap_scheduler_pass_seconds_bucket{le="+Inf"}')).toBe(passes);
  });

  it("times the store's batches and counts the jobs in them", () => {
    const batches = sample(text, "jobtap_store_batch_seconds_count");
    expect(batches).toBeGreaterThanOrEqual(1);
    expect(sample(text, "jobtap_store_batch_seconds_sum")).toBeGreaterThan(0);
    expect(sample(text, "jobtap_store_batch_jobs_count")).toBe(batches);
    // Each of the three jobs wrote lines (submit, then its run): in one batch or several.
    expect(sample(text, "jobtap_store_batch_jobs_sum")).toBeGreaterThanOrEqual(3);
  });

  it("gives the restart's replay time", () => {
    const replay = sample(text, "jobtap_restart_replay_seconds");
    expect(replay).toBeGreaterThan(0);
    expect(replay).toBeLessThan(60);
  });

  it("times hook programs and counts their failures, by plugin and hook type", () => {
    // The three jobs run since this start: a prolog and an epilog each.
    expect(sample(text, 'jobtap_hook_run_seconds_count{plugin="perilog",hook="prolog"}')).toBe(3);
    expect(sample(text, 'jobtap_hook_run_seconds_count{plugin="perilog",hook="epilog"}')).toBe(3);
    expect(sample(text, 'jobtap_hook_run_seconds_bucket{le="+Inf",plugin="perilog",hook="prolog"}')).toBe(3);
    expect(sample(text, 'jobtap_hook_run_seconds_sum{plugin="perilog",hook="epilog"}')).toBeGreaterThan(0);
    expect(sample(text, 'jobtap_hook_failures_total{plugin="perilog",hook="epilog"}')).toBe(3);
    expect(text).not.toMatch(/^jobtap_hook_failures_total\{plugin="perilog",hook="prolog"\}/m);
  });

  it("passes promtool check metrics", () => {
    const check = spawnSync("/usr/bin/promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    expect(check.stderr + check.stdout).toBe("");
    expect(check.status).toBe(0);
  });
});

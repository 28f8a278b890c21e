/**
 * The job router's Slurm destination against the real local cluster: the HTCondor manual's
 * router example pasted as is (its first route is `GridResource = "batch slurm"`, with
 * JOB_ROUTER_DEFAULT_MAX_IDLE_JOBS_PER_ROUTE = 10), 40 jobs waiting on a busy 1-core host
 * are routed to Slurm; the route never has more than 10 idle copies, every original
 * finishes with its copy, and nothing is routed twice. Real clock; conditions polled.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import type { Jobspec } from "../../src/manager/port/records.js";
import { type JobtapHost } from "../../src/plugins/index.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { waitFor } from "../e2e/harness.js";
import { skipSlurm, TestCluster } from "./cluster.js";

const EXAMPLE = fileURLToPath(new URL("../condor/fixtures/router-example.config", import.meta.url));

describe.skipIf(skipSlurm)("condor-router to Slurm", { timeout: 240_000 }, () => {
  let cluster: TestCluster;
  let work: string;
  let m: JobManager | undefined;

  beforeAll(() => {
    cluster = new TestCluster().start();
    work = join(cluster.dir, "work");
    mkdirSync(work);
  }, 60_000);
  afterAll(async () => {
    await m?.close();
    cluster?.stop();
  });

  it("routes 40 jobs to Slurm through the manual's pasted routes, never above MaxIdleJobs = 10", async () => {
    const conf = { condor_config: EXAMPLE, condor_config_text: "JOB_ROUTER_POLLING_PERIOD = 0.5\n" };
    const config = {
      exec: { slurm: { "slurm-conf": cluster.conf, "poll-period": 0.2, "max-poll-period": 0.5 } },
      "job-manager": { plugins: [{ load: "condor-router", conf }] },
    };
    let host: JobtapHost | undefined;
    const factory = jobtapPlugins({ config, pluginPath: [], log: () => undefined });
    m = await createJobManager({ config, resources: { cores: 1 }, log: () => undefined, plugins: async (port) => (host = await factory(port)) });
    const mgr = m;
    // The only local core stays busy: every routable job waits.
    const blocker: Jobspec = {
      version: 1,
      resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
      tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
      attributes: { system: { exec: { test: { run_duration: "1h" } } } },
    };
    await mgr.submit(blocker);
    const job = (i: number): Jobspec => ({
      version: 1,
      resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
      tasks: [{ command: ["sh", "-c", `echo job ${i}`], slot: "task", count: { per_slot: 1 } }],
      attributes: {
        system: { cwd: work, environment: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, shell: { options: { output: { stdout: { path: join(work, "{{id}}.out") } } } } },
        user: { classad: { WantJobRouter: "true" } },
      },
    });
    const outcomes = await mgr.submitMany(Array.from({ length: 40 }, (_, i) => ({ jobspec: job(i) })));
    const ids = outcomes.map((o) => ("id" in o ? o.id : (() => { throw o.error; })()));
    const q = async () => (await host!.query("condor-router")) as { routes: Array<{ name: string; idle: number; current: number }> };
    // Sample the route and Slurm's pending queue while the jobs flow.
    let maxIdle = 0;
    let maxPending = 0;
    let samples = 0;
    const deadline = Date.now() + 200_000;
    while (!ids.every((id) => mgr.job(id).state === "INACTIVE") && Date.now() < deadline) {
      maxIdle = Math.max(maxIdle, (await q()).routes[0]!.idle);
      if (samples++ % 5 === 0) {
        const pending = cluster.run("squeue", ["-h", "-t", "PD", "-o", "%i"]).trim();
        maxPending = Math.max(maxPending, pending === "" ? 0 : pending.split("\n").length);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    await waitFor(() => ids.every((id) => mgr.job(id).state === "INACTIVE"), 1000, "every original to finish");
    expect(maxIdle).toBeGreaterThan(0); // the route was used ...
    expect(maxIdle).toBeLessThanOrEqual(10); // ... and never held more than MaxIdleJobs idle copies
    expect(maxPending).toBeLessThanOrEqual(10);
    const routes = (await q()).routes;
    expect(routes.map((r) => r.name)).toEqual(["Site1", "Site2", "CondorSite"]);
    expect(routes[0]!.current).toBe(0);
    const copies = mgr.jobs().filter((j) => mgr.jobAd(j.id).has("RoutedFromJobId"));
    expect(copies).toHaveLength(40); // one copy per job: nothing routed twice
    expect(new Set(copies.map((c) => mgr.jobAd(c.id).evaluate("RoutedFromJobId"))).size).toBe(40);
    for (const c of copies) {
      expect(mgr.jobAd(c.id).evaluate("RouteName")).toBe("Site1");
      expect(mgr.execEventlog(c.id).find((e) => e.name === "exec-state")?.context?.slurm_jobid).toMatch(/^\d+$/);
    }
    const results = ids.map((id) => mgr.job(id).result);
    expect(results.filter((r) => r !== "COMPLETED")).toEqual([]);
    expect(readFileSync(join(work, `${formatJobId(ids[7]! as JobId)}.out`), "utf8")).toBe("job 7\n");
  });
});

/**
 * condor-router through the real daemon: a pasted HTCondor router config loaded by name,
 * real jobs spilled from a full 1-core host, `jobtap router q` (table and --json) and
 * `jobtap router history`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonUnderTest, requireBuild, waitFor } from "./harness.js";

describe("condor-router from the command line", { timeout: 90_000 }, () => {
  let d: DaemonUnderTest;
  let dir: string;

  beforeAll(async () => {
    requireBuild();
    d = new DaemonUnderTest();
    dir = mkdtempSync(join(tmpdir(), "jobtap-router-e2e-"));
    const routerFile = join(dir, "60-router");
    writeFileSync(
      routerFile,
      [
        "JOB_ROUTER_SOURCE_JOB_CONSTRAINT = WantJobRouter",
        "JOB_ROUTER_POLLING_PERIOD = 1",
        "JOB_ROUTER_ROUTE_NAMES = Spill",
        "JOB_ROUTER_ROUTE_Spill @=rt",
        "MaxIdleJobs = 2",
        "SET Spilled = true",
        "@rt",
        "",
      ].join("\n"),
    );
    const file = join(d.statedir, "jobtap.toml");
    writeFileSync(file, `[resources]\ncores = 1\n[job-manager]\nplugins = [{ load = "condor-router", conf = { condor_config = ${JSON.stringify(routerFile)} } }]\n`);
    await d.start(["--config", file]);
  }, 60_000);
  afterAll(async () => {
    await d?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it("spills waiting jobs, shows them in router q, and summarises them in router history", async () => {
    // A job that is not a router candidate holds the only core, so the routed copies stay
    // idle (and visible in router q) however slow the machine is, until it is cancelled.
    const blocker = d.submit(["sleep", "300"]);
    const state = (id: string) => (JSON.parse(d.cli(["jobs", "-a", "--json"]).stdout) as Array<{ id: string; state: string }>).find((j) => j.id === id)?.state;
    await waitFor(() => state(blocker) === "RUN", 30_000, "the blocker to run");
    const ids = [0, 1, 2, 3].map(() => d.submit(["--classad", "WantJobRouter = true", "sleep", "1"]));
    const q = () => JSON.parse(d.cli(["router", "q", "--json"]).stdout) as { rows: Array<Record<string, unknown>>; routes: Array<Record<string, unknown>> };
    await waitFor(() => q().routes[0]?.idle === 2, 30_000, "two idle routed copies in router q");
    expect(q().routes[0]).toMatchObject({ name: "Spill", max_idle_jobs: 2, max_jobs: 100 });
    const table = d.cli(["router", "q"]).stdout;
    expect(table.split("\n")[0]).toBe("   JOBS ST Route                GridResource");
    expect(table).toMatch(/^ {6}2 {2}I Spill/m);
    d.cli(["cancel", blocker]);
    const jobs = () => JSON.parse(d.cli(["jobs", "-a", "--json"]).stdout) as Array<{ id: string; state: string; result?: string }>;
    await waitFor(() => ids.every((id) => jobs().find((j) => j.id === id)?.state === "INACTIVE"), 60_000, "every original to finish");
    expect(ids.map((id) => jobs().find((j) => j.id === id)?.result)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED", "COMPLETED"]);
    // A routed original says where it went (INFO `routed: COPY`), the copy being a real job.
    const info = d.cli(["jobs", "-a", "-o", "{id} {info}"]).stdout.split("\n");
    const routed = ids.flatMap((id) => info.filter((l) => l.startsWith(`${id} routed: `)).map((l) => l.slice(`${id} routed: `.length)));
    expect(routed.length).toBeGreaterThanOrEqual(1);
    for (const copy of routed) expect(jobs().find((j) => j.id === copy)?.state).toBe("INACTIVE");
    const hist = JSON.parse(d.cli(["router", "history", "--json"]).stdout) as { routes: Array<{ route: string; completed: number; aborted: number }> };
    expect(hist.routes).toHaveLength(1);
    expect(hist.routes[0]!.route).toBe("Spill");
    expect(hist.routes[0]!.completed).toBeGreaterThanOrEqual(1);
    expect(hist.routes[0]!.aborted).toBe(0);
    const text = d.cli(["router", "history"]).stdout.split("\n");
    expect(text[0]).toMatch(/^Routed job history from \d{4}-\d\d-\d\d \d\d:\d\d to /);
    expect(text[2]).toBe("Site            Hours    Jobs  Runs");
    expect(text.find((l) => l.startsWith("TOTAL"))).toMatch(/^TOTAL\s+0\s+\d+\s+0$/);
  });
});

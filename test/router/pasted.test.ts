/**
 * The HTCondor manual's router examples (the seeds), pasted as is: the current syntax
 * (JOB_ROUTER_ROUTE_NAMES with `@=rt` bodies and a pre-route transform) and the deprecated
 * JOB_ROUTER_DEFAULTS/JOB_ROUTER_ENTRIES form. Their first route sends jobs to Slurm
 * (`GridResource = "batch slurm"`; `[exec.slurm] bindir` names an empty directory, so no
 * sbatch runs here: test/slurm/router.test.ts runs them on a real cluster); the second is
 * an ARC CE, which jobtap cannot reach.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { host, type TestHost } from "../builtins/helpers.js";
import { attr, copies, routeRows, submitRoutable } from "./helpers.js";

const FIXTURES = fileURLToPath(new URL("../condor/fixtures/", import.meta.url));

let h: TestHost | undefined;
let empty: string;
beforeEach(() => {
  empty = mkdtempSync(join(tmpdir(), "jobtap-router-nobin-"));
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  rmSync(empty, { recursive: true, force: true });
});

/** The manual's file as pasted; the old syntax with the knob the manual says enables it. */
const pasted = (file: string) => {
  const conf: Record<string, unknown> = { condor_config: join(FIXTURES, file) };
  if (file.includes("old")) conf.condor_config_text = "JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES = True\n";
  return host({ exec: { slurm: { bindir: empty } } }, { plugin: "condor-router", conf, resources: { cores: 1 } });
};

describe("condor-router: the manual's examples, pasted", () => {
  for (const [file, first] of [["router-example.config", "Site1"], ["router-old-example.config", "Site_1"]] as const) {
    it(`${file}: jobs go to the first route (Slurm) up to MaxIdleJobs = 10, edited by the transforms`, async () => {
      const t = (h = await pasted(file));
      const rows = await routeRows(t);
      expect(rows.map((r) => r.name)[0]).toBe(first);
      await t.submit({ runDuration: 100_000 });
      await submitRoutable(t, 12);
      await t.advance(10_000);
      const routed = copies(t);
      expect(routed).toHaveLength(10);
      const copy = routed[0]!.id;
      expect(attr(t, copy, "RouteName")).toBe(first);
      expect(attr(t, copy, "GridResource")).toBe("batch slurm");
      expect(attr(t, copy, "WantJobRouter")).toBeUndefined(); // DELETE WantJobRouter
      expect(attr(t, copy, "Requirements")).toBe(true); // SET Requirements = true
      expect(t.manager.jobspec(copy).attributes.system?.exec).toMatchObject({ name: "slurm" });
      // Site1 holds MaxIdleJobs = 10 idle copies: the other two spill to the next route,
      // whose "arc" GridResource jobtap cannot reach: two failures there, the jobs stay here.
      const [site1, site2] = await routeRows(t);
      expect(site1).toMatchObject({ current: 10, idle: 10, accepting: false });
      expect(site2).toMatchObject({ recent_routed: 2, recent_failed: 2, current: 0 });
      expect(t.log.filter((l) => l.includes('GridResource "arc site2.edu"'))).toHaveLength(2);
    });
  }
});

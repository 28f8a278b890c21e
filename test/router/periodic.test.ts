/**
 * The seed router example's JOB_ROUTER_DEFAULTS set `PeriodicRemove = JobStatus == 5 ||
 * (JobStatus == 1 && (time() - QDate) > 3600*6)` on every routed copy: the manager's
 * periodic policy acts on the copy as on any job, and an original's own expressions act on
 * it while it is routed (docs/ads.md "Periodic job policy", docs/condor-router.md). The
 * current-syntax seed has the same SET with one `)` too many, which the transform skips
 * with a warning, so the deprecated-syntax seed is the one pasted here.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { host, type TestHost } from "../builtins/helpers.js";
import { attr, copiesOf, submitRoutable, until } from "./helpers.js";

const FIXTURES = fileURLToPath(new URL("../condor/fixtures/", import.meta.url));

let h: TestHost | undefined;
let empty: string;
beforeEach(() => {
  empty = mkdtempSync(join(tmpdir(), "jobtap-router-periodic-"));
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  rmSync(empty, { recursive: true, force: true });
});

/**
 * The manual's example as pasted, its JOB_ROUTER_DEFAULTS included; its entries replaced by
 * one that keeps the copy here (a Slurm copy waiting in Slurm is running for the manager),
 * so copies wait idle behind the one busy core.
 */
const pasted = () =>
  host({ exec: { slurm: { bindir: empty } } }, {
    plugin: "condor-router",
    conf: {
      condor_config: join(FIXTURES, "router-old-example.config"),
      condor_config_text: 'JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES = True\nJOB_ROUTER_ENTRIES = [ name = "Here"; ]\n',
    },
    resources: { cores: 1 },
  });

describe("periodic policy on routed copies and their originals", () => {
  it("the seed example's SET PeriodicRemove removes a copy idle for over 6 hours", async () => {
    const t = (h = await pasted());
    await t.submit({ runDuration: 100_000 });
    const [orig] = await submitRoutable(t, 1);
    await t.advance(10_000);
    const [copy] = copiesOf(t, orig!);
    expect(copy).toBeDefined();
    expect(attr(t, copy!.id, "JobStatus")).toBe(1n);
    await t.advance(6 * 3600_000 - 60_000);
    expect(t.job(copy!.id).state).not.toBe("INACTIVE");
    await until(t, () => t.job(copy!.id).state === "INACTIVE", 120_000);
    expect(attr(t, copy!.id, "JobStatus")).toBe(3n);
    expect(t.job(orig!).state).not.toBe("RUN");
    expect(t.manager.eventlog(copy!.id).find((e) => e.name === "exception")?.context?.note).toMatch(
      /^The job attribute PeriodicRemove expression 'JobStatus == 5 \|\| \(JobStatus == 1 && \(time\(\) - QDate\) > 3600 \* 6\)' evaluated to TRUE/,
    );
  });

  it("the same expression removes a copy put on hold at the next interval", async () => {
    const t = (h = await pasted());
    await t.submit({ runDuration: 100_000 });
    const [orig] = await submitRoutable(t, 1);
    await t.advance(10_000);
    const [copy] = copiesOf(t, orig!);
    t.manager.setUrgency(copy!.id, 0);
    await until(t, () => t.job(copy!.id).state === "INACTIVE", 61_000);
    expect(attr(t, copy!.id, "JobStatus")).toBe(3n);
  });

  it("an original's own PeriodicRemove acts while it is routed; the router then lets go of its copy", async () => {
    const t = (h = await pasted());
    await t.submit({ runDuration: 100_000 });
    const [orig] = await submitRoutable(t, 1, { classad: { PeriodicRemove: "time() - QDate > 120" } });
    await t.advance(10_000);
    const [copy] = copiesOf(t, orig!);
    expect(copy).toBeDefined();
    await until(t, () => t.job(orig!).state === "INACTIVE", 300_000);
    expect(attr(t, orig!, "JobStatus")).toBe(3n);
    await until(t, () => t.job(copy!.id).state === "INACTIVE", 300_000);
    expect(t.job(copy!.id).state).toBe("INACTIVE");
  });
});

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Jobspec } from "../../src/manager/port/records.js";
import { periodicSettings } from "../../src/manager/policy/system-periodic.js";
import { checkConfigFile } from "../../src/server/config.js";
import { simManager, submitNow, tempDir, testJob } from "./helpers.js";

function adJob(classad: Record<string, string>, runDuration = "1h"): Jobspec {
  const js = testJob(runDuration);
  js.attributes.user = { classad };
  return js;
}

function errorOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  return "(no error)";
}

describe("the site's SYSTEM_PERIODIC_HOLD / RELEASE / REMOVE", () => {
  it("SYSTEM_PERIODIC_HOLD holds any job with HoldReasonCode 26 and its _REASON / _SUBCODE; the job's own PeriodicHold goes first", async () => {
    const { system } = periodicSettings({
      "system-periodic-hold": "JobStatus == 1 && Cores > 2",
      "system-periodic-hold-reason": 'strcat("too many cores: ", Cores)',
      "system-periodic-hold-subcode": "Cores",
    });
    const s = await simManager({ systemPeriodic: system });
    // Requirements = false keeps them pending (no slot matches).
    const sys = await submitNow(s, adJob({ Cores: "8", Requirements: "false" }));
    const own = await submitNow(s, adJob({ Cores: "8", Requirements: "false", PeriodicHold: "true" }));
    const small = await submitNow(s, adJob({ Cores: "1" }));
    await s.clock.advance(60_000);
    const ad = s.mgr.jobAd(sys);
    expect([ad.evaluate("JobStatus"), ad.evaluate("HoldReasonCode"), ad.evaluate("HoldReasonSubCode"), ad.evaluate("HoldReason")]).toEqual([5n, 26n, 8n, "too many cores: 8"]);
    expect(s.mgr.jobAd(own).evaluate("HoldReasonCode")).toBe(3n);
    expect(s.mgr.job(small).state).toBe("RUN");
  });

  it("SYSTEM_PERIODIC_RELEASE releases a policy hold but never a user's; SYSTEM_PERIODIC_REMOVE removes, with HTCondor's wording", async () => {
    const { system } = periodicSettings({
      "system-periodic-release": "HoldReasonCode == 15 || HoldReasonCode == 1",
      "system-periodic-remove": "NumJobStarts == 0 && JobStatus == 1 && Remove =?= true",
    });
    const s = await simManager({ systemPeriodic: system, resources: { cores: 1, gpus: 0, memory: 1 << 30 } });
    const onHold = await submitNow(s, testJob("1h"), { urgency: 0 });
    const userHeld = await submitNow(s, testJob("1h"), { urgency: 0 });
    s.mgr.setUrgency(userHeld, 0);
    const doomed = await submitNow(s, adJob({ Remove: "true", Requirements: "false" }));
    await s.clock.advance(61_000);
    expect(s.mgr.job(onHold).state).toBe("RUN");
    expect(s.mgr.jobAd(userHeld).evaluate("HoldReasonCode")).toBe(1n);
    expect(s.mgr.jobAd(doomed).evaluate("JobStatus")).toBe(3n);
    expect(s.mgr.eventlog(doomed).find((e) => e.name === "exception")?.context?.note).toBe(
      "The system macro SYSTEM_PERIODIC_REMOVE expression 'NumJobStarts == 0 && JobStatus == 1 && Remove =?= true' evaluated to TRUE",
    );
  });

  it("reads a pasted condor_config, the TOML keys winning; errors name the TOML path or FILE:LINE and the column", () => {
    const { dir, cleanup } = tempDir();
    try {
      writeFileSync(join(dir, "schedd.conf"), "SYSTEM_PERIODIC_HOLD = NumVacates > 5\nSYSTEM_PERIODIC_HOLD_SUBCODE = 9\nPERIODIC_EXPR_INTERVAL = 30\nSYSTEM_PERIODIC_REMOVE = false\n");
      const p = periodicSettings({ condor_config: "schedd.conf", "system-periodic-remove": "JobStatus == 5" }, dir);
      expect(p.intervalMs).toBe(30_000);
      expect(Object.keys(p.system).sort()).toEqual(["hold", "remove"]);
      expect(errorOf(() => periodicSettings({ "system-periodic-hold": "JobStatus ==" }))).toMatch(/^\[policy\]\.system-periodic-hold: ClassAd syntax error at column \d+/);
      expect(errorOf(() => periodicSettings({ "periodic-expr-interval": "1m" }))).toMatch(/^\[policy\]\.periodic-expr-interval: must be a whole number of seconds/);
      writeFileSync(join(dir, "bad.conf"), "# site policy\nSYSTEM_PERIODIC_RELEASE = (HoldReasonCode == \n");
      expect(errorOf(() => periodicSettings({ condor_config: "bad.conf" }, dir))).toMatch(/bad\.conf:2: SYSTEM_PERIODIC_RELEASE: ClassAd syntax error at column \d+/);
      writeFileSync(join(dir, "vacate.conf"), "SYSTEM_PERIODIC_VACATE = true\n");
      expect(errorOf(() => periodicSettings({ condor_config: "vacate.conf" }, dir))).toMatch(/vacate\.conf:1: SYSTEM_PERIODIC_VACATE is not supported/);
      writeFileSync(join(dir, "iv.conf"), "PERIODIC_EXPR_INTERVAL = -5\n");
      expect(errorOf(() => periodicSettings({ condor_config: "iv.conf" }, dir))).toMatch(/iv\.conf:1: PERIODIC_EXPR_INTERVAL: must be a whole number of seconds/);
      const file = join(dir, "jobtap.toml");
      writeFileSync(file, '[policy]\nsystem-periodic-remove = "JobStatus =="\n');
      expect(checkConfigFile(file, {}).errors.map((e) => e.message)).toEqual([expect.stringMatching(/^\[policy\]\.system-periodic-remove: ClassAd syntax error/)]);
      writeFileSync(file, '[policy]\nsystem-periodic-remove = "JobStatus == 5"\nperiodic-expr-interval = 15\n');
      const ok = checkConfigFile(file, {});
      expect(ok.errors).toEqual([]);
      expect([ok.config?.settings.systemPeriodic?.remove !== undefined, ok.config?.settings.periodicExprIntervalMs]).toEqual([true, 15_000]);
    } finally {
      cleanup();
    }
  });
});

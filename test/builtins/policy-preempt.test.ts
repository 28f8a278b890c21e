import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import { exceptions, host, settle, writeScript, type TestHost } from "./helpers.js";

let h: TestHost | undefined;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "jobtap-policy-preempt-"));
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** A two-slot host whose slot 1 gets `Overheated` from a real condor-cron script reading `state`. */
async function overheatingHost(state: string, policy: Record<string, unknown>): Promise<TestHost> {
  writeFileSync(state, "false\n");
  const probe = writeScript(dir, "thermal", `echo "SlotId = 1"; echo "Overheated = $(cat ${state})"`);
  const file = join(dir, "50-thermal");
  writeFileSync(file, [
    "STARTD_CRON_JOBLIST = thermal",
    `STARTD_CRON_THERMAL_EXECUTABLE = ${probe}`,
    "STARTD_CRON_THERMAL_MODE = Periodic",
    "STARTD_CRON_THERMAL_PERIOD = 10s",
    "",
  ].join("\n"));
  return host({ policy }, { plugin: "condor-cron", conf: { condor_config: file }, slots: [{ count: 2, cores: 1 }] });
}

/** The slot (SlotID) whose ad lists job `id` as running there, or undefined. */
function slotOf(t: TestHost, id: JobId): number | undefined {
  for (const slot of [1, 2]) {
    const ids = t.manager.hostAds.slotAd(slot)?.evaluate("JobIds");
    if (typeof ids === "string" && ids.split(",").includes(formatJobId(id))) return slot;
  }
  return undefined;
}

describe("slot PREEMPT driven by a real condor-cron probe", () => {
  it("evicts the running job into a pending copy, which is not placed on that slot while PREEMPT holds", async () => {
    const state = join(dir, "overheated");
    const t = (h = await overheatingHost(state, { preempt: "Overheated =?= true" }));
    const overheated = () => t.manager.hostAds.slotAd(1)?.evaluate("Overheated");
    await settle(t, () => overheated() === false, 500);
    const first = await t.submit({ runDuration: "1h" });
    await settle(t, () => t.job(first).state === "RUN", 500);
    const other = await t.submit({ runDuration: "1h" });
    await settle(t, () => t.job(other).state === "RUN", 500);
    expect([slotOf(t, first), slotOf(t, other)]).toEqual([1, 2]);

    writeFileSync(state, "true\n");
    await settle(t, () => t.job(first).state === "INACTIVE", 500);
    const copies = t.manager.jobs({}).filter((j) => j.id !== first && j.id !== other);
    expect(copies).toHaveLength(1);
    const copy = copies[0]!.id as JobId;
    expect(exceptions(t, first)).toEqual([`evict:0:slot 1: PREEMPT (Overheated =?= true) is true (pending again as ${formatJobId(copy)})`]);
    expect(t.job(other).state).toBe("RUN");
    const ad = t.manager.jobAd(copy);
    expect(ad.evaluate("RequeuedFromJobId")).toBe(formatJobId(first));
    expect(ad.evaluate("NumVacates")).toBe(1n);
    expect(ad.evaluate("NumVacatesPreExecution")).toBe(0n);
    expect(ad.evaluate("NumShadowStarts")).toBe(1n);
    expect(ad.evaluate("VacateReason")).toBe("slot 1: PREEMPT (Overheated =?= true) is true");

    // Slot 1 is free and its START is true, but its PREEMPT would evict the copy at once.
    await t.advance(30_000);
    expect(t.job(copy).state).toBe("SCHED");
    expect(t.manager.hostAds.slotAd(1)?.evaluate("NumJobs")).toBe(0n);
    expect(t.manager.jobAd(copy).evaluate("LastRejMatchTime")).toBeTypeOf("bigint");

    writeFileSync(state, "false\n");
    await settle(t, () => t.job(copy).state === "RUN", 500);
    expect(slotOf(t, copy)).toBe(1);
    expect(t.job(other).state).toBe("RUN");
  });

  it("with START saying no as well, the copy goes to the other slot at once", async () => {
    const state = join(dir, "overheated");
    const t = (h = await overheatingHost(state, { preempt: "Overheated =?= true", start: "Overheated =!= true" }));
    await settle(t, () => t.manager.hostAds.slotAd(1)?.evaluate("Overheated") === false, 500);
    const first = await t.submit({ runDuration: "1h" });
    await settle(t, () => t.job(first).state === "RUN", 500);
    expect(slotOf(t, first)).toBe(1);
    writeFileSync(state, "true\n");
    await settle(t, () => t.job(first).state === "INACTIVE", 500);
    const copy = t.manager.jobs({}).find((j) => j.id !== first)!.id as JobId;
    await settle(t, () => t.job(copy).state === "RUN", 500);
    expect(slotOf(t, copy)).toBe(2);
    // The copy runs on slot 2, whose PREEMPT is false: it stays.
    await t.advance(30_000);
    expect(t.job(copy).state).toBe("RUN");
    expect(t.manager.jobs({}).length).toBe(2);
  });
});

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ClassAd } from "../../src/classad/index.js";
import { cronTarget } from "../../plugins-builtin/condor-cron/target.js";
import { carveSlots } from "../../src/manager/scheduler/slots.js";
import { checkConfigFile } from "../../src/server/config.js";
import { jobspec, simManager, submitNow, tempDir, testJob } from "./helpers.js";

const GiB = 2 ** 30;
const POOL = { cores: 8, gpus: 2, memory: 16 * GiB };

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  return "no error";
}

describe("slot layouts", () => {
  it("default: one slot with everything, SlotTypeID 0", () => {
    expect(carveSlots(POOL, undefined)).toEqual([{ id: 1, typeId: 0, coreLo: 0, coreHi: 8, gpuLo: 0, gpuHi: 2, memory: 16 * GiB }]);
  });

  it("carves consecutive cores and gpus; memory not given is shared equally", () => {
    const slots = carveSlots(POOL, [{ count: 2, cores: 2, gpus: 1, memory: 4 * GiB }, { count: 2, cores: 1 }]);
    expect(slots.map((s) => [s.id, s.typeId, s.coreLo, s.coreHi, s.gpuLo, s.gpuHi, s.memory])).toEqual([
      [1, 1, 0, 2, 0, 1, 4 * GiB],
      [2, 1, 2, 4, 1, 2, 4 * GiB],
      [3, 2, 4, 5, 2, 2, 4 * GiB],
      [4, 2, 5, 6, 2, 2, 4 * GiB],
    ]);
  });

  it("a layout that does not fit names its TOML path and what is left", () => {
    expect(errorOf(() => carveSlots(POOL, [{ count: 1, cores: 6 }, { count: 2, cores: 2 }]))).toBe(
      "[resources].slots[1]: 2 slot(s) × 2 cores = 4 do not fit: 2 of the 8 cores in [resources] are left",
    );
    expect(errorOf(() => carveSlots(POOL, [{ count: 3, cores: 1, gpus: 1 }]))).toMatch(/^\[resources\]\.slots\[0\]: 3 slot\(s\) × 1 gpus = 3 do not fit/);
    expect(errorOf(() => carveSlots(POOL, [{ cores: 1, memory: 32 * GiB }]))).toMatch(/^\[resources\]\.slots\[0\]: .* memory .* do not fit/);
    expect(errorOf(() => carveSlots(POOL, [{ count: 0, cores: 1 }]))).toBe("[resources].slots[0].count: must be an integer >= 1, got 0");
    expect(errorOf(() => carveSlots(POOL, [{ count: 1 } as never]))).toBe("[resources].slots[0].cores: is required");
    expect(errorOf(() => carveSlots(POOL, [{ cores: 1, cpus: 2 } as never]))).toMatch(/slots\[0\]\.cpus: unknown key/);
  });

  it("config check reports a bad layout with its TOML path; sizes may be written as in [resources]", () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, "jobtap.toml");
      writeFileSync(file, '[resources]\ncores = 4\nmemory = "8G"\nslots = [{ count = 2, cores = 2, memory = "2G" }, { cores = 1 }]\n');
      expect(checkConfigFile(file, {}).errors.map((e) => e.message)).toEqual([
        "[resources].slots[1]: 1 slot(s) × 1 cores = 1 do not fit: 0 of the 4 cores in [resources] are left",
      ]);
      writeFileSync(file, '[resources]\ncores = 4\nmemory = "8G"\nslots = [{ count = 2, cores = 2, memory = "2G" }]\n');
      const ok = checkConfigFile(file, {});
      expect(ok.errors).toEqual([]);
      expect(ok.config?.settings.slots).toEqual([{ count: 2, cores: 2, memory: 2 * GiB }]);
    } finally {
      cleanup();
    }
  });
});

describe("scheduling inside slots", () => {
  const layout = { resources: { cores: 4, gpus: 0, memory: 4 * GiB }, slots: [{ count: 2, cores: 2 }] };

  it("a job naming a slot is allocated inside it; others go to the first slot that fits", async () => {
    const s = await simManager(layout);
    const pinned = await submitNow(s, testJob("1h", {}, { slot: 2 }));
    const free = await submitNow(s, testJob("1h"));
    await s.clock.advance(1);
    const cores = (id: bigint) => ((s.mgr.jobR(id as never)!.execution as { R_lite: Array<{ children: { core: string } }> }).R_lite[0]!.children.core);
    expect(cores(pinned)).toBe("2");
    expect(cores(free)).toBe("0");
    // Slot 2 has one core left; a two-core job pinned there waits although slot 1 has one free too.
    const big = await submitNow(s, testJob("1h", {}, { slot: 2 }), {});
    const bigTwo = jobspec(["true"], { slot: 2, exec: { test: { run_duration: "1h" } } }, { cores: 2 });
    const waiting = await submitNow(s, bigTwo);
    await s.clock.advance(1);
    expect(s.mgr.job(big).state).toBe("RUN");
    expect(s.mgr.job(waiting).state).toBe("SCHED");
    await s.mgr.close();
  });

  it("a job naming a missing slot, or too big for its slot, is rejected at submit", async () => {
    const s = await simManager(layout);
    await expect(s.mgr.submit(testJob(0, {}, { slot: 3 }))).rejects.toMatchObject({
      code: "UNKNOWN_SLOT",
      message: "jobspec: attributes.system.slot: no slot 3 on this host (it has slots 1-2)",
    });
    await expect(s.mgr.submit(testJob(0, {}, { slot: "two" }))).rejects.toMatchObject({
      code: "BAD_JOBSPEC",
      message: expect.stringMatching(/attributes\.system\.slot: must be a slot number/),
    });
    await expect(submitNow(s, jobspec(["true"], { slot: 1 }, { cores: 3 }))).rejects.toMatchObject({
      code: "JOB_REJECTED",
      message: "unsatisfiable request: 3 cores requested, slot 1 has 2",
    });
    await expect(submitNow(s, jobspec(["true"], {}, { cores: 3 }))).rejects.toMatchObject({
      message: expect.stringMatching(/^unsatisfiable request: no slot is large enough \(3 cores/),
    });
    await s.mgr.close();
  });
});

describe("slot ads", () => {
  it("follow the slot's state: Unclaimed/Idle, Claimed/Busy while a job runs in it", async () => {
    const s = await simManager({ resources: { cores: 4, gpus: 1, memory: 4 * GiB }, slots: [{ count: 2, cores: 2 }] });
    const t0 = BigInt(Math.floor(s.clock.now() / 1000));
    let [one, two] = s.mgr.hostAds.slotAds();
    expect(one!.evaluate("Name")).toMatch(/^slot1@/);
    expect(two!.evaluate("SlotID")).toBe(2n);
    expect(two!.evaluate("SlotTypeID")).toBe(1n);
    expect(two!.evaluate("Cpus")).toBe(2n);
    expect(two!.evaluate("Memory")).toBe(2048n);
    expect(two!.evaluate("TotalCpus")).toBe(4n);
    expect(two!.evaluate("TotalSlots")).toBe(2n);
    expect(two!.evaluate("State")).toBe("Unclaimed");
    expect(two!.evaluate("Activity")).toBe("Idle");
    expect(two!.evaluate("EnteredCurrentState")).toBe(t0);
    expect(two!.evaluate("Requirements")).toBe(true);
    await s.clock.advance(5_000);
    const id = await submitNow(s, testJob("60s", {}, { slot: 2 }));
    await s.clock.advance(1);
    const claimedAt = BigInt(Math.floor(s.clock.now() / 1000));
    [one, two] = s.mgr.hostAds.slotAds();
    expect(one!.evaluate("State")).toBe("Unclaimed");
    expect(two!.evaluate("State")).toBe("Claimed");
    expect(two!.evaluate("Activity")).toBe("Busy");
    expect(two!.evaluate("EnteredCurrentState")).toBe(claimedAt);
    // Matchmaking between the slot ad and the job ad, both ways.
    const { matches } = await import("../../src/classad/index.js");
    const job = s.mgr.jobAd(id).clone().setExpr("Requirements", "TARGET.Cpus >= RequestCpus && TARGET.OpSys =!= undefined");
    expect(matches(job, two!)).toBe(true);
    await s.clock.advance(60_000);
    expect(s.mgr.job(id).state).toBe("INACTIVE");
    two = s.mgr.hostAds.slotAd(2)!;
    expect(two.evaluate("State")).toBe("Unclaimed");
    expect(two.evaluate("EnteredCurrentState")).toBe(claimedAt + 60n);
    const machine = s.mgr.hostAds.machineAd();
    expect(machine.evaluate("TotalGpus")).toBe(1n);
    expect(machine.has("SlotID")).toBe(false);
    await s.mgr.close();
  });

  it("merge later-registered ads over earlier ones, by selector, never touching identity", async () => {
    const s = await simManager({ resources: { cores: 12, gpus: 0, memory: 12 * GiB }, slots: [{ count: 10, cores: 1 }, { count: 1, cores: 2 }] });
    const h = s.mgr.hostAds;
    const ad = (text: string) => {
      const a = new ClassAd();
      for (const line of text.split(";")) {
        const [n, e] = line.split("=");
        a.setExpr(n!.trim(), e!.trim(), true);
      }
      return a;
    };
    const values = () => h.slotAds().map((a) => (a.has("Value") ? a.evaluate("Value") : "-"));
    // HTCondor's manual example: the base record first, then tagged records for slots 1 and 2.
    h.publish("cron:job", ad("Value = 10"), cronTarget(ad("Value = 10")));
    h.publish("cron:job.s1", ad("Value = 1; SlotId = 1"), cronTarget(ad("Value = 1; SlotId = 1")));
    h.publish("cron:job.s2", ad("Value = 2; SlotId = 2"), cronTarget(ad("Value = 2; SlotId = 2")));
    expect(values()).toEqual([1n, 2n, 10n, 10n, 10n, 10n, 10n, 10n, 10n, 10n, 10n]);
    // Publishing again replaces the ad in place: it keeps its (early) position.
    h.publish("cron:job", ad("Value = 20"));
    expect(values()).toEqual([1n, 2n, 20n, 20n, 20n, 20n, 20n, 20n, 20n, 20n, 20n]);
    // A name prefix matches slot1, slot10 and slot11 (HTCondor's starts-with rule).
    h.publish("p", ad('Value = 5; SlotName = "slot1"'), cronTarget(ad('Value = 5; SlotName = "slot1"')));
    expect(values()).toEqual([5n, 2n, 20n, 20n, 20n, 20n, 20n, 20n, 20n, 5n, 5n]);
    // SlotTypeId selects the second type; the selector itself is never merged.
    h.publish("t", ad("Value = 7; SlotTypeId = 2"), cronTarget(ad("Value = 7; SlotTypeId = 2")));
    const last = h.slotAd(11)!;
    expect(last.evaluate("Value")).toBe(7n);
    expect(last.evaluate("SlotTypeID")).toBe(2n);
    // A constraint sees the slot ad as TARGET (merged so far) and the published ad as MY.
    h.publish("c", ad("Value = 99; Wanted = 3"), { constraint: "TARGET.SlotID == MY.Wanted" });
    expect(values()[2]).toBe(99n);
    // Identity is never overwritten; the SLOTS list restricts; withdraw removes.
    h.publish("rename", ad('Name = "evil"; SlotID = 42; Extra = true'), { slotIds: [4] });
    expect(h.slotAd(4)!.evaluate("Name")).toMatch(/^slot4@/);
    expect(h.slotAd(4)!.evaluate("SlotID")).toBe(4n);
    expect(h.slotAd(4)!.evaluate("Extra")).toBe(true);
    expect(h.slotAd(5)!.has("Extra")).toBe(false);
    expect(h.withdraw("c")).toBe(true);
    expect(values()[2]).toBe(20n);
    expect(h.sources()).toEqual(["cron:job", "cron:job.s1", "cron:job.s2", "p", "t", "rename"]);
    // Expressions are merged, not values: Start can follow the slot's state.
    h.publish("policy", new ClassAd().setExpr("Start", 'State == "Unclaimed" && LoadAvg < 100', true));
    expect(h.slotAd(1)!.evaluate("Start")).toBe(true);
    // The machine ad only takes what targets it.
    h.publish("m", ad("SiteName = \"lab\""), { ad: "machine" });
    expect(h.machineAd().evaluate("SiteName")).toBe("lab");
    expect(h.slotAd(1)!.has("SiteName")).toBe(false);
    expect(() => h.publish("bad", ad("X = 1"), { constraint: "SlotID ==" })).toThrow(/host ads: source bad: constraint: ClassAd syntax error/);
    await s.mgr.close();
  });
});

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { unparse } from "../../src/classad/index.js";
import { carveSlots } from "../../src/manager/scheduler/slots.js";
import { slotPolicies } from "../../src/manager/policy/slot-policy.js";
import { checkConfigFile } from "../../src/server/config.js";
import { simManager, tempDir } from "./helpers.js";

const GiB = 2 ** 30;
const POOL = { cores: 4, gpus: 0, memory: 4 * GiB };
const SLOTS = carveSlots(POOL, [{ count: 2, cores: 1 }, { count: 2, cores: 1 }]);

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  return "no error";
}

describe("slot policy from TOML and a pasted HTCondor config", () => {
  it("[policy] applies to every slot; a slots entry overrides it for its slots", () => {
    const p = slotPolicies(SLOTS, { start: "KeyboardIdle > 15", rank: "TARGET.Prio" }, [{}, { start: "false", "startd-attrs": { HasJava: "true" } }]);
    expect(p.map((s) => unparse(s.start!, true))).toEqual(["KeyboardIdle > 15", "KeyboardIdle > 15", "false", "false"]);
    expect(p.map((s) => s.attrs!.map(([n]) => n))).toEqual([[], [], ["HasJava"], ["HasJava"]]);
  });

  it("a condor_config FILE: plain knobs, SLOT_TYPE_<N>_ over them, SLOT<N>_ over both, STARTD_ATTRS published", () => {
    const { dir, cleanup } = tempDir();
    try {
      writeFileSync(join(dir, "startd.conf"), [
        "START = True",
        "SLOT_TYPE_2_START = TARGET.Owner == \"alice\"",
        "SLOT4_START = False",
        "RANK = TARGET.Memory",
        "HasJava5PrepareHook = True",
        "STARTD_ATTRS = $(STARTD_ATTRS) HasJava5PrepareHook",
        "",
      ].join("\n"));
      const p = slotPolicies(SLOTS, { condor_config: "startd.conf" }, [], dir);
      expect(p.map((s) => unparse(s.start!, true))).toEqual(["true", "true", 'TARGET.Owner == "alice"', "false"]);
      expect(unparse(p[0]!.rank!, true)).toBe("TARGET.Memory");
      expect(p[0]!.attrs!.map(([n, e]) => `${n} = ${unparse(e, true)}`)).toEqual(["HasJava5PrepareHook = true"]);
    } finally {
      cleanup();
    }
  });

  it("errors name the TOML path, or FILE:LINE and the column; SUSPEND and KILL are refused by name", () => {
    const { dir, cleanup } = tempDir();
    try {
      expect(errorOf(() => slotPolicies(SLOTS, { start: "Memory >" }))).toMatch(/^\[policy\]\.start: ClassAd syntax error at column \d+/);
      expect(errorOf(() => slotPolicies(SLOTS, {}, [{ rank: "1 +* 2" }]))).toMatch(/^\[resources\]\.slots\[0\]\.rank: ClassAd syntax error/);
      expect(errorOf(() => slotPolicies(SLOTS, { suspend: "true" }))).toMatch(/^\[policy\]\.suspend: SUSPEND is not supported/);
      writeFileSync(join(dir, "bad.conf"), "# policy\nSTART = (Memory > \n");
      expect(errorOf(() => slotPolicies(SLOTS, { condor_config: "bad.conf" }, [], dir))).toMatch(/bad\.conf:2: START: ClassAd syntax error at column \d+/);
      writeFileSync(join(dir, "kill.conf"), "START = true\nWANT_SUSPEND = true\n");
      expect(errorOf(() => slotPolicies(SLOTS, { condor_config: "kill.conf" }, [], dir))).toMatch(/kill\.conf:2: WANT_SUSPEND is not supported/);
    } finally {
      cleanup();
    }
  });

  it("config check reports a policy error; a good one reaches the settings", () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, "jobtap.toml");
      writeFileSync(file, '[resources]\ncores = 2\nslots = [{ count = 2, cores = 1, start = "SlotID ==" }]\n');
      expect(checkConfigFile(file, {}).errors.map((e) => e.message)).toEqual([expect.stringMatching(/^\[resources\]\.slots\[0\]\.start: ClassAd syntax error/)]);
      writeFileSync(file, '[resources]\ncores = 2\n[policy]\nstart = "NODE_IS_HEALTHY =!= false"\nkill = "true"\n');
      expect(checkConfigFile(file, {}).errors.map((e) => e.message)).toEqual([expect.stringMatching(/^\[policy\]\.kill: KILL is not supported/)]);
      writeFileSync(file, '[resources]\ncores = 2\n[policy]\nstart = "NODE_IS_HEALTHY =!= false"\n');
      const ok = checkConfigFile(file, {});
      expect(ok.errors).toEqual([]);
      expect(ok.config?.settings.slotPolicy?.map((p) => unparse(p.start!, true))).toEqual(["NODE_IS_HEALTHY =!= false"]);
    } finally {
      cleanup();
    }
  });

  it("the slot ad carries Start, Requirements = START, Rank and the published attributes; reconfig replaces them", async () => {
    const slotPolicy = slotPolicies(SLOTS, { start: "TARGET.Owner =!= \"mallory\"", rank: "2.5", "startd-attrs": { HasJava5PrepareHook: "true" } });
    const s = await simManager({ resources: POOL, slots: [{ count: 4, cores: 1 }], slotPolicy });
    const ad = s.mgr.hostAds.slotAd(1)!;
    expect(unparse(ad.lookup("Start")!, true)).toBe('TARGET.Owner =!= "mallory"');
    expect(unparse(ad.lookup("Requirements")!, true)).toBe("START");
    expect(ad.evaluate("Rank")).toBe(2.5);
    expect(ad.evaluate("HasJava5PrepareHook")).toBe(true);
    s.mgr.hostAds.setPolicy([]);
    expect(s.mgr.hostAds.slotAd(1)!.evaluate("Start")).toBe(true);
    expect(s.mgr.hostAds.slotAd(1)!.has("HasJava5PrepareHook")).toBe(false);
  });
});

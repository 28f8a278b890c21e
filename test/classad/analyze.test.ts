import { describe, expect, it } from "vitest";
import { analyzeRequirements, parseOldAd } from "../../src/classad/index.js";
import { analyzeRequirements as fromModule } from "../../src/classad/analyze.js";

function slot(id: number, memory: number, start = "true") {
  return parseOldAd(`Name = "slot${id}@h"\nSlotID = ${id}\nMemory = ${memory}\nArch = "X86_64"\nStart = ${start}\nRequirements = START\n`);
}

describe("analyzeRequirements (better-analyze)", () => {
  const slots = [slot(1, 1024), slot(2, 2048), slot(3, 4096, 'TARGET.Owner == "alice"')];

  it("counts, per top-level && clause, the slots it holds against", () => {
    const job = parseOldAd('Owner = "bob"\nRequirements = (TARGET.Arch == "X86_64") && (TARGET.Memory >= 2000) && MY.Owner =!= undefined\n');
    const a = fromModule(job, slots);
    expect(a.requirements).toBe('(TARGET.Arch == "X86_64") && (TARGET.Memory >= 2000) && MY.Owner =!= undefined');
    expect(a.clauses).toEqual([
      { text: 'TARGET.Arch == "X86_64"', slotsMatching: 3 },
      { text: "TARGET.Memory >= 2000", slotsMatching: 2 },
      { text: "MY.Owner =!= undefined", slotsMatching: 3 },
    ]);
    expect(a.slots.map((s) => [s.slot, s.start, s.job, s.matches])).toEqual([
      ["slot1@h", "true", "false", false],
      ["slot2@h", "true", "true", true],
      ["slot3@h", "false", "true", false],
    ]);
    expect(a.slotsMatching).toBe(1);
    expect(a.firstUnsatisfied).toBeUndefined();
  });

  it("names the first clause no slot satisfies and suggests the constant that would fix it", () => {
    const job = parseOldAd('Requirements = TARGET.Arch == "X86_64" && TARGET.Memory > 8000 && TARGET.SlotID == 9\n');
    const a = analyzeRequirements(job, slots);
    expect(a.firstUnsatisfied).toEqual({ index: 1, text: "TARGET.Memory > 8000", suggestion: "TARGET.Memory > 1023" });
    const eq = analyzeRequirements(parseOldAd("Requirements = TARGET.SlotID == 9\n"), slots);
    expect(eq.firstUnsatisfied).toEqual({ index: 0, text: "TARGET.SlotID == 9", suggestion: "TARGET.SlotID == 1" });
    const flipped = analyzeRequirements(parseOldAd("Requirements = 9000 <= TARGET.Memory\n"), slots);
    expect(flipped.firstUnsatisfied?.suggestion).toBe("1024 <= TARGET.Memory");
  });

  it("no suggestion when one constant would not do; no Requirements matches wherever START holds", () => {
    const a = analyzeRequirements(parseOldAd('Requirements = regexp("^ppc", TARGET.Arch)\n'), slots);
    expect(a.firstUnsatisfied).toEqual({ index: 0, text: 'regexp("^ppc",TARGET.Arch)' });
    const none = analyzeRequirements(parseOldAd('Owner = "alice"\n'), slots);
    expect(none.requirements).toBeUndefined();
    expect(none.clauses).toEqual([]);
    expect(none.slotsMatching).toBe(3);
  });
});

import { describe, expect, it } from "vitest";
import { isJobtapError } from "../../src/errors.js";
import { asJobId, FluidGenerator, fluidParts, formatJobId, JOBID_ENCODINGS, parseJobId } from "../../src/manager/base/ids.js";

describe("job ids (FLUIDs)", () => {
  const samples = [0n, 1n, 57n, 58n, 1234567890123n, (1n << 63n) + 12345n, (1n << 64n) - 1n].map((v) => asJobId(v));

  it("round-trips every encoding for edge and typical values", () => {
    for (const id of samples) {
      for (const enc of JOBID_ENCODINGS) {
        expect(parseJobId(formatJobId(id, enc)), `${enc} of ${id}`).toBe(id);
      }
    }
  });

  it("formats the known forms as Flux does", () => {
    const zero = asJobId(0n);
    expect(formatJobId(zero)).toBe("ƒ1");
    expect(formatJobId(zero, "dothex")).toBe("0000.0000.0000.0000");
    expect(formatJobId(zero, "words")).toBe("academy-academy-academy--academy-academy-academy");
    expect(formatJobId(asJobId(58n))).toBe("ƒ21");
    expect(formatJobId(asJobId(0x1234n), "hex")).toBe("0x1234");
    expect(formatJobId(asJobId(1n), "words")).toBe("acrobat-academy-academy--academy-academy-academy");
  });

  it("accepts an ASCII f for ƒ, a job. prefix on dothex, and surrounding blanks", () => {
    const id = asJobId(1234567890123n);
    expect(parseJobId(formatJobId(id).replace("ƒ", "f"))).toBe(id);
    expect(parseJobId(`job.${formatJobId(id, "dothex")}`)).toBe(id);
    expect(parseJobId(` ${formatJobId(id, "dec")} `)).toBe(id);
  });

  it("rejects malformed ids with BAD_JOBID naming the input", () => {
    for (const bad of ["", "ƒ", "ƒ0OIl", "0xZZ", "18446744073709551616", "academy-academy", "nosuchword-a-b--c-d-e", "12ab"]) {
      let err: unknown;
      try {
        parseJobId(bad);
      } catch (e) {
        err = e;
      }
      expect(isJobtapError(err, "BAD_JOBID"), bad).toBe(true);
      expect((err as Error).message).toContain(`"${bad}"`);
    }
    expect(() => asJobId(-1n)).toThrow(/out of range/);
  });

  it("generates strictly increasing ids, even past 1024 per millisecond on a still clock", () => {
    const gen = new FluidGenerator(1000, () => 5000, 3);
    let prev = gen.next();
    expect(fluidParts(prev)).toEqual({ timestamp: 4000, generator: 3, seq: 0 });
    for (let i = 0; i < 3000; i++) {
      const id = gen.next();
      expect(id > prev).toBe(true);
      prev = id;
    }
    expect(fluidParts(prev).timestamp).toBeGreaterThan(4000);
  });

  it("continues after the highest replayed id", () => {
    const gen = new FluidGenerator(0, () => 10);
    const old = new FluidGenerator(0, () => 99_999).next();
    gen.advancePast(old);
    expect(gen.next() > old).toBe(true);
  });
});

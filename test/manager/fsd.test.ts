import { describe, expect, it } from "vitest";
import { formatFSD, parseFSD } from "../../src/manager/base/fsd.js";

describe("Flux Standard Duration", () => {
  it("parses units and infinity", () => {
    expect(parseFSD("30")).toBe(30);
    expect(parseFSD("1.5m")).toBe(90);
    expect(parseFSD("2h")).toBe(7200);
    expect(parseFSD("1d")).toBe(86400);
    expect(parseFSD("250ms")).toBe(0.25);
    expect(parseFSD("inf")).toBe(Infinity);
    expect(parseFSD(0)).toBe(0);
  });

  it("rejects bad values naming the value and the place", () => {
    expect(() => parseFSD("-1s", "jobspec duration")).toThrow(/jobspec duration: invalid Flux Standard Duration "-1s"/);
    expect(() => parseFSD("1w")).toThrow(/"1w"/);
    expect(() => parseFSD(-2)).toThrow(/"-2"/);
  });

  it("formats short durations", () => {
    expect(formatFSD(90)).toBe("1.5m");
    expect(formatFSD(5)).toBe("5s");
    expect(formatFSD(Infinity)).toBe("inf");
  });
});

/**
 * C printf conversions of doubles as glibc prints them (expected strings are glibc's): exact
 * decimal ties round to even, where JavaScript's toExponential/toFixed round up.
 */
import { describe, expect, it } from "vitest";
import { formatE, formatF, formatG } from "../../src/classad/index.js";

describe("C number formats", () => {
  it("%.16G / %.15E / %.<n>G round an exact tie to even", () => {
    expect(formatG(1234567890123456.5, 16)).toBe("1234567890123456");
    expect(formatG(1234567890123457.5, 16)).toBe("1234567890123458");
    expect(formatG(-1234567890123456.5, 16)).toBe("-1234567890123456");
    expect(formatE(1234567890123456.5, 15)).toBe("1.234567890123456E+15");
    expect(formatG(123456.5, 6)).toBe("123456");
    expect(formatE(0.5, 0)).toBe("5E-01");
    expect(formatE(9.5, 0)).toBe("1E+01");
  });

  it("%.<n>f rounds an exact tie to even", () => {
    expect(formatF(0.125, 2)).toBe("0.12");
    expect(formatF(0.375, 2)).toBe("0.38");
    expect(formatF(2.5, 0)).toBe("2");
    expect(formatF(3.5, 0)).toBe("4");
    expect(formatF(-2.5, 0)).toBe("-2");
  });

  it("values that are not ties, and the extremes, print as C does", () => {
    expect(formatG(0.00012345, 4)).toBe("0.0001234");
    expect(formatE(1e-300, 15)).toBe("1.000000000000000E-300");
    expect(formatE(5e-324, 15)).toBe("4.940656458412465E-324");
    expect(formatG(1.7976931348623157e308, 16)).toBe("1.797693134862316E+308");
    expect(formatG(1e16, 16)).toBe("1E+16");
    expect(formatG(0.1, 16)).toBe("0.1");
    expect(formatG(1 / 3, 16)).toBe("0.3333333333333333");
  });
});

/** Dashboard login codes on a simulated clock: live 60 s, used once, bounded in number. */
import { describe, expect, it } from "vitest";
import { CODE_TTL_MS, loginCodes } from "../../src/server/http/login.js";

describe("login codes", () => {
  it("a code works once, for its user, within 60 s", () => {
    let now = 1_000_000;
    const codes = loginCodes(() => now);
    const a = codes.issue(1001);
    const b = codes.issue(1002);
    expect(a.code).not.toBe(b.code);
    expect(a.expires).toBe(now + CODE_TTL_MS);
    now += CODE_TTL_MS - 1;
    expect(codes.redeem(b.code)).toBe(1002);
    expect(codes.redeem(b.code)).toBeUndefined();
    now += 1;
    // At exactly 60 s the code is dead, and stays dead.
    expect(codes.redeem(a.code)).toBeUndefined();
    now -= 10;
    expect(codes.redeem(a.code)).toBeUndefined();
  });

  it("refuses what is not a code it issued", () => {
    const codes = loginCodes(() => 0);
    codes.issue(1);
    expect(codes.redeem("")).toBeUndefined();
    expect(codes.redeem("x".repeat(100))).toBeUndefined();
    expect(codes.redeem(42 as unknown as string)).toBeUndefined();
  });

  it("keeps at most 1000 waiting codes, forgetting the oldest", () => {
    const codes = loginCodes(() => 0);
    const first = codes.issue(7).code;
    for (let n = 0; n < 1000; n++) codes.issue(8);
    expect(codes.redeem(first)).toBeUndefined();
    expect(codes.redeem(codes.issue(9).code)).toBe(9);
  });
});

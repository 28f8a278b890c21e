import { describe, expect, it } from "vitest";
import { runSteps, type Step } from "../../src/manager/base/steps.js";

/** Steps that log their index and return what `plan[i]` says. */
function planned(plan: Array<() => Step<string>>) {
  const ran: number[] = [];
  const step = (_: unknown, i: number) => {
    ran.push(i);
    return plan[i]!();
  };
  return { ran, run: (from = 0) => runSteps(undefined, plan.length, step, from) };
}

describe("runSteps", () => {
  it("stays synchronous while every step is, and stops at the first value", () => {
    const s = planned([() => undefined, () => "stop", () => "never"]);
    expect(s.run()).toBe("stop");
    expect(s.ran).toEqual([0, 1]);
  });

  it("runs every step and returns undefined when none stops", () => {
    const s = planned([() => undefined, () => undefined]);
    expect(s.run()).toBeUndefined();
    expect(s.ran).toEqual([0, 1]);
  });

  it("continues after a step's Promise settles, in order", async () => {
    let release!: () => void;
    const s = planned([() => new Promise<undefined>((r) => (release = () => r(undefined))), () => undefined, () => "last"]);
    const r = s.run();
    expect(r).toBeInstanceOf(Promise);
    expect(s.ran).toEqual([0]);
    release();
    expect(await r).toBe("last");
    expect(s.ran).toEqual([0, 1, 2]);
  });

  it("stops with an async step's value; a rejection runs no further step", async () => {
    const s = planned([() => Promise.resolve("async stop"), () => "never"]);
    expect(await s.run()).toBe("async stop");
    expect(s.ran).toEqual([0]);
    const f = planned([() => Promise.reject(new Error("boom")), () => "never"]);
    await expect(f.run()).rejects.toThrow("boom");
    expect(f.ran).toEqual([0]);
  });
});

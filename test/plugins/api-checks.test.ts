/** Context calls refused by phase and state with coded errors, against the real manager. */
import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../closing.js";
import { createTestHost, type PluginContext, type TestHost } from "jobtap/plugin";
import { fixture } from "./helpers.js";

let t: TestHost | undefined;
closeAfterEach(() => t);

describe("plugin context checks (spec §5)", () => {
  it("refuses calls in the wrong state at once, with their codes", async () => {
    const codes: string[] = [];
    const box: { p?: PluginContext } = {};
    t = await createTestHost({ plugin: fixture("api-checks.ts"), conf: { codes, box } });
    const id = await t.submit({ runDuration: 5 });
    await t.advance(100);
    expect(t.job(id).state).toBe("RUN");
    expect(codes).toEqual([
      "depend jobspecUpdate bad key: INVALID_ARGUMENT",
      "depend jobspecUpdate empty: INVALID_ARGUMENT",
      "depend jobResult: BAD_STATE",
      "run jobspecUpdate: BAD_STATE",
      "run dependencyAdd: BAD_STATE",
      "run epilogStart: BAD_STATE",
      "run setFlag waitable: INVALID_ARGUMENT",
      "run eventPosted alloc: ok",
      "run raiseException sev 5: ok",
    ]);
    // Nothing was staged by the refused updates.
    expect(t.events(id)).not.toContain("jobspec-update");
    expect(t.eventlog(id).find((e) => e.name === "exception")?.context).toEqual({ type: "warn", severity: 5, note: "noted", userid: t.manager.owner });

    const info = await t.runToCompletion(id);
    expect(info.result).toBe("COMPLETED");
    const p = box.p!;
    expect(p.jobResult(id)).toBe("COMPLETED");
    expect(() => p.raiseException(id, "late", 0, "too late")).toThrow(expect.objectContaining({ code: "JOB_INACTIVE" }));
    expect(() => p.postEvent(id, "memo", { a: 1 })).toThrow(expect.objectContaining({ code: "JOB_INACTIVE" }));
    expect(() => p.setFlag((id + 99n) as typeof id, "debug")).toThrow(expect.objectContaining({ code: "UNKNOWN_JOB" }));
  });
});

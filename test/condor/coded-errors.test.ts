import { describe, expect, it } from "vitest";
import { readCronConfig } from "../../plugins-builtin/condor-cron/config.js";
import { parseCronEnv } from "../../plugins-builtin/condor-cron/table.js";
import { readFetchConfig } from "../../plugins-builtin/condor-fetch/config.js";
import { readRouterPluginConfig } from "../../plugins-builtin/condor-router/config.js";
import { ErrorCode, isJobtapError } from "../../src/errors.js";

/** The code and message `fn` throws with. */
function thrown(fn: () => unknown): { code: unknown; message: string } {
  try {
    fn();
  } catch (e) {
    return { code: isJobtapError(e) ? e.code : undefined, message: (e as Error).message };
  }
  throw new Error("did not throw");
}

describe("condor builtins: bad configuration is a coded CONFIG error naming where", () => {
  it("condor-cron: an unknown conf key and a bad job table", () => {
    expect(thrown(() => readCronConfig({ colour: 1 }))).toEqual({ code: ErrorCode.CONFIG, message: expect.stringMatching(/^conf\.colour: unknown key/) });
    expect(thrown(() => readCronConfig({ startd: { jobs: 3 } }))).toEqual({ code: ErrorCode.CONFIG, message: "conf.startd.jobs: must be a table of jobs" });
    expect(thrown(() => parseCronEnv("A=1;B"))).toEqual({ code: ErrorCode.CONFIG, message: '"B" is not NAME=value' });
  });

  it("condor-fetch: a slot that is not a SlotID", () => {
    expect(thrown(() => readFetchConfig({ slots: { x: "K" } }, [1]))).toEqual({
      code: ErrorCode.CONFIG,
      message: "conf.slots.x: a slot is named by its SlotID (1, 2, ...)",
    });
  });

  it("condor-router: a relative hook path", () => {
    expect(thrown(() => readRouterPluginConfig({ condor_config_text: "", hooks: { R_HOOK_TRANSLATE_JOB: "x" } }))).toEqual({
      code: ErrorCode.CONFIG,
      message: "conf.hooks.R_HOOK_TRANSLATE_JOB: must be an absolute path",
    });
  });
});

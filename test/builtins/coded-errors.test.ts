/**
 * Coded errors from plugins (issue 33): jobtap/plugin exports ErrorCode, JobtapError and
 * isJobtapError; a plugin's coded error keeps its code through a service call, and the
 * builtins throw coded errors, so a caller branches on `code` (a plain Error would be
 * PLUGIN_CALL).
 */
import { afterEach, describe, expect, it } from "vitest";
import { formatJobId } from "../../src/manager/base/ids.js";
import { ErrorCode, JobtapError, createTestHost, isJobtapError } from "../../src/plugin.js";
import { host, type TestHost } from "./helpers.js";

let h: TestHost;
afterEach(async () => {
  await h?.close();
});

/** The code a rejected call failed with. */
async function codeOf(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => "resolved",
    (e: unknown) => (isJobtapError(e) ? e.code : "no code"),
  );
}

describe("coded errors for plugins", () => {
  it("jobtap/plugin's JobtapError keeps its code through a service", async () => {
    h = await createTestHost({
      plugin: (p) => p.serviceRegister("fail", () => {
        throw new JobtapError(ErrorCode.LIMIT_EXCEEDED, "too many");
      }),
      builtins: false,
    });
    const owner = { userid: h.manager.owner, owner: true };
    expect(await codeOf(h.plugins.callService("test-plugin", "fail", {}, owner))).toBe(ErrorCode.LIMIT_EXCEEDED);
  });

  it("the builtins' services fail with codes: .post-event, .history", async () => {
    h = await host();
    const id = await h.submit({ urgency: 0 });
    const owner = { userid: h.manager.owner, owner: true };
    const post = (body: unknown) => codeOf(h.plugins.callService("post-event", "post", body, owner));
    expect(await post("x")).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(await post({ id: [], name: "note" })).toBe(ErrorCode.BAD_JOBID);
    expect(await post({ id: "1234", name: "note" })).toBe(ErrorCode.UNKNOWN_JOB);
    expect(await post({ id: formatJobId(id), name: "a b" })).toBe(ErrorCode.INVALID_ARGUMENT);
    h.manager.cancel(id);
    await h.runToCompletion(id);
    expect(await post({ id: formatJobId(id), name: "note" })).toBe(ErrorCode.JOB_INACTIVE);
    expect(await codeOf(h.plugins.callService("history", "get", { slice: "[a]" }, owner))).toBe(ErrorCode.INVALID_ARGUMENT);
  });
});

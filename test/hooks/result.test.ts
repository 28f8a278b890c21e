import { describe, expect, it } from "vitest";
import { describeHookResult, hookSucceeded, type HookRan, type HookResult } from "../../src/hooks/index.js";

const ran = (over: Partial<HookRan>): HookRan => ({
  kind: "exited",
  name: "h",
  path: "/h",
  exitCode: 0,
  signal: null,
  timedOut: false,
  aborted: false,
  stdout: "",
  stderr: "",
  stdoutDropped: 0,
  stderrDropped: 0,
  truncated: false,
  pid: 1,
  startedAt: 0,
  durationMs: 0,
  ...over,
});

describe("hook results", () => {
  it("only a clean exit 0 succeeds", () => {
    const cases: [HookResult, boolean][] = [
      [ran({}), true],
      [ran({ exitCode: 1 }), false],
      [ran({ timedOut: true }), false],
      [ran({ aborted: true }), false],
      [ran({ kind: "signaled", exitCode: null, signal: "SIGKILL" }), false],
      [{ kind: "refused", name: "h", path: "/h", reason: "x" }, false],
      [{ kind: "spawn-error", name: "h", path: "/h", code: "ENOENT", reason: "x" }, false],
      [{ kind: "cancelled", name: "h", path: "/h", reason: "x" }, false],
    ];
    expect(cases.map(([r]) => hookSucceeded(r))).toEqual(cases.map(([, ok]) => ok));
  });

  it("describes each ending in one line", () => {
    expect(describeHookResult(ran({ exitCode: 3 }))).toBe("exited with status 3");
    expect(describeHookResult(ran({ exitCode: 0, timedOut: true }))).toBe("exited with status 0 after its time limit");
    expect(describeHookResult(ran({ kind: "signaled", exitCode: null, signal: "SIGTERM", timedOut: true }))).toBe("killed by SIGTERM at its time limit");
    expect(describeHookResult(ran({ kind: "signaled", exitCode: null, signal: "SIGTERM", aborted: true }))).toBe("killed by SIGTERM on abort");
    expect(describeHookResult({ kind: "refused", name: "h", path: "/h", reason: "not executable (mode 0644)" })).toBe("refused: not executable (mode 0644)");
    expect(describeHookResult({ kind: "spawn-error", name: "h", path: "/h", code: "ENOENT", reason: "spawn /h ENOENT" })).toBe("could not be started: spawn /h ENOENT");
  });
});

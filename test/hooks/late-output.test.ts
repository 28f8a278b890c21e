/**
 * A hook's output already waiting in its pipe when the grace after its exit ends must be
 * read, not dropped. A stalled event loop (a loaded machine) runs its due timers before it
 * reads its pipes, so the grace's timer could end the run with the output unread: a
 * FETCH_WORK's job ad then read as "no work" and its job was lost in the work source's
 * `taken/` (examples/fetch-work). The stall is made here by holding the event loop while
 * the output arrives, then moving the simulated clock past the grace at once.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HookRunner, type HookRan } from "../../src/hooks/index.js";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { alive, hookDir, hookScript, pidFrom, until } from "./helpers.js";

describe.each([
  ["spawned directly", 0],
  ["spawned by a helper process", 1],
])("hook output after a stall, %s", (_mode, spawnHelpers) => {
  let dir: string;
  let cleanup: () => void;
  let runner: HookRunner | undefined;
  beforeEach(() => ({ dir, cleanup } = hookDir()));
  afterEach(async () => {
    await runner?.close();
    cleanup();
  });

  it("output written before the grace after exit ends is kept", async () => {
    // The leader exits at once; a process outside its group (setsid) writes the output when
    // told, so it arrives after the exit was seen, as a slow reader sees a quick hook's.
    const hook = hookScript(
      dir,
      "late",
      `setsid sh -c 'echo $$ > "${dir}/writer"; while [ ! -e "${dir}/go" ]; do sleep 0.01; done; echo "A = 1"' < /dev/null &\nwhile [ ! -s "${dir}/writer" ]; do sleep 0.01; done\nexit 0`,
    );
    const clock = new SimulatedClock();
    runner = new HookRunner({ clock, spawnHelpers });
    const result = runner.run({ path: hook, killGraceMs: 1000 });
    const writer = await pidFrom(join(dir, "writer"));
    // The exit was seen: the grace's timer is armed.
    await until(() => clock.pending() === 1, "the exit seen");
    writeFileSync(join(dir, "go"), "");
    // Hold the event loop until the output is written and the pipe closed (the stall).
    const end = Date.now() + 10_000;
    while (alive(writer) && Date.now() < end) void existsSync(dir);
    expect(alive(writer)).toBe(false);
    await clock.advance(1000);
    const r = (await result) as HookRan;
    expect(r.kind).toBe("exited");
    expect(r.stdout).toBe("A = 1\n");
  });
});

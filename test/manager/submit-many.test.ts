import { describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/clock.js";
import { createJobManager } from "../../src/manager/manager.js";
import { jobspec, tempDir } from "./helpers.js";

describe("submitMany with one shared jobspec object (the daemon's --cc)", () => {
  it("every job is stored with that jobspec, and an updated job keeps its own", async () => {
    const t = tempDir();
    try {
      const open = (now: number) =>
        createJobManager({ statedir: t.dir, store: "sqlite", clock: new SimulatedClock(now), resources: { cores: 1 }, log: () => undefined });
      const m = await open(Date.now());
      const shared = jobspec(["true"], { exec: { test: { run_duration: 3600 } }, job: { name: "cc" } });
      const p = m.submitMany(Array.from({ length: 3 }, () => ({ jobspec: shared, opts: { urgency: 0 } })));
      await m.clock.advance(20);
      const ids = (await p).map((o) => ("id" in o ? o.id : undefined)!);
      const other = await (async () => {
        const q = m.submitMany([{ jobspec: jobspec(["false"], { exec: { test: {} } }) }]);
        await m.clock.advance(20);
        return (await q)[0]!;
      })();
      await m.close();
      const again = await open(Date.now() + 10_000);
      for (const id of ids) expect(again.jobspec(id)).toEqual(shared);
      expect("id" in other && again.jobspec(other.id).tasks).toEqual([{ command: ["false"], slot: "task", count: { per_slot: 1 } }]);
      await again.close();
    } finally {
      t.cleanup();
    }
  });
});

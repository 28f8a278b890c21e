/** Restart step 1 of spec §2.7: dependency callbacks re-run for NEW/DEPEND jobs. */
import { describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { fakePort } from "./fake-port.js";
import { jobspec, names, simManager, submitNow, tempDir } from "./helpers.js";

/** A plugin that handles scheme "after" by adding the dependency "after:<value>". */
const afterScheme = fakePort({
  "job.dependency.after": (a, mgr) => {
    mgr.dependencyAdd(a.id, `after:${String(a.dependency?.value)}`);
  },
});

const depJob = () => jobspec(["true"], { exec: { test: {} }, dependencies: [{ scheme: "after", value: "x" }] });

describe("restart re-runs dependency callbacks", () => {
  it("a handled scheme is called again; the outstanding dependency-add is not duplicated", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const a = await simManager({ statedir: dir, store: "sqlite", plugins: afterScheme });
      const id = await submitNow(a, depJob());
      await a.clock.advance(50);
      expect(a.mgr.job(id).state).toBe("DEPEND");
      await a.mgr.close();

      const b = await simManager({ statedir: dir, store: "sqlite", clock: new SimulatedClock(a.clock.now()), plugins: afterScheme });
      const port = (b.mgr as unknown as { engine: { port: { calls: Array<{ topic: string }> } } }).engine.port;
      expect(port.calls.map((c) => c.topic)).toEqual(["job.dependency.after"]);
      expect(b.mgr.job(id).state).toBe("DEPEND");
      expect(names(b, id).filter((n) => n === "dependency-add")).toHaveLength(1);
      expect(names(b, id)).not.toContain("exception");
      await b.mgr.close();
    } finally {
      cleanup();
    }
  });

  it("an unhandled scheme gives a severity-4 dependency exception, not a rejection", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const a = await simManager({ statedir: dir, store: "sqlite", plugins: afterScheme });
      const id = await submitNow(a, depJob());
      await a.clock.advance(50);
      await a.mgr.close();

      const b = await simManager({ statedir: dir, store: "sqlite", clock: new SimulatedClock(a.clock.now()) });
      const exc = b.mgr.eventlog(id).filter((e) => e.name === "exception");
      expect(exc.map((e) => e.context)).toEqual([
        { type: "dependency", severity: 4, note: 'dependency scheme "after" not supported (job may be stuck in DEPEND state)' },
      ]);
      expect(b.mgr.job(id).state).toBe("DEPEND");
      await b.mgr.close();
    } finally {
      cleanup();
    }
  });

  it("a dependency that can no longer be met at restart ends the job with a fatal dependency exception", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const a = await simManager({ statedir: dir, store: "sqlite", plugins: afterScheme });
      const id = await submitNow(a, depJob());
      await a.clock.advance(50);
      expect(a.mgr.job(id).state).toBe("DEPEND");
      await a.mgr.close();

      // While the manager was down the antecedent failed: the scheme now refuses.
      const refuses = fakePort({ "job.dependency.after": () => ({ error: "after", out: { errmsg: "after: job x failed or was canceled" } }) });
      const b = await simManager({ statedir: dir, store: "sqlite", clock: new SimulatedClock(a.clock.now()), plugins: refuses });
      for (let i = 0; i < 20 && b.mgr.job(id).state !== "INACTIVE"; i++) await b.clock.advance(10);
      expect(b.mgr.eventlog(id).filter((e) => e.name === "exception").map((e) => e.context)).toEqual([
        { type: "dependency", severity: 0, note: "dependency after: job x failed or was canceled" },
      ]);
      expect(b.mgr.job(id).state).toBe("INACTIVE");
      await b.mgr.close();
    } finally {
      cleanup();
    }
  });
});

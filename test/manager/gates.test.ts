import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/manager/store/memory.js";
import type { StoreBatch } from "../../src/manager/store/types.js";
import { fakePort, type FakePort } from "./fake-port.js";
import { names, simManager, submitNow, testJob } from "./helpers.js";

describe("prolog and epilog gates", () => {
  it("a prolog holds start until it finishes; an epilog holds free", async () => {
    let port!: FakePort;
    const s = await simManager({
      plugins: (m) =>
        (port = fakePort({
          "job.state.run": (a, mm) => mm.prologStart(a.id, "setup"),
          "job.state.cleanup": (a, mm) => mm.epilogStart(a.id, "teardown"),
        })(m)),
    });
    const id = await submitNow(s, testJob("1s"));
    await s.clock.advance(5000);
    expect(s.mgr.job(id).state).toBe("RUN");
    expect(names(s, id)).not.toContain("start");
    expect(() => port.mgr!.epilogStart(id, "too-early")).toThrow(/only allowed in CLEANUP/);
    port.mgr!.prologFinish(id, "setup", 0);
    expect(names(s, id).slice(-2)).toEqual(["prolog-finish", "start"]);
    await s.clock.advance(1000);
    expect(s.mgr.job(id).state).toBe("CLEANUP");
    expect(names(s, id)).not.toContain("free");
    expect(() => port.mgr!.prologStart(id, "late")).toThrow(/prolog-start/);
    port.mgr!.epilogFinish(id, "teardown", 0);
    await s.clock.advance(10);
    expect(names(s, id).slice(-6)).toEqual(["finish", "epilog-start", "release", "epilog-finish", "free", "clean"]);
  });
});

class FailingStore extends MemoryStore {
  failing = false;
  override commit(batch: StoreBatch): void {
    if (this.failing) throw Object.assign(new Error("disk full"), { code: "STORE_WRITE" });
    super.commit(batch);
  }
}

describe("store failures", () => {
  it("a failed batch write is fatal: pending and later submissions are refused", async () => {
    const store = new FailingStore();
    const s = await simManager({ store });
    await submitNow(s, testJob("1h"));
    store.failing = true;
    const pending = s.mgr.submit(testJob(0));
    pending.catch(() => undefined);
    await s.clock.advance(10);
    await expect(pending).rejects.toMatchObject({ code: "STORE_WRITE" });
    await expect(s.mgr.submit(testJob(0))).rejects.toMatchObject({ code: "STORE_WRITE" });
    expect(s.logs.some((l) => l.includes("job store commit failed"))).toBe(true);
  });
});

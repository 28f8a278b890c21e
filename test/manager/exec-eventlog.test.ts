/**
 * The exec eventlog (issue 32): executor state (`exec-state`) is kept per job apart from the
 * main eventlog, as Flux keeps it. A `job.event.*` subscriber and the main eventlog never
 * see it; it is stored with the job's events (real SQLite, writer thread), read back after a
 * restart, and removed with the job when purged. Real processes, simulated clock.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { SqliteStore } from "../../src/manager/store/sqlite.js";
import { fakePort } from "./fake-port.js";
import { jobspec, simManager, submitNow, tempDir, type SimManager } from "./helpers.js";

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Waits (real time) for a job driven by real processes to become inactive. */
async function settle(s: SimManager, id: JobId) {
  for (let i = 0; i < 500 && s.mgr.job(id).state !== "INACTIVE"; i++) {
    await s.clock.advance(1);
    await new Promise((r) => setTimeout(r, 10));
  }
  return s.mgr.wait(id);
}

describe("exec eventlog", () => {
  it("exec-state reaches neither job.event.* subscribers nor the main eventlog; it survives a restart", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const clock = new SimulatedClock();
    const seen: string[] = [];
    const a = await simManager({
      statedir: dir,
      store: "sqlite",
      clock,
      plugins: fakePort({ "job.event.*": (x) => void seen.push(x.entry?.name ?? "?") }),
    });
    const id = await submitNow(a, jobspec(["true"]));
    expect((await settle(a, id)).result).toBe("COMPLETED");
    expect(seen).toContain("start");
    expect(seen).not.toContain("exec-state");
    expect(a.mgr.eventlog(id).map((e) => e.name)).not.toContain("exec-state");
    const saved = a.mgr.execEventlog(id).find((e) => e.name === "exec-state");
    expect(saved?.context).toMatchObject({ tasks: [{ rank: 0, pid: expect.any(Number) }] });
    // Output is still found through the saved record.
    expect(a.mgr.output(id, "stdout", 0)).toMatchObject({ data: "", done: true });
    await a.mgr.close();

    const raw = new SqliteStore(join(dir, "jobtap.db"));
    const stored = raw.load(id)!;
    raw.close();
    expect(stored.eventlog).not.toContain("exec-state");
    expect(stored.exec).toContain("exec-state");

    const b = await simManager({ statedir: dir, store: "sqlite", clock });
    cleanups.push(() => b.mgr.close());
    expect(b.mgr.execEventlog(id).find((e) => e.name === "exec-state")).toEqual(saved);
    expect(b.mgr.eventlog(id).map((e) => e.name)).not.toContain("exec-state");
  });

  it("a purged job's exec eventlog leaves the store with it", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const a = await simManager({ statedir: dir, store: "sqlite" });
    const id = await submitNow(a, jobspec(["true"]));
    await settle(a, id);
    const rows = () => {
      const db = new Database(join(dir, "jobtap.db"), { readonly: true });
      try {
        return (db.prepare("SELECT count(*) AS n FROM exec_eventlog").get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    a.mgr.flush();
    await a.mgr.close();
    expect(rows()).toBe(1);
    const b = await simManager({ statedir: dir, store: "sqlite" });
    expect(b.mgr.purge(id)).toBe(true);
    b.mgr.flush();
    await b.mgr.close();
    expect(rows()).toBe(0);
  });
});

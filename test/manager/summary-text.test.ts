/**
 * A retiring job's summary is stored as text written directly (summaryText), not through
 * JSON.stringify of a summary object: the stored row must be exactly the text the summary
 * object gives, for jobs of every odd kind (exceptions, memos, live plugin annotations,
 * outstanding dependencies, flags, unicode names, failed finishes).
 */
import Database from "better-sqlite3";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import { newActiveJob, type ActiveJob } from "../../src/manager/engine/job.js";
import { inactiveRecordOf, parseSummary, summaryOf, summaryText } from "../../src/manager/engine/summary.js";
import { newJobCore } from "../../src/manager/core/transition.js";
import { fakePort } from "./fake-port.js";
import { jobspec, simManager, submitNow, tempDir, testJob } from "./helpers.js";

type Engine = { active: Map<JobId, ActiveJob> };

const storedSummaries = (dir: string): Map<string, string> => {
  const db = new Database(join(dir, "jobtap.db"), { readonly: true });
  try {
    const rows = db.prepare("SELECT id, summary FROM inactive").all() as Array<{ id: bigint | number; summary: string }>;
    return new Map(rows.map((r) => [String(r.id), r.summary]));
  } finally {
    db.close();
  }
};

describe("summaryText", () => {
  it("stores, for odd jobs, exactly JSON.stringify of the summary object", async () => {
    const { dir, cleanup } = tempDir();
    const expected = new Map<string, string>();
    try {
      const engine = (): Engine => (s.mgr as unknown as { engine: Engine }).engine;
      const s = await simManager({
        statedir: dir,
        store: "sqlite",
        resources: { cores: 4 },
        plugins: fakePort({
          "job.dependency.after": (a, mgr) => void mgr.dependencyAdd(a.id, `after:${String(a.dependency?.value)}`),
          "job.state.run": () => ({ annotations: { sched: { note: "plugin-only ✓" } } }),
          // The old way of writing the text, on the job as it retires.
          "job.inactive-add": (a) => {
            const job = engine().active.get(a.id)!;
            expected.set(String(a.id), JSON.stringify(summaryOf(job)));
          },
        }),
      });
      const ids: JobId[] = [];
      const memo = await submitNow(s, testJob("5s"), { urgency: 20, flags: ["debug", "waitable"] });
      s.mgr.port.postEvent(memo, "memo", { tag: "kept", "ключ": "𝄞 \u2028 \"q\" \\" });
      s.mgr.port.postEvent(memo, "memo", { gone: 1 });
      s.mgr.port.postEvent(memo, "memo", { gone: null });
      s.mgr.port.postEvent(memo, "set-flags", { flags: ["debug", "immutable"] });
      ids.push(memo);
      ids.push(await submitNow(s, testJob(0, { wait_status: 256 })));
      ids.push(await submitNow(s, jobspec(["/usr/bin/ünïcødé-名前"], { exec: { test: { run_duration: "1h" } } })));
      ids.push(await submitNow(s, testJob("1h", {}, { job: { name: 'named "job"\n\ttab\u0001' } })));
      const dep = await submitNow(s, jobspec(["true"], { exec: { test: {} }, dependencies: [{ scheme: "after", value: "x" }] }));
      ids.push(dep);
      const held = await submitNow(s, testJob(0), { urgency: 0 });
      ids.push(held);
      await s.clock.advance(6000);
      s.mgr.cancel(ids[2]!);
      s.mgr.cancel(ids[3]!);
      s.mgr.raise(dep, { type: "odd-type", severity: 0, note: "note with \u0000 nul" });
      s.mgr.cancel(held);
      await s.clock.advance(1000);
      for (const id of ids) expect(s.mgr.job(id).state).toBe("INACTIVE");
      await s.mgr.close();

      const stored = storedSummaries(dir);
      expect(expected.size).toBe(ids.length);
      for (const id of ids) expect(stored.get(String(id))).toBe(expected.get(String(id)));
      // The odd parts really are there.
      const parsed = ids.map((id) => parseSummary(stored.get(String(id))!)!);
      expect(parsed[0]!.annotations).toEqual({ user: { tag: "kept", "ключ": "𝄞 \u2028 \"q\" \\" } });
      expect(parsed[0]!.flags).toEqual(["debug", "immutable"]);
      expect(parsed[1]!.waitStatus).toBe(256);
      expect(parsed[2]!.name).toBe("ünïcødé-名前");
      expect(parsed[3]!.name).toBe('named "job"\n\ttab\u0001');
      expect(parsed[4]!.dependencies).toEqual(["after:x"]);
      expect(parsed[4]!.end_event?.context).toMatchObject({ type: "odd-type", note: "note with \u0000 nul" });
    } finally {
      cleanup();
    }
  });

  it("writes numbers as JSON does (fractions, exponents, -0, non-finite as null)", () => {
    const job = newActiveJob(newJobCore(12345n as JobId, jobspec(["/bin/x"])));
    const c = job.core as unknown as Record<string, unknown>;
    for (const [t_submit, t_clean, priority] of [
      [1.5e-7, -0, -1],
      [1e21, 123456789.123456, 4294967295],
      [NaN, Infinity, -Infinity],
    ]) {
      Object.assign(c, { t_submit, t_clean, priority });
      expect(summaryText(job, inactiveRecordOf(job))).toBe(JSON.stringify(summaryOf(job)));
    }
  });
});

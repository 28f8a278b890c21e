/**
 * What a restored waiting job keeps in memory (issue 41). Its jobspec, read back at
 * restart, is frozen in place (plugins get it, not a second copy, and a write to it
 * throws), and jobs stored with the same jobspec text share one object, as jobs submitted
 * with one jobspec did; an update to one job's jobspec leaves the others as they were. Its
 * eventlog stays in the store until something reads it: entries appended meanwhile follow
 * the stored ones, in order, through later restarts.
 */
import { describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { createJobManager, JobManager } from "../../src/manager/manager.js";
import type { Jobspec } from "../../src/manager/port/records.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import type { PluginContext } from "../../src/plugin.js";
import { tempDir, testJob } from "./helpers.js";
import { EVENTLOGS_KEPT } from "../../src/manager/stored-job.js";
import { WAITING_ADS_KEPT } from "../../src/manager/jobads.js";

/** What the watcher plugin saw of each job at job.new (the restart's replay). */
interface Seen {
  jobspec: Jobspec;
  wrote: unknown;
}

async function open(statedir: string, clock: SimulatedClock, seen?: Map<JobId, Seen>): Promise<JobManager> {
  const factory = jobtapPlugins({ config: {}, pluginPath: [], clock, log: () => undefined });
  return createJobManager({
    statedir,
    store: "sqlite",
    clock,
    resources: { cores: 4 },
    log: () => undefined,
    plugins: async (mgr) => {
      const host = await factory(mgr);
      if (seen !== undefined) {
        await host.loadDefinition("watcher", (p: PluginContext) =>
          p.on("job.new", (args) => {
            let wrote: unknown;
            try {
              (args.jobspec.attributes.system as Record<string, unknown>).duration = 999;
            } catch (e) {
              wrote = e;
            }
            seen.set(args.id, { jobspec: args.jobspec, wrote });
          }),
        );
      }
      return host;
    },
  });
}

async function submitHeld(mgr: JobManager, clock: SimulatedClock, spec: Jobspec): Promise<JobId> {
  const p = mgr.submit(spec, { urgency: 0 });
  let done = false;
  void p.finally(() => (done = true));
  for (let i = 0; i < 100 && !done; i++) await clock.advance(10);
  return p;
}

/** `n` held jobs submitted in one batch, then the manager reopened: their ids in id order. */
async function restoredHeld(dir: string, clock: SimulatedClock, n: number): Promise<{ ids: JobId[]; mgr: JobManager }> {
  const first = await open(dir, clock);
  const submitted = first.submitMany(Array.from({ length: n }, () => ({ jobspec: testJob(), opts: { urgency: 0 } })));
  let done = false;
  void submitted.finally(() => (done = true));
  for (let i = 0; i < 100 && !done; i++) await clock.advance(10);
  const ids = (await submitted).map((o) => ("id" in o ? o.id : undefined)).filter((id) => id !== undefined).sort((x, y) => (x! < y! ? -1 : 1)) as JobId[];
  expect(ids).toHaveLength(n);
  await first.close();
  return { ids, mgr: await open(dir, clock) };
}

describe("a restored waiting job", () => {
  it("are frozen in place, shared between jobs of one jobspec text, and updated one job at a time", async () => {
    const { dir, cleanup } = tempDir();
    const clock = new SimulatedClock();
    try {
      const first = await open(dir, clock);
      const a = await submitHeld(first, clock, testJob(0, {}, { duration: 60 }));
      const b = await submitHeld(first, clock, testJob(0, {}, { duration: 60 }));
      const c = await submitHeld(first, clock, testJob(0, {}, { duration: 30 }));
      await first.close();

      const seen = new Map<JobId, Seen>();
      const mgr = await open(dir, clock, seen);
      try {
        expect([...seen.keys()].sort()).toEqual([a, b, c].sort());
        for (const s of seen.values()) expect(s.wrote).toBeInstanceOf(TypeError);
        expect(seen.get(a)!.jobspec).toBe(seen.get(b)!.jobspec);
        expect(seen.get(a)!.jobspec).not.toBe(seen.get(c)!.jobspec);
        expect([a, b, c].map((id) => mgr.jobspec(id).attributes.system?.duration)).toEqual([60, 60, 30]);

        await mgr.update(a, { "attributes.system.duration": 120 });
        expect([a, b, c].map((id) => mgr.jobspec(id).attributes.system?.duration)).toEqual([120, 60, 30]);
      } finally {
        await mgr.close();
      }
      // The update is stored; the job that shared the old jobspec still has it.
      const again = await open(dir, clock);
      try {
        expect([a, b, c].map((id) => again.jobspec(id).attributes.system?.duration)).toEqual([120, 60, 30]);
      } finally {
        await again.close();
      }
    } finally {
      cleanup();
    }
  });

  it("lets go of the restart's own entries a thousand jobs at a time, as their batches land", async () => {
    const { dir, cleanup } = tempDir();
    const clock = new SimulatedClock();
    const N = 2600;
    // The entries a dropped job holds in memory (appended since it was dropped).
    const tail = (m: JobManager, id: JobId) => (JobManager.internals(m).engine.active.get(id) as unknown as { tail?: unknown[] }).tail?.length ?? 0;
    try {
      const { ids, mgr } = await restoredHeld(dir, clock, N);
      try {
        // Before the background settle: the restart committed a batch per 1,024 jobs and let
        // go of each batch's entries once the next one was handed over and it had landed.
        const tails = ids.map((id) => tail(mgr, id));
        expect(tails.slice(0, 1024).every((n) => n === 0)).toBe(true);
        expect(tails.slice(2048).every((n) => n > 0)).toBe(true);
        await clock.advance(100);
        expect(ids.map((id) => tail(mgr, id)).every((n) => n === 0)).toBe(true);
        for (const id of [ids[0]!, ids[1500]!, ids[N - 1]!]) {
          const names = mgr.eventlog(id).map((e) => e.name);
          expect(names.filter((n) => n === "flux-restart")).toHaveLength(1);
          expect(names.indexOf("flux-restart")).toBeGreaterThan(names.indexOf("submit"));
        }
      } finally {
        await mgr.close();
      }
    } finally {
      cleanup();
    }
  }, 60_000);

  it("keeps in memory only the last few eventlogs and ads a reader made it build", async () => {
    const { dir, cleanup } = tempDir();
    const clock = new SimulatedClock();
    const N = Math.max(EVENTLOGS_KEPT, WAITING_ADS_KEPT) + 300;
    const record = (m: JobManager, id: JobId) => JobManager.internals(m).engine.active.get(id) as unknown as { dropped: boolean; adCache?: unknown };
    try {
      const { ids, mgr } = await restoredHeld(dir, clock, N);
      try {
        await clock.advance(100);
        const firstLook = new Map<JobId, string[]>();
        for (const id of ids) {
          expect(mgr.jobAd(id).evaluate("JobStatus")).toBe(5n); // held (urgency 0)
          firstLook.set(id, mgr.eventlog(id).map((e) => e.name));
        }
        const early = ids.slice(0, 200);
        const late = ids.slice(N - Math.min(EVENTLOGS_KEPT, WAITING_ADS_KEPT));
        expect(early.every((id) => record(mgr, id).dropped)).toBe(true);
        expect(early.every((id) => record(mgr, id).adCache === undefined)).toBe(true);
        expect(late.every((id) => !record(mgr, id).dropped)).toBe(true);
        expect(late.every((id) => record(mgr, id).adCache !== undefined)).toBe(true);
        // Read again, a dropped job gives the same eventlog and ad; appends still follow.
        const again = early[0]!;
        expect(mgr.eventlog(again).map((e) => e.name)).toEqual(firstLook.get(again));
        expect(mgr.jobAd(again).evaluate("JobStatus")).toBe(5n);
        mgr.setUrgency(again, 20);
        await clock.advance(100);
        expect(mgr.job(again).urgency).toBe(20);
        expect(mgr.eventlog(again).map((e) => e.name)).toContain("urgency");
        // A job with text not yet written keeps its entries, however many jobs are read
        // after it; once its batch has landed, the next reads let them go.
        const pending = early[1]!;
        mgr.eventlog(pending);
        mgr.port.postEvent(pending, "memo", { note: "unwritten" });
        const others = late.concat(early.slice(2, 2 + EVENTLOGS_KEPT));
        for (const id of others) mgr.eventlog(id);
        expect(record(mgr, pending).dropped).toBe(false);
        await clock.advance(100);
        for (const id of early.slice(2 + EVENTLOGS_KEPT, 2 + 2 * EVENTLOGS_KEPT + 1)) mgr.eventlog(id);
        expect(record(mgr, pending).dropped).toBe(true);
        const names = mgr.eventlog(pending).map((e) => e.name);
        expect(names.slice(0, -1)).toEqual(firstLook.get(pending));
        expect(names.at(-1)).toBe("memo");
      } finally {
        await mgr.close();
      }
    } finally {
      cleanup();
    }
  }, 120_000);

  it("keeps a waiting job's eventlog in the store until read; appends follow it in order", async () => {
    const { dir, cleanup } = tempDir();
    const clock = new SimulatedClock();
    const dropped = (m: JobManager, id: JobId) => (JobManager.internals(m).engine.active.get(id) as unknown as { dropped: boolean }).dropped;
    try {
      const first = await open(dir, clock);
      const a = await submitHeld(first, clock, testJob());
      const b = await submitHeld(first, clock, testJob());
      const c = await submitHeld(first, clock, testJob());
      const before = first.eventlog(a).map((e) => e.name);
      await first.close();

      const mgr = await open(dir, clock);
      let afterA: string[];
      try {
        await clock.advance(100); // the restart's own events are written; they count as stored
        expect([dropped(mgr, a), dropped(mgr, b)]).toEqual([true, true]);
        // Listing and urgency do not read it back; the urgency event is appended after it.
        expect(mgr.jobs({ states: ["SCHED", "PRIORITY"] }).map((j) => j.id).sort()).toEqual([a, b, c].sort());
        mgr.setUrgency(a, 20);
        expect(dropped(mgr, a)).toBe(true);
        afterA = mgr.eventlog(a).map((e) => e.name);
        expect(dropped(mgr, a)).toBe(false);
        expect(afterA.slice(0, before.length)).toEqual(before);
        expect(afterA[afterA.length - 1]).toBe("priority");
        expect(afterA).toContain("urgency");
        expect(afterA.indexOf("urgency")).toBeGreaterThan(afterA.indexOf("flux-restart"));
        expect(mgr.job(a).urgency).toBe(20);
        mgr.setUrgency(b, 0); // appended to b's dropped eventlog, never read back before close
        // c's update is written before c is read back: the store then holds it too, and it
        // is read once.
        await mgr.update(c, { "attributes.system.duration": 90 });
        await clock.advance(100);
        expect(dropped(mgr, c)).toBe(true);
        const logC = mgr.eventlog(c).map((e) => e.name);
        expect(logC.slice(0, before.length)).toEqual(before);
        expect(logC.filter((n) => n === "jobspec-update")).toHaveLength(1);
        expect(logC.indexOf("jobspec-update")).toBeGreaterThan(logC.indexOf("flux-restart"));
        expect(mgr.jobspec(c).attributes.system?.duration).toBe(90);
      } finally {
        await mgr.close();
      }
      const again = await open(dir, clock);
      try {
        const logA = again.eventlog(a).map((e) => e.name);
        expect(logA.slice(0, afterA.length)).toEqual(afterA);
        const logB = again.eventlog(b).map((e) => e.name);
        expect(logB.slice(0, before.length)).toEqual(before);
        expect(logB.filter((n) => n === "urgency")).toHaveLength(1);
        expect(logB.filter((n) => n === "flux-restart")).toHaveLength(2);
        expect(again.job(b).urgency).toBe(0);
      } finally {
        await again.close();
      }
    } finally {
      cleanup();
    }
  });
});

/**
 * Jobspecs read back at restart: each is frozen in place (plugins get it, not a second
 * copy, and a write to it throws), and jobs stored with the same jobspec text share one
 * object, as jobs submitted with one jobspec did before the restart; an update to one
 * job's jobspec leaves the others as they were.
 */
import { describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import type { Jobspec } from "../../src/manager/port/records.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import type { PluginContext } from "../../src/plugin.js";
import { tempDir, testJob } from "./helpers.js";

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

describe("jobspecs at restart", () => {
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
});

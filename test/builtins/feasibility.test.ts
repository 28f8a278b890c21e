/**
 * The feasibility check at submit (Flux: "unsatisfiable request"): a job the local pool
 * could never run is refused before it is acknowledged, while jobs that never ask the local
 * pool (Slurm jobs, alloc-bypass jobs: the flag is set at validate) are not checked.
 */
import { afterEach, describe, expect, it } from "vitest";
import allocBypass from "../../plugins-builtin/alloc-bypass/index.js";
import type { Jobspec } from "../../src/manager/port/records.js";
import { host, rejected, type TestHost } from "./helpers.js";

let h: TestHost;
afterEach(async () => {
  await h?.close();
});

/** A jobspec of one slot with the given cores, gpus and memory (bytes). */
function sized(res: { cores?: number; gpus?: number; memory?: number }, system: Record<string, unknown> = {}): Jobspec {
  const w: Array<Record<string, unknown>> = [{ type: "core", count: res.cores ?? 1 }];
  if (res.gpus) w.push({ type: "gpu", count: res.gpus });
  if (res.memory) w.push({ type: "memory", count: res.memory, unit: "B" });
  return {
    version: 1,
    resources: [{ type: "slot", count: 1, label: "task", with: w }],
    tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
    attributes: { system: { duration: 0, exec: { test: { run_duration: 1 } }, ...system } },
  } as Jobspec;
}

const refusal = async (spec: Jobspec): Promise<string> => {
  try {
    await h.manager.submit(spec);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("accepted");
};

describe("feasibility at submit", () => {
  it("refuses more cores, gpus or memory than the pool has, and accepts what fits", async () => {
    h = await host({}, { resources: { cores: 2, gpus: 1, memory: 1024 } });
    expect(await rejected(h, { cores: 100 })).toBe("unsatisfiable request: 100 cores requested, 2 available");
    expect(await refusal(sized({ gpus: 2 }))).toBe("unsatisfiable request: 2 gpus requested, 1 available");
    expect(await refusal(sized({ memory: 4096 }))).toBe("unsatisfiable request: 4096 bytes of memory requested, 1024 available");
    // Held or not, an impossible job is refused (Flux checks before the job is queued).
    expect(await rejected(h, { cores: 3, urgency: 0 })).toBe("unsatisfiable request: 3 cores requested, 2 available");
    expect(h.manager.jobs({})).toEqual([]);
    const ok = await h.submit({ cores: 2, runDuration: 1 });
    expect((await h.runToCompletion(ok)).result).toBe("COMPLETED");
  });

  it("refuses a job no slot is large enough for when the pool is carved into slots", async () => {
    h = await host({}, { resources: { cores: 4 }, slots: [{ count: 2, cores: 2 }] });
    expect(await rejected(h, { cores: 3 })).toMatch(/^unsatisfiable request: no slot is large enough \(3 cores/);
    expect(await rejected(h, { cores: 3, system: { slot: 1 } })).toBe("unsatisfiable request: 3 cores requested, slot 1 has 2");
  });

  it("does not check jobs that bypass the local pool (a Slurm job, an alloc-bypass job)", async () => {
    h = await host({}, { resources: { cores: 1 } });
    const slurm = await h.submit({ cores: 100, urgency: 0, system: { exec: { name: "slurm" } } });
    expect(h.events(slurm).slice(0, 3)).toEqual(["submit", "set-flags", "validate"]);
    await h.close();
    const R = { version: 1, execution: { R_lite: [{ rank: "0", children: { core: "0-63" } }], starttime: 0, expiration: 0 } };
    h = await host({}, { plugin: allocBypass, name: "alloc-bypass", owner: 0, resources: { cores: 1 } });
    const bypass = await h.submit({ userid: 0, cores: 64, runDuration: 1, system: { "alloc-bypass": { R } } });
    expect((await h.runToCompletion(bypass)).result).toBe("COMPLETED");
  });
});

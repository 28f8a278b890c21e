/** Shared helpers for the job manager tests: jobspecs, a simulated-clock manager, driving time. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { createJobManager, type JobManager, type JobManagerOptions } from "../../src/manager/manager.js";
import type { Jobspec } from "../../src/manager/port/records.js";

/** A Flux jobspec v1 for `command`, with optional system attributes. */
export function jobspec(
  command: string[] = ["true"],
  system: Record<string, unknown> = {},
  opts: { cores?: number; gpus?: number; nslots?: number } = {},
): Jobspec {
  const withList: Array<Record<string, unknown>> = [{ type: "core", count: opts.cores ?? 1 }];
  if (opts.gpus) withList.push({ type: "gpu", count: opts.gpus });
  return {
    version: 1,
    resources: [{ type: "slot", count: opts.nslots ?? 1, label: "task", with: withList }],
    tasks: [{ command, slot: "task", count: { per_slot: 1 } }],
    attributes: { system: { duration: 0, ...system } },
  };
}

/** A jobspec run by the test executor for `runDuration` (FSD). */
export function testJob(runDuration: string | number = 0, extra: Record<string, unknown> = {}, sys: Record<string, unknown> = {}): Jobspec {
  return jobspec(["true"], { exec: { test: { run_duration: runDuration, ...extra } }, ...sys });
}

export interface SimManager {
  mgr: JobManager;
  clock: SimulatedClock;
  logs: string[];
}

/** A manager on a memory store (unless told otherwise) with a simulated clock. */
export async function simManager(opts: JobManagerOptions = {}): Promise<SimManager> {
  const clock = (opts.clock as SimulatedClock | undefined) ?? new SimulatedClock();
  const logs: string[] = [];
  const mgr = await createJobManager({
    store: "memory",
    resources: { cores: 4, gpus: 0, memory: 1 << 30 },
    owner: 1000,
    log: (level, msg) => logs.push(`${level}: ${msg}`),
    ...opts,
    clock,
  });
  return { mgr, clock, logs };
}

/** Submits and drives the clock until the submission is acknowledged. */
export async function submitNow(s: SimManager, spec: Jobspec, opts?: Parameters<JobManager["submit"]>[1]) {
  const p = s.mgr.submit(spec, opts);
  let settled = false;
  p.then(() => (settled = true), () => (settled = true));
  for (let i = 0; i < 100 && !settled; i++) await s.clock.advance(10);
  return p;
}

/** Names of a job's eventlog entries. */
export function names(s: SimManager, id: Parameters<JobManager["eventlog"]>[0]): string[] {
  return s.mgr.eventlog(id).map((e) => e.name);
}

/** A temp dir removed by the returned cleanup. */
export function tempDir(prefix = "jobtap-mgr-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

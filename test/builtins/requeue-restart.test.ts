/**
 * Copies sent back to the queue across a restart: PREEMPT's eviction and a PeriodicHold of a
 * running job submit the copy first and post the fatal exception after it is durable. A
 * manager stopped between the two must not submit a second copy when it decides again after
 * its restart.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import { createJobManager, JobManager } from "../../src/manager/manager.js";
import { slotPolicies } from "../../src/manager/policy/slot-policy.js";
import { carveSlots } from "../../src/manager/scheduler/slots.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { testJobspec } from "../../src/testhost.js";

let dir: string;
const open: JobManager[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "jobtap-preempt-restart-"));
});
afterEach(async () => {
  for (const m of open.splice(0)) await m.close();
  rmSync(dir, { recursive: true, force: true });
});

/** PREEMPT true for a running job that is not itself a requeued copy: the original is evicted once. */
const PREEMPTING = { policy: { preempt: "TARGET.JobStatus == 2 && TARGET.RequeuedFromJobId =?= undefined" } };

async function start(clock: SimulatedClock, config: { policy?: Record<string, string> } = PREEMPTING): Promise<JobManager> {
  const factory = jobtapPlugins({ config, pluginPath: [], log: () => undefined });
  const resources = { cores: 1, gpus: 0, memory: 2 ** 30 };
  const slotPolicy = slotPolicies(carveSlots(resources, undefined), config.policy ?? {}, []);
  const m = await createJobManager({ statedir: dir, clock, config, resources, slotPolicy, log: () => undefined, plugins: factory });
  open.push(m);
  return m;
}

async function submit(m: JobManager, clock: SimulatedClock, classad?: Record<string, string>): Promise<JobId> {
  const p = m.submit(testJobspec({ runDuration: "1h", ...(classad ? { classad } : {}) }));
  let done = false;
  p.then(() => (done = true), () => (done = true));
  while (!done) await clock.advance(1);
  return p;
}

/**
 * The manager "dies" after a copy is durable and before the original's exception is
 * written: exceptions never reach its engine, and the test closes it once the copy is stored.
 */
function dropExceptions(m: JobManager): void {
  const engine = JobManager.internals(m).engine;
  const post = engine.post.bind(engine);
  engine.post = (job, name, context, origin) => {
    if (name !== "exception") post(job, name, context, origin);
  };
}

/** Advances until a copy of `id` is stored (past NEW: its batch is durable). */
async function storedCopy(m: JobManager, clock: SimulatedClock, id: JobId): Promise<JobId> {
  let copy: JobId | undefined;
  for (let i = 0; i < 10_000 && copy === undefined; i++) {
    await clock.advance(10);
    copy = copiesOf(m, id).find((c) => m.job(c).state !== "NEW");
  }
  expect(copy).toBeDefined();
  return copy as JobId;
}

/** Jobs whose ad says they were requeued from `id`. */
function copiesOf(m: JobManager, id: JobId): JobId[] {
  return m.jobs({}).filter((j) => m.jobAd(j.id).evaluate("RequeuedFromJobId") === formatJobId(id)).map((j) => j.id);
}

describe("requeued copies across a restart", () => {
  it("PREEMPT: a restart between the copy and the evict exception gives no second copy", async () => {
    const clock = new SimulatedClock();
    const first = await start(clock);
    dropExceptions(first);
    const id = await submit(first, clock);
    for (let i = 0; i < 100 && first.job(id).state !== "RUN"; i++) await clock.advance(10);
    // PREEMPT is evaluated at each scheduling pass: another job's arrival starts one.
    await submit(first, clock);
    const copy = await storedCopy(first, clock, id);
    expect(first.job(id).state).toBe("RUN");
    await first.close();
    open.splice(0);

    const m = await start(clock);
    for (let i = 0; i < 1000 && m.job(id).state !== "INACTIVE"; i++) await clock.advance(10);
    expect(m.job(id).state).toBe("INACTIVE");
    expect(copiesOf(m, id)).toEqual([copy]);
    const exc = m.eventlog(id).filter((e) => e.name === "exception").map((e) => e.context?.note);
    expect(exc).toEqual([expect.stringContaining(`(pending again as ${formatJobId(copy)})`)]);
    // The record that made the retry reuse it: a memo on the original, stored with the copy.
    expect(m.eventlog(id).filter((e) => e.name === "memo").map((e) => e.context)).toEqual([{ requeued_as: formatJobId(copy) }]);
  });

  it("nor between a PeriodicHold's held copy and the running job's hold exception", async () => {
    const clock = new SimulatedClock();
    const hold = { PeriodicHold: "JobStatus == 2 && RequeuedFromJobId =?= undefined", PeriodicHoldReason: '"ran too long"' };
    const first = await start(clock, {});
    dropExceptions(first);
    const id = await submit(first, clock, hold);
    const copy = await storedCopy(first, clock, id);
    expect(first.job(id).state).toBe("RUN");
    await first.close();
    open.splice(0);

    const m = await start(clock, {});
    for (let i = 0; i < 1000 && m.job(id).state !== "INACTIVE"; i++) await clock.advance(1000);
    expect(m.job(id).state).toBe("INACTIVE");
    expect(copiesOf(m, id)).toEqual([copy]);
    const exc = m.eventlog(id).filter((e) => e.name === "exception").map((e) => e.context?.note);
    expect(exc).toEqual([`ran too long (held again as ${formatJobId(copy)})`]);
  });
});

/**
 * .dependency-after across a crash (bench/crash.ts found a dependent that ran although its
 * afterok antecedent failed): a dependent acknowledged but not yet validated when the
 * manager died replays in NEW, and the antecedent's failure must still end it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import { SqliteStore } from "../../src/manager/store/sqlite.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { testJobspec, type TestJob } from "../../src/testhost.js";

let dir: string;
const open: JobManager[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "jobtap-dep-restart-"));
});
afterEach(async () => {
  for (const m of open.splice(0)) await m.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A manager on the SQLite store in `dir`, with every builtin, on a simulated clock. */
async function start(clock: SimulatedClock): Promise<JobManager> {
  const factory = jobtapPlugins({ config: {}, pluginPath: [], log: () => undefined });
  const m = await createJobManager({ statedir: dir, clock, config: {}, resources: { cores: 4 }, log: () => undefined, plugins: factory });
  open.push(m);
  return m;
}

async function submit(m: JobManager, clock: SimulatedClock, job: TestJob): Promise<JobId> {
  const p = m.submit(testJobspec(job), job.urgency !== undefined ? { urgency: job.urgency } : {});
  let done = false;
  p.then(() => (done = true), () => (done = true));
  while (!done) await clock.advance(10);
  return p;
}

async function until(clock: SimulatedClock, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !cond(); i++) await clock.advance(10);
  expect(cond()).toBe(true);
}

/**
 * Writes what the store holds of a dependent acknowledged just before a SIGKILL: its jobspec
 * and its first `lines` events, copied from `like` (a dependent of the same antecedent).
 * Events plugins post during admission (`dependency-add`) are queued behind `submit` and
 * written with `validate` in the batch after the acknowledged one: a SIGKILL between the two
 * leaves `submit` alone (the crash campaign's case), or with its `dependency-add`.
 */
function crashedInNew(like: JobId, id: JobId, lines: 1 | 2): void {
  const raw = new SqliteStore(join(dir, "jobtap.db"));
  try {
    const stored = raw.load(like)!;
    const all = stored.eventlog.split("\n").filter((l) => l !== "");
    expect(all.slice(0, 2).map((l) => (JSON.parse(l) as { name: string }).name)).toEqual(["submit", "dependency-add"]);
    const text = all.slice(0, lines).map((l) => `${l}\n`).join("");
    raw.commit({ newJobs: [{ id, jobspec: stored.jobspec }], appends: new Map([[id, text]]), purged: [] });
  } finally {
    raw.close();
  }
}

describe(".dependency-after: a dependent replayed in NEW", () => {
  const cases = [
    { how: "failed", lines: 1 },
    { how: "failed", lines: 2 },
    { how: "was cancelled", lines: 1 },
  ] as const;
  for (const { how, lines } of cases) {
    const stored = lines === 1 ? "submit alone" : "submit and dependency-add";
    it(`gets the fatal dependency exception when its afterok antecedent ${how} (${stored} stored)`, async () => {
      const clock = new SimulatedClock();
      const first = await start(clock);
      // Held (urgency 0) so it stays active while its dependent is admitted.
      const ante = await submit(first, clock, { urgency: 0, waitStatus: 256 });
      const dep = await submit(first, clock, { dependencies: [{ scheme: "afterok", value: formatJobId(ante) }] });
      if (how === "failed") {
        first.setUrgency(ante, 16);
        await until(clock, () => first.job(ante).state === "INACTIVE");
        expect(first.job(ante).result).toBe("FAILED");
      } else {
        first.cancel(ante);
        await until(clock, () => first.job(ante).state === "INACTIVE");
      }
      await until(clock, () => first.job(dep).state === "INACTIVE");
      await first.close();
      open.splice(0);
      const crashed = (BigInt(dep) + 1n) as JobId;
      crashedInNew(dep, crashed, lines);

      const m = await start(clock);
      await until(clock, () => m.job(crashed).state === "INACTIVE");
      const log = m.eventlog(crashed);
      expect(log.map((e) => e.name)).not.toContain("alloc");
      expect(log.filter((e) => e.name === "exception").map((e) => e.context)).toEqual([
        expect.objectContaining({ type: "dependency", severity: 0 }),
      ]);
    });
  }
});

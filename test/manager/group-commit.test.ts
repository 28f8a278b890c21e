/**
 * Group commit (batch.ts): at most MAX_IN_FLIGHT batches are handed to an asynchronous store
 * and not yet durable. While the store is that far behind, later windows are not handed over
 * one by one: the open batch grows and goes, whole, when the oldest batch lands. Its
 * submissions are acknowledged only once it is durable; a failed write fails them.
 *
 * The store is the real SQLite store (writer thread); a gate in front of its acknowledgements
 * stands in for a slow disk: a batch reaches the store at once (readers see it) but is
 * reported durable only when the test opens its gate, after the real write has finished.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, JobtapError } from "../../src/errors.js";
import { StoreBatcher, MAX_IN_FLIGHT } from "../../src/manager/batch.js";
import { SimulatedClock, type Clock } from "../../src/manager/clock.js";
import type { JobId } from "../../src/manager/ids.js";
import { newActiveJob } from "../../src/manager/job.js";
import { SqliteStore } from "../../src/manager/store/sqlite.js";
import type { JobStore, StoreBatch } from "../../src/manager/store/types.js";
import { newJobCore } from "../../src/manager/transition.js";
import { tempDir, testJob } from "./helpers.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A batch handed to the gated store: its new jobs, and the gate standing for the disk. */
interface Handed {
  ids: JobId[];
  /** Reports the batch durable once it is written; resolves after that. */
  open: () => Promise<void>;
  /** Reports the write failed (after it ran); resolves after that. */
  fail: () => Promise<void>;
}

/** The real SQLite store, each batch's acknowledgement held until its gate is opened. */
function gatedStore(path: string): { store: JobStore; real: SqliteStore; handed: Handed[] } {
  const real = new SqliteStore(path);
  const handed: Handed[] = [];
  const store: JobStore = Object.create(real) as JobStore;
  store.commitAsync = (batch: StoreBatch) => {
    const written = real.commitAsync!(batch);
    return new Promise<void>((resolve, reject) => {
      handed.push({
        ids: batch.newJobs.map((j) => j.id),
        open: () => written.then(resolve, reject),
        fail: () => written.then(() => reject(new JobtapError(ErrorCode.STORE_WRITE, "disk full (test)")), reject),
      });
    });
  };
  return { store, real, handed };
}

/** Timers on the simulated clock; no `waitFor` (so time can pass while a write is held). */
function timersOnly(clock: SimulatedClock): Clock {
  return { now: () => clock.now(), setTimeout: (fn, ms) => clock.setTimeout(fn, ms), clearTimeout: (h) => clock.clearTimeout(h) };
}

async function setup() {
  const { dir, cleanup } = tempDir("jobtap-group-");
  cleanups.push(cleanup);
  const path = join(dir, "jobtap.db");
  const { store, real, handed } = gatedStore(path);
  cleanups.push(() => real.close());
  await real.ready();
  const clock = new SimulatedClock();
  const errors: string[] = [];
  const batcher = new StoreBatcher(timersOnly(clock), store, 10, (_l, msg) => errors.push(msg));
  const acks = new Map<JobId, string>();
  /** Job `n` enters the store; its acknowledgement ("ok" or the error code) lands in `acks`. */
  const submit = (n: number) => {
    const id = BigInt(n) as JobId;
    const job = newActiveJob(newJobCore(id, testJob()));
    batcher.storeNewJob(job, JSON.stringify({ n }));
    batcher.afterCommit((err) => acks.set(id, err ? err.code : "ok"));
    return id;
  };
  return { clock, batcher, handed, acks, submit, real, errors };
}

/** Lets the writer thread answer and the promise reactions run (real work, no simulated time). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

describe("group commit: at most MAX_IN_FLIGHT batches not yet durable", () => {
  it("later windows wait and go as one batch when the oldest lands; acks follow durability, in order", async () => {
    const { clock, handed, acks, submit, real } = await setup();
    expect(MAX_IN_FLIGHT).toBe(2);
    const a = submit(1);
    await clock.advance(10);
    const b = submit(2);
    await clock.advance(10);
    expect(handed.map((h) => h.ids)).toEqual([[a], [b]]);
    // The store is two batches behind: three more windows pass, nothing more is handed over.
    const later = [submit(3)];
    await clock.advance(10);
    later.push(submit(4));
    await clock.advance(10);
    later.push(submit(5));
    await clock.advance(30);
    expect(handed).toHaveLength(2);
    expect(acks.size).toBe(0);
    // The first two batches are in the store (readable) though not yet durable; the rest is held.
    expect(real.load(a)?.jobspec).toBe('{"n":1}');
    expect(real.load(later[0]!)).toBeUndefined();

    await handed[0]!.open();
    await settle();
    expect(acks.get(a)).toBe("ok");
    expect(acks.has(b)).toBe(false);
    // The oldest landed: everything held goes as one batch.
    expect(handed.map((h) => h.ids)).toEqual([[a], [b], later]);
    expect(later.some((id) => acks.has(id))).toBe(false);

    await handed[1]!.open();
    await settle();
    expect(acks.get(b)).toBe("ok");
    expect(later.some((id) => acks.has(id))).toBe(false);
    await handed[2]!.open();
    await settle();
    expect([...acks]).toEqual([[a, "ok"], [b, "ok"], ...later.map((id) => [id, "ok"])]);
    for (const id of [a, b, ...later]) expect(real.load(id)?.jobspec).toBe(`{"n":${id}}`);
  });

  it("a flush hands the batch over at once, however far behind the store is", async () => {
    const { clock, batcher, handed, submit } = await setup();
    submit(1);
    await clock.advance(10);
    submit(2);
    await clock.advance(10);
    submit(3);
    batcher.commit(true);
    expect(handed.map((h) => h.ids)).toEqual([[1n], [2n], [3n]]);
    for (const h of handed) await h.open();
    await settle();
    await batcher.settled();
  });

  it("a failed write fails the held batch's submissions too, and nothing after is written", async () => {
    const { clock, handed, acks, submit, errors } = await setup();
    const a = submit(1);
    await clock.advance(10);
    const b = submit(2);
    await clock.advance(10);
    const c = submit(3);
    await clock.advance(10);
    expect(handed).toHaveLength(2);
    await handed[0]!.fail();
    await settle();
    expect(acks.get(a)).toBe(ErrorCode.STORE_WRITE);
    expect(acks.get(c)).toBe(ErrorCode.STORE_WRITE);
    expect(handed).toHaveLength(2);
    expect(errors.join("\n")).toMatch(/job store commit failed, job manager stopped: disk full \(test\)/);
    await handed[1]!.open();
    await settle();
    expect(acks.get(b)).toBe(ErrorCode.STORE_WRITE);
    const d = submit(4);
    await settle();
    expect(acks.get(d)).toBe(ErrorCode.STORE_WRITE);
  });
});

/**
 * Group commit (batch.ts): at most MAX_IN_FLIGHT batches are handed to an asynchronous store
 * and not yet written. While the store is that far behind, later windows are not handed over
 * one by one: the open batch grows and goes, whole, once the writer catches up. Its
 * submissions are acknowledged only once it is durable; a failed write fails them.
 *
 * The store is the real SQLite store (writer thread); a gate in front of it stands in for a
 * slow disk: a batch reaches the store at once (readers see it) but counts as written (the
 * store's `backlog`) and is reported durable only when the test says so, after the real
 * write has finished. The writer thread's own count, read through shared memory before its
 * reply is processed, is checked last.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, JobtapError } from "../../src/errors.js";
import { EARLY_COMMIT_JOBS, StoreBatcher, MAX_IN_FLIGHT } from "../../src/manager/engine/batch.js";
import { SimulatedClock, type Clock } from "../../src/manager/base/clock.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { newActiveJob } from "../../src/manager/engine/job.js";
import { SqliteStore } from "../../src/manager/store/sqlite.js";
import type { JobStore, StoreBatch } from "../../src/manager/store/types.js";
import { newJobCore } from "../../src/manager/core/transition.js";
import { tempDir, testJob } from "./helpers.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A batch handed to the gated store: its new jobs, and the gate standing for the disk. */
interface Handed {
  ids: JobId[];
  /** Counts the batch as written (the store's backlog) without reporting it durable yet. */
  written: () => void;
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
  let backlog = 0;
  store.backlog = () => backlog;
  store.commitAsync = (batch: StoreBatch) => {
    const written = real.commitAsync!(batch);
    backlog++;
    let counted = false;
    const done = () => {
      if (!counted) backlog--;
      counted = true;
    };
    return new Promise<void>((resolve, reject) => {
      handed.push({
        ids: batch.newJobs.map((j) => j.id),
        written: done,
        open: () => written.then(() => (done(), resolve()), reject),
        fail: () => written.then(() => (done(), reject(new JobtapError(ErrorCode.STORE_WRITE, "disk full (test)"))), reject),
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
  /** Jobs 1 and 2, each in a batch of its own, both handed over: the store is two behind. */
  const twoBehind = async (): Promise<[JobId, JobId]> => {
    const a = submit(1);
    await clock.advance(10);
    const b = submit(2);
    await clock.advance(10);
    return [a, b];
  };
  return { clock, batcher, handed, acks, submit, twoBehind, real, errors };
}

/** Lets the writer thread answer and the promise reactions run (real work, no simulated time). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

describe("group commit: at most MAX_IN_FLIGHT batches not yet durable", () => {
  it("later windows wait and go as one batch when the oldest lands; acks follow durability, in order", async () => {
    const { clock, handed, acks, submit, twoBehind, real } = await setup();
    expect(MAX_IN_FLIGHT).toBe(2);
    const [a, b] = await twoBehind();
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
    const { batcher, handed, submit, twoBehind } = await setup();
    await twoBehind();
    submit(3);
    batcher.commit(true);
    expect(handed.map((h) => h.ids)).toEqual([[1n], [2n], [3n]]);
    for (const h of handed) await h.open();
    await settle();
    await batcher.settled();
  });

  it("a failed write fails the held batch's submissions too, and nothing after is written", async () => {
    const { clock, handed, acks, submit, twoBehind, errors } = await setup();
    const [a, b] = await twoBehind();
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

describe("group commit follows the writer's own progress", () => {
  it("a burst of submissions in one synchronous run hands its held batch over as soon as the writer has written one, before any reply is processed", async () => {
    const { clock, handed, acks, submit, twoBehind } = await setup();
    await twoBehind();
    // One synchronous run (as a big submitMany is): no reply can be processed meanwhile.
    let n = 3;
    for (; n < 3 + EARLY_COMMIT_JOBS; n++) submit(n);
    submit(n++); // past EARLY_COMMIT_JOBS: the batch would go, but two are not yet written
    expect(handed).toHaveLength(2);
    handed[0]!.written(); // the writer is done with the first one; its reply is not in yet
    submit(n++);
    expect(handed).toHaveLength(3);
    // The cut is made before the job that found the batch full: it is the next batch's first.
    expect(handed[2]!.ids).toHaveLength(EARLY_COMMIT_JOBS + 1);
    expect(acks.size).toBe(0);
    await handed[0]!.open();
    await handed[1]!.open();
    await clock.advance(10);
    expect(handed).toHaveLength(4);
    for (const h of handed.slice(2)) await h.open();
    await settle();
    expect(acks.size).toBe(n - 1);
    expect([...acks.values()].every((a) => a === "ok")).toBe(true);
  });

  it("the SQLite writer thread counts a batch written before its reply is processed", async () => {
    const { dir, cleanup } = tempDir("jobtap-group-");
    cleanups.push(cleanup);
    const store = new SqliteStore(join(dir, "jobtap.db"));
    cleanups.push(() => store.close());
    await store.ready();
    let durable = false;
    // Big enough that the writer cannot have written it before the first look at the count.
    const ids = Array.from({ length: 20_000 }, (_, i) => BigInt(i + 1) as JobId);
    const batch = {
      newJobs: ids.map((id) => ({ id, jobspec: "{}" })),
      appends: new Map(ids.map((id) => [id, '{"timestamp":1,"name":"submit"}\n'])),
      purged: [],
    };
    void store.commitAsync!(batch).then(() => (durable = true));
    expect(store.backlog!()).toBe(1);
    // Waits here, synchronously (no reply can be processed), until the writer has written it.
    const nap = new Int32Array(new SharedArrayBuffer(4));
    for (let i = 0; i < 2000 && store.backlog!() > 0; i++) Atomics.wait(nap, 0, 0, 5);
    expect(store.backlog!()).toBe(0);
    expect(durable).toBe(false);
    await settle();
    expect(durable).toBe(true);
    expect(store.load(20_000n as JobId)?.jobspec).toBe("{}");
  });
});

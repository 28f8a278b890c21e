/**
 * Batched store writes (spec §3): every committed event, new job and purge of one batch
 * window goes into one `JobStore.commit` transaction; submissions wait for the commit that
 * makes them durable. A failed commit is fatal to the manager, as a KVS commit failure is
 * fatal to Flux's job manager.
 *
 * With a store that commits asynchronously (the SQLite store's writer thread), the batch is
 * handed over at the window and the next window fills meanwhile; the batch's waiters are
 * released when the store says it is durable, batches in order. At most MAX_IN_FLIGHT
 * batches are handed over and not yet written: while the store is that far behind, the
 * current batch stays open past its window and is handed over, larger, once the writer
 * catches up (group commit). The store's own count (`backlog`, read from the writer thread
 * through shared memory) is checked, not the replies received: during a long burst of
 * submissions the manager's thread processes no replies, yet the writer keeps writing. A
 * store slower than the manager then gets fewer, bigger transactions instead of a queue of
 * batches growing without bound, and submitters wait for it (their acknowledgement waits
 * for their batch).
 */
import { ErrorCode, JobtapError, codedError } from "../../errors.js";
import type { Clock, TimerHandle } from "../base/clock.js";
import { SECONDS_BUCKETS, SIZE_BUCKETS, Tally, type BatchStats } from "../base/tally.js";
import type { JobId } from "../base/ids.js";
import type { ActiveJob } from "./job.js";
import type { EventEntry } from "../port/records.js";
import type { InactiveRecord } from "./inactive.js";
import { TextBatch } from "../store/batch-text.js";
import { summaryParts } from "./summary.js";
import { eventLine, eventLineParts } from "./eventlog-text.js";
import type { JobStore, StoredJobText } from "../store/types.js";

export { eventLine, eventLineParts } from "./eventlog-text.js";

/**
 * New jobs after which a batch is handed to an asynchronous store before its window ends: a
 * burst of submissions (one request of thousands of jobs, run in one go) is then written
 * while the rest of it is still being taken, instead of all at once after it.
 */
export const EARLY_COMMIT_JOBS = 1024;

/** Batches an asynchronous store may hold not yet written: one being written, one queued. */
export const MAX_IN_FLIGHT = 2;

/** Collects a batch window's store writes and commits them in one transaction. */
export class StoreBatcher {
  private batch = new TextBatch();
  /**
   * Jobs with text in this window, by their slot in `batch` (each job's slot is on its
   * record, `batchSlot`: no map lookup per event; bigint-keyed maps are not free at
   * 200,000 events/s).
   */
  private dirty: ActiveJob[] = [];
  /** Index of `dirty` by id, built only when a reader needs it during this window. */
  private dirtyIndex: Map<JobId, ActiveJob> | undefined;
  private batchTimer: TimerHandle | undefined;
  /** Who waits for the current batch: a callback and its argument each (parallel arrays:
   *  a submission passes its job to one shared callback, no closure per job). */
  private waitFns: Array<CommitWaiter<never>> = [];
  private waitArgs: unknown[] = [];
  /** Set once a commit failed; every later write or submission is refused with it. */
  fatal: JobtapError | undefined;
  /** Settles once every batch handed to an asynchronous store so far is durable or failed. */
  private durable: Promise<void> = Promise.resolve();
  /** Batches with text handed to the store, and how many of them are durable (in order). */
  private cuts = 0;
  private landedCuts = 0;
  /** The current batch's window has ended while the store was MAX_IN_FLIGHT batches behind:
   *  it is handed over at the next cut, or when a batch lands. */
  private held = false;
  /** Each written batch's time from hand-over to durable (real time) and its job count. */
  readonly stats: BatchStats = { seconds: new Tally(SECONDS_BUCKETS), jobs: new Tally(SIZE_BUCKETS) };

  constructor(
    private readonly clock: Clock,
    private readonly store: JobStore,
    private readonly windowMs: number,
    private readonly log: (level: "error", msg: string) => void,
  ) {}

  /**
   * An accepted job enters the store: its jobspec (once) and the eventlog lines buffered
   * while it was under admission go into the current batch. A rejected job never does.
   */
  storeNewJob(job: ActiveJob, jobspecJson: string): void {
    // Between two submissions (each job's own cascade has run): a safe place to cut.
    if (this.store.commitAsync && this.batch.newJobCount >= EARLY_COMMIT_JOBS) this.commit();
    const slot = this.slotOf(job);
    this.batch.newJob(slot, jobspecJson);
    const from = job.unstoredFrom ?? job.eventlog.length;
    job.unstoredFrom = undefined;
    for (let i = from; i < job.eventlog.length; i++) this.batch.eventlogParts(slot, eventLineParts, job.eventlog[i]!);
    for (const e of job.execlog ?? []) this.batch.execlog(slot, eventLine(e));
    this.requestCommit();
  }

  /**
   * A job as the store will hold it after the pending batch: what is stored now plus what
   * the current batch will add. Lets readers see a job that finished inside one window.
   */
  storedView(id: JobId): StoredJobText | undefined {
    const stored = this.store.load(id);
    this.dirtyIndex ??= new Map(this.dirty.map((j) => [j.core.id, j]));
    const slot = this.dirtyIndex.get(id)?.batchSlot;
    const pending = slot === undefined ? undefined : this.batch.slotText(slot);
    const jobspec = stored?.jobspec ?? pending?.jobspec;
    if (jobspec === undefined) return undefined;
    const view: StoredJobText = { id, jobspec, eventlog: (stored?.eventlog ?? "") + (pending?.eventlog ?? "") };
    if (stored?.exec !== undefined || pending?.exec !== undefined) view.exec = (stored?.exec ?? "") + (pending?.exec ?? "");
    return view;
  }

  /** Queues the summary of `job`, which has just become inactive, written from its record `r` (summaryParts). */
  storeSummaryOf(job: ActiveJob, r: InactiveRecord): void {
    this.batch.summaryParts(job.core.id, summaryParts, job, r);
    this.requestCommit();
  }

  /** Queues a purge of an inactive job. */
  storePurge(id: JobId): void {
    this.batch.purged.push(id);
    this.requestCommit();
  }

  /** Adds one committed event of a stored job to the current batch. */
  append(job: ActiveJob, e: EventEntry): void {
    this.batch.eventlogParts(this.slotOf(job), eventLineParts, e);
    this.requestCommit();
  }

  /** Adds one exec eventlog entry of a stored job to the current batch (same commit as its events). */
  appendExec(job: ActiveJob, e: EventEntry): void {
    this.batch.execlog(this.slotOf(job), eventLine(e));
    this.requestCommit();
  }

  /** The job's slot in the current batch (given on its first text in this window). */
  private slotOf(job: ActiveJob): number {
    if (job.batchSlot !== undefined) return job.batchSlot;
    const slot = this.batch.addSlot(job.core.id);
    job.batchSlot = slot;
    job.batchCut = this.cuts;
    this.dirty.push(job);
    this.dirtyIndex?.set(job.core.id, job);
    return slot;
  }

  /** Calls `fn` once the current batch is durable (with an error if the commit failed). */
  afterCommit(fn: (err?: JobtapError) => void): void {
    this.afterCommitWith(callPlain, fn);
  }

  /** Calls `fn(arg)` once the current batch is durable (with an error if the commit failed). */
  afterCommitWith<T>(fn: CommitWaiter<T>, arg: T): void {
    if (this.fatal) {
      fn(arg, this.fatal);
      return;
    }
    this.waitFns.push(fn as CommitWaiter<never>);
    this.waitArgs.push(arg);
    this.requestCommit();
  }

  private requestCommit(): void {
    if (this.batchTimer || this.held || this.fatal) return;
    this.batchTimer = this.clock.setTimeout(() => {
      this.batchTimer = undefined;
      this.commit();
    }, this.windowMs);
  }

  /**
   * Writes the current batch in one transaction, then releases its waiters. With an
   * asynchronous store already MAX_IN_FLIGHT batches behind, the batch is held open instead
   * (see the header) unless `now` (flush, close).
   */
  commit(now = false): void {
    if (this.batchTimer) this.clock.clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
    if (!now && (this.store.backlog?.() ?? this.inFlight) >= MAX_IN_FLIGHT && !this.fatal) {
      this.held = true;
      return;
    }
    this.held = false;
    const batch = this.batch;
    const jobs = this.dirty.length;
    for (const job of this.dirty) job.batchSlot = undefined;
    const fns = this.waitFns;
    const args = this.waitArgs;
    this.batch = new TextBatch();
    this.dirty = [];
    this.dirtyIndex = undefined;
    this.waitFns = [];
    this.waitArgs = [];
    if (this.store.commitAsync && !this.fatal) {
      // An empty batch's waiters still wait for the batches in flight before it.
      if (!batch.isEmpty()) {
        this.cuts++;
        const began = performance.now();
        this.durable = this.store.commitAsync(batch).then(
          () => {
            this.wrote(began, jobs);
            this.landed();
          },
          (err: unknown) => {
            this.fail(err);
            this.landed();
          },
        );
      }
      const acked = fns.length > 0 ? this.durable.then(() => release(fns, args, this.fatal)) : this.durable;
      // A simulated clock lets the write take no simulated time (tests see a synchronous store's order).
      this.clock.waitFor?.(acked);
      return;
    }
    if (!batch.isEmpty() && !this.fatal) {
      this.cuts++;
      try {
        const began = performance.now();
        this.store.commit(batch);
        this.wrote(began, jobs);
        this.landedCuts++;
      } catch (err) {
        this.fail(err);
      }
    }
    release(fns, args, this.fatal);
  }

  /** Counts a durable batch (stats): its write time since `began` and its jobs. */
  private wrote(began: number, jobs: number): void {
    this.stats.seconds.observe((performance.now() - began) / 1000);
    this.stats.jobs.observe(jobs);
  }

  /** A batch handed over is durable (or failed): a held batch goes now. */
  private landed(): void {
    this.landedCuts++;
    if (this.held) this.commit();
  }

  /** Batches handed to an asynchronous store and not yet durable or failed (the count used
   *  when the store does not report its `backlog`). */
  private get inFlight(): number {
    return this.cuts - this.landedCuts;
  }

  /**
   * True when everything the job ever had in a batch is durable: it has no text in the
   * current batch, and the last batch it had text in has landed (and no commit failed).
   */
  durableFor(job: ActiveJob): boolean {
    return job.batchSlot === undefined && (job.batchCut === undefined || job.batchCut < this.landedCuts) && this.fatal === undefined;
  }

  /** Resolves once every batch committed so far is durable or has failed (close). */
  settled(): Promise<void> {
    return this.durable;
  }

  private fail(err: unknown): void {
    if (this.fatal) return;
    this.fatal = codedError(err) ?? new JobtapError(ErrorCode.STORE_WRITE, String(err));
    this.log("error", `job store commit failed, job manager stopped: ${this.fatal.message}`);
  }

  /** Stops the batch timer without writing (used by close after a final commit). */
  stopTimers(): void {
    if (this.batchTimer) this.clock.clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
  }
}

/** A batch's waiter: called with its argument once the batch is durable, or with the error. */
export type CommitWaiter<T> = (arg: T, err?: JobtapError) => void;

const callPlain: CommitWaiter<(err?: JobtapError) => void> = (fn, err) => fn(err);

function release(fns: Array<CommitWaiter<never>>, args: unknown[], err: JobtapError | undefined): void {
  for (let i = 0; i < fns.length; i++) (fns[i] as CommitWaiter<unknown>)(args[i], err);
}

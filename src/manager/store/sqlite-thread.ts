/**
 * The SQLite store's writer thread, seen from the manager's thread: batches handed over
 * (`commit`) are written by a worker thread with its own connection to the same file
 * (sqlite-worker.ts), in order, while the manager's thread goes on with the next window.
 * Until a batch's reply arrives it is *in flight*: kept here, so that readers see it
 * (`view`), and its promise resolves only once the writer says it is durable.
 *
 * A failed batch, or the thread dying, rejects that batch and every later one with
 * STORE_WRITE naming the file; nothing more is written (the writer refuses too).
 */
import { Worker } from "node:worker_threads";
import { ErrorCode, JobtapError } from "../../errors.js";
import { compiledSibling } from "../../worker-file.js";
import type { JobId } from "../base/ids.js";
import type { BatchRows } from "./batch-text.js";
import type { FromWriter, ToWriter, WriterData } from "./sqlite-write.js";
import { WirePool } from "./wire-text.js";
import type { StoreBatch, StoredJobText } from "./types.js";

interface InFlight {
  seq: number;
  batch: StoreBatch;
  /** The batch's new jobs by id, built on the first read that needs it. */
  newJobs?: Map<JobId, string>;
  resolve(): void;
  reject(err: JobtapError): void;
}

/** The compiled writer module (see compiledSibling). */
function writerFile(): string {
  return compiledSibling(
    import.meta.url,
    "sqlite-worker.js",
    (file) => new JobtapError(ErrorCode.STORE_OPEN, `the job store's writer thread needs the compiled module ${file} (npm run build)`),
  );
}

/** A writer thread for one store file, started with the store. */
export class WriterThread {
  private worker: Worker | undefined;
  /** Resolves once the thread has its connection open; rejects STORE_OPEN if it cannot. */
  readonly ready: Promise<void>;
  private onReady: ((err?: string) => void) | undefined;
  private readonly inFlight: InFlight[] = [];
  private failure: JobtapError | undefined;
  private exited: Promise<void> | undefined;
  /** Settles once every batch handed over so far is durable or failed. */
  private last: Promise<void> = Promise.resolve();
  /** Batches handed over (counted as the writer counts `finished`: wrapping at 2^32). */
  private handed = 0;
  private readonly finished = new Int32Array(new SharedArrayBuffer(4));
  private readonly data: WriterData;
  private readonly wire = new WirePool();

  constructor(data: WriterData) {
    this.data = { ...data, finished: this.finished };
    this.ready = new Promise((resolve, reject) => {
      this.onReady = (err) => (err === undefined ? resolve() : reject(new JobtapError(ErrorCode.STORE_OPEN, `cannot open job store ${data.path} in its writer thread: ${err}`, { path: data.path })));
    });
    this.ready.catch(() => undefined); // also reported by every commit
    this.start();
  }

  /**
   * Hands `rows` (the rows of `batch`) to the writer. Resolves once durable; rejects with
   * STORE_WRITE if the write failed, or an earlier one did.
   */
  commit(batch: StoreBatch, rows: BatchRows): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const worker = this.worker;
    if (!worker) return Promise.reject(this.error("its writer thread has ended"));
    const done = new Promise<void>((resolve, reject) => {
      this.inFlight.push({ seq: rows.seq, batch, resolve, reject });
    });
    this.handed = (this.handed + 1) | 0;
    // Keeps the process alive while a batch is not yet durable, and only then.
    if (this.inFlight.length === 1) worker.ref();
    // The text is encoded into a buffer that is transferred (wire-text.ts); the typed arrays
    // are copied: they are small, and the batch keeps them for readers.
    const text = this.wire.pack(rows.chunks);
    const msg: ToWriter = { kind: "commit", rows: { ...rows, chunks: [] }, text };
    worker.postMessage(msg, [text.bytes]);
    this.last = done.catch(() => undefined);
    return done;
  }

  /**
   * Batches handed over that the writer has not finished yet, as it counts them right now
   * (its replies may still be waiting behind the manager's own work).
   */
  backlog(): number {
    return (this.handed - Atomics.load(this.finished, 0)) | 0;
  }

  /**
   * A job as the store will hold it once every in-flight batch is written: `stored(seq)` reads
   * the file without eventlog chunks numbered `seq` or later (those batches may or may not be
   * in the file yet: they are taken from here instead).
   */
  view(id: JobId, stored: (beforeSeq?: number) => StoredJobText | undefined): StoredJobText | undefined {
    if (this.inFlight.length === 0) return stored();
    const born = this.inFlight.findIndex((f) => newJobsOf(f).has(id));
    let text = born < 0 ? stored(this.inFlight[0]!.seq) : undefined;
    for (let i = Math.max(born, 0); i < this.inFlight.length; i++) {
      const f = this.inFlight[i]!;
      if (i === born) text = { id, jobspec: newJobsOf(f).get(id)!, eventlog: "" };
      const lines = f.batch.appends.get(id);
      if (text && lines) text = { ...text, eventlog: text.eventlog + lines };
      const exec = f.batch.execAppends?.get(id);
      if (text && exec) text = { ...text, exec: (text.exec ?? "") + exec };
      if (f.batch.purged.includes(id)) text = undefined;
    }
    return text;
  }

  /** Waits for every batch handed over, then ends the thread (its connection closed). */
  async close(): Promise<void> {
    await this.last;
    const worker = this.worker;
    if (!worker) return;
    worker.ref();
    const msg: ToWriter = { kind: "close" };
    worker.postMessage(msg);
    await this.exited;
  }

  private start(): void {
    // Referenced until it is ready (a caller awaits that), then only while batches are in flight.
    const worker = new Worker(writerFile(), { workerData: this.data });
    worker.on("message", (m: FromWriter) => this.reply(m));
    worker.on("error", (e) => {
      this.onReady?.(e.message);
      this.fail(`its writer thread failed: ${e.message}`);
    });
    this.exited = new Promise((resolve) =>
      worker.on("exit", (code) => {
        this.worker = undefined;
        this.onReady?.(`its writer thread ended (exit code ${code})`);
        if (this.inFlight.length > 0) this.fail(`its writer thread ended (exit code ${code}) with batches unwritten`);
        resolve();
      }),
    );
    this.worker = worker;
  }

  private reply(m: FromWriter): void {
    if (m.kind === "ready") {
      this.onReady?.(m.error);
      if (this.inFlight.length === 0) this.worker?.unref();
      return;
    }
    this.wire.give(m.bytes);
    const f = this.inFlight.shift();
    if (this.inFlight.length === 0) this.worker?.unref();
    if (!f) return;
    if (m.error === undefined && m.seq === f.seq) {
      f.resolve();
      return;
    }
    const why = m.error ?? `the writer answered batch ${m.seq} for batch ${f.seq}`;
    this.failure ??= this.error(why);
    f.reject(this.failure);
  }

  /** Every batch not yet durable fails; so does every later one. */
  private fail(why: string): void {
    this.failure ??= this.error(why);
    for (const f of this.inFlight.splice(0)) f.reject(this.failure);
  }

  private error(why: string): JobtapError {
    return new JobtapError(ErrorCode.STORE_WRITE, `cannot write job store ${this.data.path}: ${why}`, { path: this.data.path });
  }
}

function newJobsOf(f: InFlight): Map<JobId, string> {
  f.newJobs ??= new Map(f.batch.newJobs.map((j) => [j.id, j.jobspec]));
  return f.newJobs;
}

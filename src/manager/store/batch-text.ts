/**
 * A batch window's writes as the manager builds them: every piece of text (an eventlog line,
 * a new job's jobspec, a summary) is kept in the order it was made, tagged with what it
 * belongs to, and joined into a few flat chunk strings while it is still in the CPU's cache.
 * Handing the batch to the writer thread is then a structured clone of a few long strings
 * and small typed arrays; the writer (sqlite-write.ts) cuts the chunks back into pieces and
 * groups them into the rows of each job.
 *
 * Why not a string per job: a job's lines arrive one event at a time, between other jobs'
 * events, so a per-job string is a tree of small strings (V8 cons strings) that stays
 * unflattened until the clone walks it, cold, at hand-over; and cloning thousands of strings
 * costs far more than cloning a few long ones (several hundred ns per string in Node 20).
 *
 * A TextBatch is also a StoreBatch: stores that commit synchronously (the memory store, a
 * custom store, SQLite with `commits: "main"`) read `newJobs`, `appends` and `inactive`,
 * which are derived from the pieces once the batch is sealed.
 */
import { ErrorCode, JobtapError } from "../../errors.js";
import type { JobId } from "../base/ids.js";
import type { StoreBatch } from "./types.js";

/** What a piece is, besides an eventlog piece of slot k (k >= 0). */
const JOBSPEC = -1;
const SUMMARY = -2;
/** A new job's jobspec that is the very string of the batch's previous jobspec: no text. */
const JOBSPEC_AGAIN = -3;
/** Exec eventlog text of slot k is owned by EXEC_OF - k (k >= 0): below every other tag. */
const EXEC_OF = -16;

/**
 * Parts joined into one chunk string while recent: small enough that they are still cached
 * when joined, large enough that a batch is a few hundred strings at most.
 */
const CHUNK_PARTS = 512;

/**
 * Slots of the array the open parts are written into: a chunk's parts plus the few a piece
 * may add past CHUNK_PARTS. A fixed array written by index, blanked after each join: growing
 * a fresh array per chunk left as many bytes of discarded arrays as the chunk's own text.
 */
const OPEN_SLOTS = CHUNK_PARTS + 8;

/** Where a writer puts the parts of a piece, in order (a TextBatch, or a plain array). */
export interface PartSink {
  push(part: string): unknown;
}

/** A batch's text as handed to the writer (plain data: structured-cloneable). */
export interface BatchRows {
  /** Numbers the batch's eventlog chunks (continues across restarts). */
  seq: number;
  /** The pieces' text: each chunk is its pieces, concatenated, in order. */
  chunks: string[];
  /** Pieces in each chunk. */
  chunkPieces: Int32Array;
  /** Each piece's end offset within its chunk. */
  pieceEnds: Int32Array;
  /** Each piece's owner: a slot (>= 0: eventlog text of that job), JOBSPEC, JOBSPEC_AGAIN
   *  (the previous jobspec again, no text of its own), SUMMARY, or EXEC_OF - slot (exec
   *  eventlog text of that job). */
  pieceOf: Int32Array;
  /** The row id of each slot (a job with eventlog text or a jobspec in this batch). */
  slotIds: BigInt64Array;
  /** Slots of the new jobs, in the order of their jobspec pieces. */
  newSlots: Int32Array;
  /** Ids of the summarized jobs, in the order of their summary pieces. */
  summaryIds: BigInt64Array;
  /** Jobs purged: every row of theirs removed. */
  purged: BigInt64Array;
}

/** The text of a batch's rows, cut out of its chunks (`readRows`). */
export interface RowsText {
  /** Jobspec of each new job (order of `newSlots`). */
  jobspecs: string[];
  /** Each slot's eventlog text in this batch, or undefined if it has none. */
  eventlogs: Array<string | undefined>;
  /** Each slot's exec eventlog text in this batch, or undefined if it has none. */
  execlogs: Array<string | undefined>;
  /** Summary of each summarized job (order of `summaryIds`). */
  summaries: string[];
}

/** Job ids are unsigned 64-bit; SQLite integers are signed: store the two's-complement. */
export const toRow = (id: JobId): bigint => BigInt.asIntN(64, id);
export const fromRow = (v: bigint): JobId => BigInt.asUintN(64, v) as JobId;

/** Row ids of `ids` (a BigInt64Array element takes a bigint modulo 2^64: `toRow`, without a call per id). */
function rowIds(ids: readonly JobId[]): BigInt64Array {
  const rows = new BigInt64Array(ids.length);
  for (let i = 0; i < ids.length; i++) rows[i] = ids[i]!;
  return rows;
}

/** Cuts a batch's chunks back into its pieces, grouped per slot (the writer's side). */
export function readRows(r: BatchRows): RowsText {
  const jobspecs: string[] = [];
  const summaries: string[] = [];
  const eventlogs = new Array<string | undefined>(r.slotIds.length).fill(undefined);
  const execlogs = new Array<string | undefined>(r.slotIds.length).fill(undefined);
  let piece = 0;
  for (let c = 0; c < r.chunks.length; c++) {
    const chunk = r.chunks[c]!;
    let start = 0;
    for (const last = piece + r.chunkPieces[c]!; piece < last; piece++) {
      const end = r.pieceEnds[piece]!;
      const text = chunk.slice(start, end);
      start = end;
      const of = r.pieceOf[piece]!;
      if (of >= 0) {
        const before = eventlogs[of];
        eventlogs[of] = before === undefined ? text : before + text;
      } else if (of === JOBSPEC) jobspecs.push(text);
      else if (of === JOBSPEC_AGAIN) jobspecs.push(jobspecs[jobspecs.length - 1]!);
      else if (of === SUMMARY) summaries.push(text);
      else execlogs[EXEC_OF - of] = (execlogs[EXEC_OF - of] ?? "") + text;
    }
  }
  return { jobspecs, eventlogs, execlogs, summaries };
}

/**
 * A growing list of 32-bit integers (a piece's end or owner per piece of a batch: thousands
 * per batch). In a typed array, not a JS array: its store is outside the JS heap, so the
 * young-generation collector never copies it while the batch fills, and growing it leaves
 * half as many bytes behind.
 */
class Ints {
  private a = new Int32Array(256);
  length = 0;

  push(v: number): void {
    if (this.length === this.a.length) {
      const grown = new Int32Array(this.a.length * 2);
      grown.set(this.a);
      this.a = grown;
    }
    this.a[this.length++] = v;
  }

  get(i: number): number {
    return this.a[i]!;
  }

  /** The values as a typed array of their own (exactly `length` long). */
  copy(): Int32Array {
    return this.a.slice(0, this.length);
  }
}

/** One batch window's writes, as pieces of text (see the header). */
export class TextBatch implements StoreBatch {
  /** Job id of each slot. */
  private readonly slots: JobId[] = [];
  private readonly newSlots: number[] = [];
  private readonly summaryIds: JobId[] = [];
  readonly purged: JobId[] = [];
  /** Parts of the pieces not yet joined into a chunk: the first `openN` slots (the rest are ""). */
  private readonly open: string[] = new Array<string>(OPEN_SLOTS).fill("");
  private openN = 0;
  private openEnd = 0;
  private readonly chunks: string[] = [];
  private readonly pieceEnds = new Ints();
  private readonly pieceOf = new Ints();
  private sealed: Omit<BatchRows, "seq"> | undefined;
  private text: RowsText | undefined;
  private readonly derived: Partial<Pick<StoreBatch, "newJobs" | "appends" | "execAppends" | "inactive">> = {};
  /** First piece of each chunk, then of the open parts. */
  private readonly chunkFirst: number[] = [0];
  /** Pieces of each slot and each new slot's jobspec piece: built on the first read during the window (`slotText`). */
  private index: { pieces: number[][]; execPieces: number[][]; jobspecs: Map<number, number>; done: number; newJobs: number; lastJobspec: number } | undefined;

  /** A TextBatch holding a plain StoreBatch's writes (a new job's first chunk is its appends entry). */
  static of(b: StoreBatch): TextBatch {
    if (b instanceof TextBatch) return b;
    const t = new TextBatch();
    for (const j of b.newJobs) {
      const slot = t.addSlot(j.id);
      t.newJob(slot, j.jobspec);
      const lines = b.appends.get(j.id);
      if (lines !== undefined) t.eventlog(slot, lines);
    }
    const slotOf = new Map(b.newJobs.map((j, k) => [j.id, k]));
    for (const [id, lines] of b.appends) {
      if (slotOf.has(id)) continue;
      const slot = t.addSlot(id);
      slotOf.set(id, slot);
      t.eventlog(slot, lines);
    }
    for (const [id, lines] of b.execAppends ?? []) {
      let slot = slotOf.get(id);
      if (slot === undefined) slotOf.set(id, (slot = t.addSlot(id)));
      t.execlog(slot, lines);
    }
    for (const s of b.inactive ?? []) t.summary(s.id, s.summary);
    t.purged.push(...b.purged);
    return t;
  }

  /** A new slot for job `id` (the caller remembers it: one slot per job per batch). */
  addSlot(id: JobId): number {
    this.slots.push(id);
    return this.slots.length - 1;
  }

  /** Eventlog text (whole lines) of the job in `slot`, after its earlier text in this batch. */
  eventlog(slot: number, text: string): void {
    this.piece(slot, text);
  }

  /** Exec eventlog text (whole lines) of the job in `slot`: executor state, kept apart. */
  execlog(slot: number, text: string): void {
    this.piece(EXEC_OF - slot, text);
  }

  /**
   * Eventlog text of the job in `slot` given as parts: `write(arg, out)` pushes strings to
   * `out` whose concatenation is whole lines, and returns its length. The parts are joined
   * with the batch's other text, never into a string of their own.
   */
  eventlogParts<T>(slot: number, write: (arg: T, out: PartSink) => number, arg: T): void {
    this.refuseSealed();
    this.openEnd += write(arg, this);
    this.endPiece(slot);
  }

  /** One part of the piece being written (PartSink: for eventlogParts' writers). */
  push(part: string): void {
    if (this.openN < this.open.length) this.open[this.openN] = part;
    else this.open.push(part);
    this.openN++;
  }

  /**
   * The job in `slot` is new in this batch: its jobspec (JSON) is stored with its first chunk.
   * Jobs submitted with one jobspec share one string (submit.ts): the text goes to the
   * writer once per batch, not once per job.
   */
  newJob(slot: number, jobspec: string): void {
    this.newSlots.push(slot);
    if (jobspec === this.lastJobspec) {
      this.piece(JOBSPEC_AGAIN, "");
      return;
    }
    this.lastJobspec = jobspec;
    this.piece(JOBSPEC, jobspec);
  }

  /** The jobspec text of the batch's last new job (see newJob). */
  private lastJobspec: string | undefined;

  /** The summary (JSON) of a job that has just become inactive. */
  summary(id: JobId, summary: string): void {
    this.summaryIds.push(id);
    this.piece(SUMMARY, summary);
  }

  /** A summary given as parts (`write(a, b, out)`, as eventlogParts' writers). */
  summaryParts<A, B>(id: JobId, write: (a: A, b: B, out: PartSink) => number, a: A, b: B): void {
    this.refuseSealed();
    this.summaryIds.push(id);
    this.openEnd += write(a, b, this);
    this.endPiece(SUMMARY);
  }

  /** New jobs in this batch. */
  get newJobCount(): number {
    return this.newSlots.length;
  }

  /** True if the batch has nothing to write. */
  isEmpty(): boolean {
    return this.slots.length === 0 && this.summaryIds.length === 0 && this.purged.length === 0;
  }

  private piece(of: number, text: string): void {
    this.refuseSealed();
    if (text.length > 0) this.push(text);
    this.openEnd += text.length;
    this.endPiece(of);
  }

  /** Text added once the batch was handed over would never be written: a bug, said at once. */
  private refuseSealed(): void {
    if (this.sealed) throw new JobtapError(ErrorCode.INTERNAL, "text added to a store batch already handed over (it would be lost)");
  }

  private endPiece(of: number): void {
    this.pieceEnds.push(this.openEnd);
    this.pieceOf.push(of);
    if (this.openN >= CHUNK_PARTS) this.joinOpen();
  }

  /** Joins the open parts into a chunk (its pieces: those since the last chunk). */
  private joinOpen(): void {
    const first = this.chunkFirst[this.chunkFirst.length - 1]!;
    if (this.pieceOf.length === first) return;
    const open = this.open;
    const n = this.openN;
    this.chunks.push(n === 1 ? open[0]! : open.join(""));
    this.chunkFirst.push(this.pieceOf.length);
    // Blanked at once: the parts are in the chunk now, and kept here they would live on.
    open.fill("", 0, n);
    this.openN = 0;
    this.openEnd = 0;
  }

  /** The batch as handed to the writer, numbered `seq`. Seals the batch: nothing more is added. */
  rows(seq: number): BatchRows {
    if (!this.sealed) {
      this.joinOpen();
      this.sealed = {
        chunks: this.chunks,
        chunkPieces: Int32Array.from(this.chunks, (_, c) => this.chunkFirst[c + 1]! - this.chunkFirst[c]!),
        pieceEnds: this.pieceEnds.copy(),
        pieceOf: this.pieceOf.copy(),
        slotIds: rowIds(this.slots),
        newSlots: new Int32Array(this.newSlots),
        summaryIds: rowIds(this.summaryIds),
        purged: rowIds(this.purged),
      };
    }
    return { seq, ...this.sealed };
  }

  private readText(): RowsText {
    this.text ??= readRows(this.rows(0));
    return this.text;
  }

  /**
   * The text of `slot` so far (a reader during the window): its jobspec if it is new, and
   * its eventlog text. Pieces are indexed per slot on the first read, then as they come.
   */
  slotText(slot: number): { jobspec?: string; eventlog: string; exec?: string } {
    this.joinOpen(); // pieces are read from chunks only
    const index = (this.index ??= { pieces: [], execPieces: [], jobspecs: new Map(), done: 0, newJobs: 0, lastJobspec: -1 });
    for (; index.done < this.pieceOf.length; index.done++) {
      const of = this.pieceOf.get(index.done);
      if (of >= 0) (index.pieces[of] ??= []).push(index.done);
      else if (of === JOBSPEC) index.jobspecs.set(this.newSlots[index.newJobs++]!, (index.lastJobspec = index.done));
      else if (of === JOBSPEC_AGAIN) index.jobspecs.set(this.newSlots[index.newJobs++]!, index.lastJobspec);
      else if (of <= EXEC_OF) (index.execPieces[EXEC_OF - of] ??= []).push(index.done);
    }
    let eventlog = "";
    for (const p of index.pieces[slot] ?? []) eventlog += this.pieceText(p);
    const out: { jobspec?: string; eventlog: string; exec?: string } = { eventlog };
    const jobspec = index.jobspecs.get(slot);
    if (jobspec !== undefined) out.jobspec = this.pieceText(jobspec);
    const exec = index.execPieces[slot];
    if (exec !== undefined) out.exec = exec.map((p) => this.pieceText(p)).join("");
    return out;
  }

  /** The text of piece `p` (in a chunk). */
  private pieceText(p: number): string {
    const c = this.chunkOf(p);
    return this.chunks[c]!.slice(p === this.chunkFirst[c] ? 0 : this.pieceEnds.get(p - 1), this.pieceEnds.get(p));
  }

  /** The chunk holding piece `p`. */
  private chunkOf(p: number): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.chunkFirst[mid + 1]! <= p) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  // StoreBatch, for stores that read the batch itself (derived once; seals the batch).

  get newJobs(): Array<{ id: JobId; jobspec: string }> {
    const { jobspecs } = this.readText();
    this.derived.newJobs ??= this.newSlots.map((slot, k) => ({ id: this.slots[slot]!, jobspec: jobspecs[k]! }));
    return this.derived.newJobs;
  }

  get appends(): Map<JobId, string> {
    const { eventlogs } = this.readText();
    if (!this.derived.appends) {
      const m = new Map<JobId, string>();
      for (let s = 0; s < this.slots.length; s++) {
        const text = eventlogs[s];
        if (text !== undefined) m.set(this.slots[s]!, text);
      }
      this.derived.appends = m;
    }
    return this.derived.appends;
  }

  get execAppends(): Map<JobId, string> {
    const { execlogs } = this.readText();
    if (!this.derived.execAppends) {
      const m = new Map<JobId, string>();
      for (let s = 0; s < this.slots.length; s++) {
        const text = execlogs[s];
        if (text !== undefined) m.set(this.slots[s]!, text);
      }
      this.derived.execAppends = m;
    }
    return this.derived.execAppends;
  }

  get inactive(): Array<{ id: JobId; summary: string }> {
    const { summaries } = this.readText();
    this.derived.inactive ??= this.summaryIds.map((id, k) => ({ id, summary: summaries[k]! }));
    return this.derived.inactive;
  }
}

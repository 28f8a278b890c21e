/**
 * A batch's chunk strings on their way to the writer thread: encoded into one buffer that is
 * transferred, not cloned, and handed back with the writer's reply to serve a later batch.
 *
 * Why: cloning the chunks (a few strings of ~100 KB) cost the manager's thread about 6 µs a
 * job in `throughput --builtins` (~5.6 ns a character, its own CPU time read from schedstat):
 * each clone writes into a fresh serialization buffer whose pages the kernel maps anew. A
 * UTF-8 encode into a buffer that goes round between the two threads touches no new page
 * (~0.1 ns a character). An all-ASCII chunk (the usual case) goes as its bytes, and the writer
 * reads it back as Latin-1, a plain widening copy; any other as its UTF-16 code units.
 */
import { Buffer } from "node:buffer";

/** Chunk text as handed over: bytes, each chunk's end offset in them, and which are ASCII (the others UTF-16). */
export interface WireText {
  bytes: ArrayBuffer;
  ends: Int32Array;
  ascii: Uint8Array;
}

const encoder = new TextEncoder();
/** Buffers kept for reuse: a couple of batches in flight at once is the usual most. */
const KEEP = 4;
const MIN_BYTES = 1 << 16;
/**
 * Larger buffers are not kept: one exceptional batch (a restart's events for every waiting
 * job: 8 MB for 50,000) would otherwise stay resident for good. A batch that big is rare
 * enough to pay for its own buffer.
 */
const KEEP_MAX_BYTES = 4 << 20;

/** Buffers going round between the manager's thread and its writer (one pool per store). */
export class WirePool {
  private readonly free: ArrayBuffer[] = [];

  /** Encodes `chunks` into a buffer of the pool's (or a new one), to be transferred. */
  pack(chunks: readonly string[]): WireText {
    let chars = 0;
    for (const c of chunks) chars += c.length;
    let bytes = this.take(chars + (chars >> 4));
    const ends = new Int32Array(chunks.length);
    const ascii = new Uint8Array(chunks.length);
    let off = 0;
    for (let i = 0; i < chunks.length; i++) {
      const c = chunks[i]!;
      // An ASCII character is one byte: with room for one a character, the encoder stops short
      // only at the first character that is not ASCII.
      bytes = this.room(bytes, off, c.length);
      const r = encoder.encodeInto(c, new Uint8Array(bytes, off));
      if (r.read === c.length && r.written === c.length) {
        ascii[i] = 1;
        off += c.length;
      } else {
        // UTF-16 units as they are: any string survives (a lone surrogate too), not only
        // well-formed text.
        bytes = this.room(bytes, off, 2 * c.length);
        off += Buffer.from(bytes).write(c, off, "utf16le");
      }
      ends[i] = off;
    }
    return { bytes, ends, ascii };
  }

  /** A buffer back from the writer (or dropped if the pool is full). */
  give(bytes: ArrayBuffer | undefined): void {
    if (bytes !== undefined && bytes.byteLength > 0 && bytes.byteLength <= KEEP_MAX_BYTES && this.free.length < KEEP) this.free.push(bytes);
  }

  /** `bytes`, or a larger copy of its first `used` bytes, with `more` bytes free after them. */
  private room(bytes: ArrayBuffer, used: number, more: number): ArrayBuffer {
    if (used + more <= bytes.byteLength) return bytes;
    const bigger = this.take(Math.max(used + more, 2 * bytes.byteLength));
    new Uint8Array(bigger).set(new Uint8Array(bytes, 0, used));
    this.give(bytes);
    return bigger;
  }

  private take(atLeast: number): ArrayBuffer {
    const i = this.free.findIndex((b) => b.byteLength >= atLeast);
    if (i >= 0) return this.free.splice(i, 1)[0]!;
    // Dropping a smaller one keeps the pool from holding buffers no batch fits in any more.
    this.free.pop();
    let size = MIN_BYTES;
    while (size < atLeast) size *= 2;
    return new ArrayBuffer(size);
  }
}

/** The chunk strings back from their bytes (the writer's side). */
export function unpackChunks(w: WireText): string[] {
  const buf = Buffer.from(w.bytes);
  const chunks = new Array<string>(w.ends.length);
  let start = 0;
  for (let i = 0; i < w.ends.length; i++) {
    const end = w.ends[i]!;
    chunks[i] = buf.toString(w.ascii[i] === 1 ? "latin1" : "utf16le", start, end);
    start = end;
  }
  return chunks;
}

/**
 * Job ids: Flux FLUIDs (Flux Locally Unique IDs).
 *
 * A FLUID is 64 bits: a 40-bit millisecond timestamp since the generator's epoch, a 14-bit
 * generator id and a 10-bit sequence number. Ids from one generator are unique and strictly
 * increasing, so sorting by id is sorting by submit order (the queue's tie-breaker).
 *
 * Encodings (as Flux's `flux job id` understands them): f58 (`ƒ` + base58, the default for
 * display; an ASCII `f` is accepted on input), decimal, hex (`0x…`), dothex
 * (`xxxx.xxxx.xxxx.xxxx`, also with a `job.` prefix as in Flux's KVS keys) and words
 * (mnemonicode, `w-w-w--w-w-w`).
 */
import { ErrorCode, JobtapError } from "../../errors.js";
import { MNEMONIC_WORDS } from "./mnemonic-words.js";

export type JobId = bigint & { readonly __brand: "JobId" };

export const JOBID_ENCODINGS = ["f58", "dec", "hex", "dothex", "words"] as const;
export type JobIdEncoding = (typeof JOBID_ENCODINGS)[number];

const TS_BITS = 40n;
const GEN_BITS = 14n;
const SEQ_BITS = 10n;
const SEQ_MAX = 1 << Number(SEQ_BITS);
const MAX_U64 = (1n << 64n) - 1n;

const F58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const F58_PREFIX = "ƒ";
const MN_BASE = 1626n;

/** Brands a bigint as a job id after a range check (0 .. 2^64-1). */
export function asJobId(v: bigint | number): JobId {
  const b = typeof v === "number" ? BigInt(v) : v;
  if (b < 0n || b > MAX_U64) {
    throw new JobtapError(ErrorCode.BAD_JOBID, `job id ${b} is out of range (0..2^64-1)`);
  }
  return b as JobId;
}

/** The parts of a FLUID, for display and tests. */
export function fluidParts(id: JobId): { timestamp: number; generator: number; seq: number } {
  return {
    timestamp: Number(id >> (GEN_BITS + SEQ_BITS)),
    generator: Number((id >> SEQ_BITS) & ((1n << GEN_BITS) - 1n)),
    seq: Number(id & ((1n << SEQ_BITS) - 1n)),
  };
}

/**
 * A FLUID generator. One per manager instance (never module-level). Ids stay strictly
 * increasing even when the clock stands still (a simulated clock) or steps backwards: past
 * 1024 ids in one millisecond the timestamp is advanced logically instead of sleeping as
 * Flux does.
 */
export class FluidGenerator {
  private lastTs = -1;
  private seq = 0;

  /**
   * @param epochMs wall-clock ms that timestamp 0 stands for (persisted by the store)
   * @param now     a millisecond clock
   * @param generator 14-bit generator id (0 for a single instance)
   */
  constructor(
    private readonly epochMs: number,
    private readonly now: () => number,
    private readonly generator = 0,
  ) {
    if (generator < 0 || generator >= 1 << Number(GEN_BITS)) {
      throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `FLUID generator id ${generator} out of range`);
    }
  }

  /** Ensures every later id is greater than `id` (called after replaying stored jobs). */
  advancePast(id: JobId): void {
    const { timestamp, seq } = fluidParts(id);
    if (timestamp > this.lastTs || (timestamp === this.lastTs && seq >= this.seq)) {
      this.lastTs = timestamp;
      this.seq = seq + 1;
    }
  }

  /** Returns the next id; strictly greater than every id returned before. */
  next(): JobId {
    const ts = Math.max(0, Math.floor(this.now() - this.epochMs));
    if (ts > this.lastTs) {
      this.lastTs = ts;
      this.seq = 0;
    }
    if (this.seq >= SEQ_MAX) {
      this.lastTs += 1;
      this.seq = 0;
    }
    if (this.lastTs >= 2 ** Number(TS_BITS)) {
      throw new JobtapError(ErrorCode.INTERNAL, "FLUID timestamp exhausted (40 bits)");
    }
    // The timestamp and generator bits change at most once a millisecond: made once for
    // all the ids of that millisecond (each bigint operation allocates).
    if (this.baseTs !== this.lastTs) {
      this.baseTs = this.lastTs;
      this.base = (BigInt(this.lastTs) << (GEN_BITS + SEQ_BITS)) | (BigInt(this.generator) << SEQ_BITS);
    }
    const id = this.base | BigInt(this.seq);
    this.seq += 1;
    return id as JobId;
  }

  /** The id bits above the sequence number for timestamp `baseTs` (see next). */
  private base = 0n;
  private baseTs = -1;
}

function badId(input: string, why: string): JobtapError {
  return new JobtapError(ErrorCode.BAD_JOBID, `invalid job id "${input}": ${why}`, { input });
}

function encodeF58(id: bigint): string {
  if (id === 0n) return F58_PREFIX + F58_ALPHABET[0];
  let s = "";
  let v = id;
  while (v > 0n) {
    s = F58_ALPHABET[Number(v % 58n)] + s;
    v /= 58n;
  }
  return F58_PREFIX + s;
}

function decodeF58(input: string, body: string): JobId {
  if (body.length === 0) throw badId(input, "empty f58 id");
  let v = 0n;
  for (const ch of body) {
    const d = F58_ALPHABET.indexOf(ch);
    if (d < 0) throw badId(input, `'${ch}' is not an f58 digit`);
    v = v * 58n + BigInt(d);
    if (v > MAX_U64) throw badId(input, "exceeds 64 bits");
  }
  return v as JobId;
}

function encodeDothex(id: bigint): string {
  const hex = id.toString(16).padStart(16, "0");
  return `${hex.slice(0, 4)}.${hex.slice(4, 8)}.${hex.slice(8, 12)}.${hex.slice(12, 16)}`;
}

/** Words: mnemonicode over the id's 8 bytes in little-endian order, as Flux encodes them. */
function encodeWords(id: bigint): string {
  const groups: string[] = [];
  for (const half of [id & 0xffffffffn, id >> 32n]) {
    const w0 = half % MN_BASE;
    const w1 = (half / MN_BASE) % MN_BASE;
    const w2 = half / MN_BASE / MN_BASE;
    groups.push([w0, w1, w2].map((w) => MNEMONIC_WORDS[Number(w)]).join("-"));
  }
  return groups.join("--");
}

function decodeWords(input: string): JobId {
  const groups = input.toLowerCase().split("--");
  if (groups.length !== 2) throw badId(input, "words form is w-w-w--w-w-w");
  let id = 0n;
  groups.forEach((g, i) => {
    const words = g.split("-");
    if (words.length !== 3) throw badId(input, "words form is w-w-w--w-w-w");
    const [a, b, c] = words.map((w) => {
      const n = MNEMONIC_WORDS.indexOf(w);
      if (n < 0) throw badId(input, `"${w}" is not a mnemonic word`);
      return BigInt(n);
    }) as [bigint, bigint, bigint];
    const half = a + b * MN_BASE + c * MN_BASE * MN_BASE;
    if (half > 0xffffffffn) throw badId(input, "word triple exceeds 32 bits");
    id |= half << BigInt(32 * i);
  });
  return id as JobId;
}

function parseDigits(input: string, digits: string, radix: 10 | 16): JobId {
  const v = BigInt(radix === 16 ? `0x${digits}` : digits);
  if (v > MAX_U64) throw badId(input, "exceeds 64 bits");
  return v as JobId;
}

/**
 * Parses a job id in any accepted encoding (f58 with `ƒ` or `f`, decimal, `0x` hex, dothex
 * with optional `job.` prefix, words). Throws BAD_JOBID naming the input on failure.
 */
export function parseJobId(input: string | number | bigint): JobId {
  if (typeof input !== "string") return asJobId(input);
  const s = input.trim();
  if (s.startsWith(F58_PREFIX)) return decodeF58(input, s.slice(F58_PREFIX.length));
  if (/^[0-9]+$/.test(s)) return parseDigits(input, s, 10);
  if (/^0x[0-9a-fA-F]+$/.test(s)) return parseDigits(input, s.slice(2), 16);
  const dothex = /^(?:job\.)?([0-9a-fA-F]{4})\.([0-9a-fA-F]{4})\.([0-9a-fA-F]{4})\.([0-9a-fA-F]{4})$/.exec(s);
  if (dothex) return parseDigits(input, dothex.slice(1).join(""), 16);
  if (/^[a-zA-Z]+(-{1,2}[a-zA-Z]+)+$/.test(s)) return decodeWords(s);
  if (s.startsWith("f")) return decodeF58(input, s.slice(1));
  throw badId(input, "not f58, decimal, hex, dothex or words");
}

/** Formats a job id; f58 (`ƒ…`) unless another encoding is asked for. */
export function formatJobId(id: JobId, encoding: JobIdEncoding = "f58"): string {
  switch (encoding) {
    case "f58":
      return encodeF58(id);
    case "dec":
      return id.toString(10);
    case "hex":
      return `0x${id.toString(16)}`;
    case "dothex":
      return encodeDothex(id);
    case "words":
      return encodeWords(id);
  }
}

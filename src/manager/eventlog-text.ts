/**
 * Eventlog text written by hand (RFC 18 lines, and the entry inside a summary): exactly what
 * JSON.stringify writes, without its cost. A line's head (`{"timestamp":T,"name":"N"`) is
 * shared by every event of that name and millisecond, and an event's context is written
 * with the text of its deep-frozen parts remembered (contextText).
 */
import type { EventEntry } from "./port.js";
import type { PartSink } from "./store/batch-text.js";

/**
 * Line heads for one timestamp: `{"timestamp":T,"name":`, and by name the whole line of an
 * event without a context and the head (up to `"context":`) of one with. The same in every
 * job's event of that millisecond, so most lines are one or three shared strings. Bounded:
 * plugins name events too.
 */
interface Heads {
  timestamp: number;
  text: string;
  bare: Map<string, string>;
  withContext: Map<string, string>;
  /** Whole entries without a context and without the line's newline (entryParts). */
  bareEntry: Map<string, string>;
}
const NAMES_MAX = 256;
const newHeads = (): Heads => ({ timestamp: NaN, text: "", bare: new Map(), withContext: new Map(), bareEntry: new Map() });
/**
 * Heads for the last two timestamps seen: events come in runs sharing a millisecond, and
 * formatting the number is most of a line's cost; two, because runs alternate between two
 * (a job's `validate`, stamped when it was accepted and written once the batch is durable,
 * then its `depend` and `priority`, stamped now; job after job).
 */
let heads = newHeads();
let otherHeads = newHeads();

/** The heads for `timestamp`, made current (the older of the two is reused for a new one). */
function headsFor(timestamp: number): Heads {
  if (heads.timestamp === timestamp) return heads;
  const h = otherHeads;
  otherHeads = heads;
  heads = h;
  if (h.timestamp !== timestamp) {
    h.timestamp = timestamp;
    h.text = `{"timestamp":${timestamp},"name":`;
    h.bare.clear();
    h.withContext.clear();
    h.bareEntry.clear();
  }
  return h;
}

/**
 * The parts of one RFC 18 eventlog line, appended to `out` (the line is their concatenation);
 * returns the line's length. Built by hand around the context (names are plain words, so
 * quoting them is enough); values JSON cannot carry (bigint) are written as strings. Parts,
 * not one string: the store batch joins them with the rest of its text in one copy
 * (batch-text.ts) instead of building a tree of small strings per line.
 */
export function eventLineParts(e: EventEntry, out: PartSink): number {
  const h = headsFor(e.timestamp);
  if (e.context === undefined) {
    const line = cachedHead(h, h.bare, e.name, "}\n");
    out.push(line);
    return line.length;
  }
  const head = cachedHead(h, h.withContext, e.name, ',"context":');
  const ctx = contextText(e.context);
  out.push(head);
  out.push(ctx);
  out.push("}\n");
  return head.length + ctx.length + 2;
}

/**
 * The parts of `JSON.stringify(e)` for an entry (its line without the newline: the end event
 * inside a summary), appended to `out`; returns their length. Bigints as strings, as in lines.
 */
export function entryParts(e: EventEntry, out: PartSink): number {
  const h = headsFor(e.timestamp);
  if (e.context === undefined) {
    const whole = cachedHead(h, h.bareEntry, e.name, "}");
    out.push(whole);
    return whole.length;
  }
  const head = cachedHead(h, h.withContext, e.name, ',"context":');
  const ctx = contextText(e.context);
  out.push(head);
  out.push(ctx);
  out.push("}");
  return head.length + ctx.length + 1;
}

/**
 * The JSON text of an event's context (bigints as strings), as JSON.stringify would write
 * it. Contexts are small plain data, often holding objects the manager shares between jobs
 * frozen (R's `R_lite` and `nodelist`, the final `release`'s context, one user's `submit`
 * context): written here (plainText) with the text of each deep-frozen object remembered,
 * about a tenth of JSON.stringify's time for an `alloc` context; anything else (a class
 * instance, toJSON, a cycle) goes to JSON.stringify.
 */
function contextText(context: Record<string, unknown>): string {
  let text: string | undefined;
  try {
    text = plainText(context);
  } catch {
    text = undefined; // too deep, or a cycle: JSON.stringify says what
  }
  if (text !== undefined) return text;
  try {
    return JSON.stringify(context);
  } catch {
    return JSON.stringify(context, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
  }
}

/** The text of deep-frozen objects met in contexts (see contextText). */
const frozenText = new WeakMap<object, string>();
/** Objects met that are not frozen: counted, so a frozen object knows whether all of it is. */
let thawed = 0;
/** Quoted object keys (contexts use a handful of words). */
const quotedKeys = new Map<string, string>();
const hasOwn = Object.prototype.hasOwnProperty;

/** JSON text of plain data (plain objects, arrays, primitives); undefined for anything else. */
function plainText(v: unknown): string | undefined {
  switch (typeof v) {
    case "string":
      return JSON.stringify(v);
    case "number":
      return Number.isFinite(v) ? String(v) : "null";
    case "boolean":
      return v ? "true" : "false";
    case "bigint":
      return JSON.stringify(v.toString());
    case "object":
      if (v === null) return "null";
      break;
    default:
      return undefined;
  }
  const frozen = Object.isFrozen(v);
  if (frozen) {
    const known = frozenText.get(v);
    if (known !== undefined) return known;
  } else thawed++;
  const before = thawed;
  let text: string;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype || hasOwn.call(v, "toJSON")) return undefined;
    text = "[";
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      const t = x === undefined || typeof x === "function" || typeof x === "symbol" ? "null" : plainText(x);
      if (t === undefined) return undefined;
      text += i === 0 ? t : "," + t;
    }
    text += "]";
  } else {
    if (Object.getPrototypeOf(v) !== Object.prototype) return undefined;
    const o = v as Record<string, unknown>;
    text = "{";
    for (const k in o) {
      if (!hasOwn.call(o, k)) continue;
      if (k === "toJSON") return undefined;
      const x = o[k];
      if (x === undefined || typeof x === "function" || typeof x === "symbol") continue;
      const t = plainText(x);
      if (t === undefined) return undefined;
      text += (text.length === 1 ? "" : ",") + quotedKey(k) + ":" + t;
    }
    text += "}";
  }
  if (frozen && thawed === before && !hasGetter(v)) frozenText.set(v, text);
  return text;
}

/** A getter's value may change even on a frozen object: such an object's text is not kept. */
function hasGetter(o: object): boolean {
  const d = Object.getOwnPropertyDescriptors(o);
  for (const k in d) if (d[k]!.get !== undefined) return true;
  return false;
}

function quotedKey(k: string): string {
  let q = quotedKeys.get(k);
  if (q === undefined) {
    q = JSON.stringify(k);
    if (quotedKeys.size < NAMES_MAX) quotedKeys.set(k, q);
  }
  return q;
}

/** The head of `h`, the quoted name and `tail`, as one flat string (kept in `cache`, one of h's maps). */
function cachedHead(h: Heads, cache: Map<string, string>, name: string, tail: string): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = [h.text, JSON.stringify(name), tail].join("");
    if (cache.size < NAMES_MAX) cache.set(name, text);
  }
  return text;
}

/** eventLine's parts (reused: a line is joined before the next one is made). */
const lineParts: string[] = [];

/** One RFC 18 eventlog line (eventLineParts, joined). */
export function eventLine(e: EventEntry): string {
  lineParts.length = 0;
  eventLineParts(e, lineParts);
  return lineParts.length === 1 ? lineParts[0]! : lineParts.join("");
}

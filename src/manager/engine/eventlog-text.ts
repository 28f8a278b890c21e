/**
 * Eventlog text written by hand (RFC 18 lines, and the entry inside a summary): exactly what
 * JSON.stringify writes, without its cost. A line's head (`{"timestamp":T,"name":"N"`) is
 * shared by every event of that name and millisecond, and an event's context is written
 * with the text of its deep-frozen parts remembered (contextParts).
 */
import type { EventEntry } from "../port/records.js";
import type { PartSink } from "../store/batch-text.js";

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
  return contextParts(e.context, cachedHead(h, h.withContext, e.name, ',"context":'), "}\n", out);
}

/**
 * The parts of `JSON.stringify(e)` for an entry (its line without the newline: the end event
 * inside a summary) followed by `after` ("}}": the entry's closing brace and its container's),
 * appended to `out`; returns their length. Bigints as strings, as in lines.
 */
export function entryParts(e: EventEntry, out: PartSink, after: "}}"): number {
  const h = headsFor(e.timestamp);
  if (e.context === undefined) {
    const whole = cachedHead(h, h.bareEntry, e.name, after);
    out.push(whole);
    return whole.length;
  }
  return contextParts(e.context, cachedHead(h, h.withContext, e.name, ',"context":'), after, out);
}

/**
 * Pushes `head`, the parts of an event context's JSON text (bigints as strings) as
 * JSON.stringify would write it, and `tail` to `out`; returns their length. Contexts are
 * small plain data, often holding objects the manager shares between jobs frozen (R's
 * `R_lite` and `nodelist`, the final `release`'s context, one user's `submit` context):
 * written here (plainParts) as parts, with the text of each deep-frozen object remembered,
 * in about a tenth of JSON.stringify's time for an `alloc` context and with no string per
 * context; anything else (a class instance, toJSON, a cycle) goes to JSON.stringify.
 */
function contextParts(context: Record<string, unknown>, head: string, tail: string, out: PartSink): number {
  // The context is read (a getter may run, and write an event of its own) before anything
  // is pushed; the scratch is this function's alone: a call re-entering gets JSON.stringify.
  if (!writing) {
    writing = true;
    let plain = false;
    try {
      plain = plainParts(context);
    } catch {
      plain = false; // too deep, or a cycle: JSON.stringify says what
    } finally {
      writing = false;
    }
    let n = head.length + tail.length;
    if (plain) {
      out.push(head);
      // The context's closing brace and the tail go as one constant (a part fewer).
      const last = scratch[scratchN - 1] === "}" ? scratchN - 1 : scratchN;
      for (let i = 0; i < last; i++) {
        const part = scratch[i]!;
        out.push(part);
        n += part.length;
      }
      if (last === scratchN) out.push(tail);
      else {
        out.push(tail === "}\n" ? "}}\n" : tail === "}}" ? "}}}" : `}${tail}`);
        n += 1;
      }
    }
    scratch.fill("", 0, scratchN);
    scratchN = 0;
    if (plain) return n;
  }
  let text: string;
  try {
    text = JSON.stringify(context);
  } catch {
    text = JSON.stringify(context, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
  }
  out.push(head);
  out.push(text);
  out.push(tail);
  return head.length + text.length + tail.length;
}

/**
 * Where plainParts puts a context's parts (reused; blanked after each context), so that a
 * context that turns out not to be plain data leaves nothing in the caller's sink.
 */
const scratch: string[] = [];
let scratchN = 0;
let writing = false;
const put = (part: string): void => {
  scratch[scratchN++] = part;
};

/** The text of deep-frozen objects met in contexts (see contextParts). */
const frozenText = new WeakMap<object, string>();
/** Objects met that are not frozen: counted, so a frozen object knows whether all of it is. */
let thawed = 0;
const hasOwn = Object.prototype.hasOwnProperty;

/** Puts the parts of plain data's JSON text (plain objects, arrays, primitives); false for anything else. */
function plainParts(v: unknown): boolean {
  switch (typeof v) {
    case "string":
      put(JSON.stringify(v));
      return true;
    case "number":
      put(Number.isFinite(v) ? String(v) : "null");
      return true;
    case "boolean":
      put(v ? "true" : "false");
      return true;
    case "bigint":
      put(JSON.stringify(v.toString()));
      return true;
    case "object":
      if (v === null) {
        put("null");
        return true;
      }
      break;
    default:
      return false;
  }
  if (!Object.isFrozen(v)) {
    thawed++;
    return walk(v);
  }
  const known = frozenText.get(v);
  if (known !== undefined) {
    put(known);
    return true;
  }
  // A frozen object's text is made one string (from its parts), kept if all of it is frozen.
  const mark = scratchN;
  const before = thawed;
  if (!walk(v)) return false;
  const text = scratch.slice(mark, scratchN).join("");
  scratch.fill("", mark, scratchN);
  scratchN = mark;
  put(text);
  if (thawed === before) {
    // A getter's value may change: neither this object's text nor its containers' is kept.
    if (hasGetter(v)) thawed++;
    else frozenText.set(v, text);
  }
  return true;
}

/** plainParts of an object or array. */
function walk(v: object): boolean {
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype || hasOwn.call(v, "toJSON")) return false;
    if (v.length === 0) {
      put("[]");
      return true;
    }
    for (let i = 0; i < v.length; i++) {
      put(i === 0 ? "[" : ",");
      const x: unknown = v[i];
      if (x === undefined || typeof x === "function" || typeof x === "symbol") put("null");
      else if (!plainParts(x)) return false;
    }
    put("]");
    return true;
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return false;
  const o = v as Record<string, unknown>;
  let first = true;
  for (const k in o) {
    if (!hasOwn.call(o, k)) continue;
    if (k === "toJSON") return false;
    const x = o[k];
    if (x === undefined || typeof x === "function" || typeof x === "symbol") continue;
    put(keyPart(k, first));
    first = false;
    if (!plainParts(x)) return false;
  }
  put(first ? "{}" : "}");
  return true;
}

/** A getter's value may change even on a frozen object: such an object's text is not kept. */
function hasGetter(o: object): boolean {
  const d = Object.getOwnPropertyDescriptors(o);
  for (const k in d) if (d[k]!.get !== undefined) return true;
  return false;
}

/** Object keys as written, `{"k":` first and `,"k":` after (contexts use a handful of words). */
const firstKeys = new Map<string, string>();
const nextKeys = new Map<string, string>();

function keyPart(k: string, first: boolean): string {
  const cache = first ? firstKeys : nextKeys;
  let part = cache.get(k);
  if (part === undefined) {
    part = `${first ? "{" : ","}${JSON.stringify(k)}:`;
    if (cache.size < NAMES_MAX) cache.set(k, part);
  }
  return part;
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

/** One RFC 18 eventlog line (eventLineParts, joined). */
export function eventLine(e: EventEntry): string {
  const parts: string[] = [];
  eventLineParts(e, parts);
  return parts.length === 1 ? parts[0]! : parts.join("");
}

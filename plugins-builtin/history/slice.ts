/**
 * Python slice notation (`[start:stop:step]`, each part optional, negatives count from the
 * end), which Flux's history service accepts to page through a user's job list.
 */

/** Parses `"[a:b:c]"` (brackets optional); undefined if malformed. */
export function parseSlice(text: string): { start?: number; stop?: number; step?: number } | undefined {
  const m = /^\s*\[?\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*)?)?\]?\s*$/.exec(text);
  if (m === null) return undefined;
  const [, a, b, c] = m;
  const out: { start?: number; stop?: number; step?: number } = {};
  if (a !== undefined) out.start = Number(a);
  if (b !== undefined) out.stop = Number(b);
  if (c !== undefined) out.step = Number(c);
  if (out.step === 0) return undefined;
  // "[3]" alone (no colon) is an index in Python; treat it as a one-element slice.
  if (!text.includes(":") && a !== undefined) out.stop = out.start! === -1 ? undefined : out.start! + 1;
  return out;
}

/** Applies a parsed slice to a list, with Python's clamping rules. */
export function applySlice<T>(list: readonly T[], s: { start?: number; stop?: number; step?: number }): T[] {
  const n = list.length;
  const step = s.step ?? 1;
  const norm = (v: number | undefined, dflt: number, lo: number, hi: number) =>
    v === undefined ? dflt : Math.min(hi, Math.max(lo, v < 0 ? v + n : v));
  const out: T[] = [];
  if (step > 0) {
    const start = norm(s.start, 0, 0, n);
    const stop = norm(s.stop, n, 0, n);
    for (let i = start; i < stop; i += step) out.push(list[i]!);
  } else {
    const start = norm(s.start, n - 1, -1, n - 1);
    const stop = norm(s.stop, -1, -1, n - 1);
    for (let i = start; i > stop; i += step) out.push(list[i]!);
  }
  return out;
}

/** Number helpers shared by the eventlog fold (core/transition.ts) and the inactive cache (engine/inactive.ts). */

/**
 * `n` as V8's small integer where it is one. A number read from a typed array of doubles, or
 * from an object whose shape V8 keeps as a double (every `{priority}` object shares one
 * shape, plugins' OUT included), is a boxed double even when whole; stored as is into a
 * field that held only small integers, it gives every object of that shape (job records,
 * and through shared key prefixes job args) a new one, and the code made for the old shape
 * is thrown away: a burst of deoptimizations, seen at the start of the bench's second round.
 */
export function smallInt(n: number): number {
  return n >= -0x40000000 && n < 0x40000000 && Number.isInteger(n) ? n | 0 : n;
}

/**
 * RFC 22 idsets ("0-3,7"), used for core and gpu ids in R_lite and for release ranks.
 */
import { ErrorCode, JobtapError } from "../../errors.js";

/** Formats sorted, distinct non-negative integers as an idset string ("" when empty). */
export function formatIdset(ids: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < ids.length; ) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j]! + 1) j++;
    parts.push(i === j ? `${ids[i]}` : `${ids[i]}-${ids[j]}`);
    i = j + 1;
  }
  return parts.join(",");
}

/** Parses an idset string into sorted ids. Throws INVALID_ARGUMENT naming the input. */
export function parseIdset(s: string): number[] {
  if (s.trim() === "") return [];
  const out = new Set<number>();
  for (const part of s.replace(/^\[|\]$/g, "").split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `invalid idset "${s}" at "${part}"`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `invalid idset "${s}": ${lo} > ${hi}`);
    for (let i = lo; i <= hi; i++) out.add(i);
  }
  return [...out].sort((a, b) => a - b);
}

/**
 * RFC 22 idsets as the CLI reads them: "3", "1-10000", "0,2-4,7". Used by `submit --cc`.
 */
import { usage } from "./args.js";

/** The largest idset `--cc` accepts: more is almost surely a typo. */
export const IDSET_MAX = 1_000_000;

/** Expands an idset into ascending unique integers; USAGE error naming the bad part. */
export function parseIdset(text: string, what = "idset"): number[] {
  const body = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (body.trim() === "") throw usage(`${what}: empty idset`);
  const ids = new Set<number>();
  for (const part of body.split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw usage(`${what}: "${part}" is not an id or a range like 1-10`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo) throw usage(`${what}: range "${part}" runs backwards`);
    if (ids.size + (hi - lo + 1) > IDSET_MAX) throw usage(`${what}: more than ${IDSET_MAX} ids`);
    for (let id = lo; id <= hi; id++) ids.add(id);
  }
  return [...ids].sort((a, b) => a - b);
}

/**
 * HTCondor's logical-line reader, shared by the config reader and the transform parser.
 *
 * Every physical line is trimmed at both ends. A line ending in `\` is joined with the next
 * one, the backslash removed and NO separator inserted (so `A = x \` + `y` gives `x y` only
 * because of the space before the backslash). A `#` line that starts a logical line is a
 * comment and never continues, even if it ends in `\`. A `#` line met inside a continuation
 * contributes nothing; if it ends in `\` the continuation goes on, otherwise the logical
 * line ends there (HTCondor keeps the last character of such a line; we drop it — see
 * docs/condor.md).
 */

/** One logical line: its text and the 1-based physical line it started on. */
export interface LogicalLine {
  text: string;
  line: number;
}

/** True for the whitespace HTCondor trims. NBSP is included: rendered docs are full of it. */
function isSpace(ch: string): boolean {
  return ch === " " || ch === "\t" || ch === "\r" || ch === "\f" || ch === "\v" || ch === "\u00a0";
}

/** Trims HTCondor whitespace (and NBSP) from both ends of `s`. */
export function trimSpace(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isSpace(s[start]!)) start++;
  while (end > start && isSpace(s[end - 1]!)) end--;
  return s.slice(start, end);
}

/**
 * Splits `text` into logical lines. Blank lines and comment lines are returned too (as
 * their trimmed text), so that callers can count or drop them as their syntax requires.
 */
export function readLogicalLines(text: string): LogicalLine[] {
  const physical = text.split("\n");
  const out: LogicalLine[] = [];
  let pending: LogicalLine | undefined;
  for (let i = 0; i < physical.length; i++) {
    // A final empty string after a trailing newline is not a line of its own.
    if (i === physical.length - 1 && physical[i] === "" && pending === undefined) break;
    let piece = trimSpace(physical[i]!);
    const inContinuation = pending !== undefined;
    const isComment = piece.startsWith("#");
    if (isComment && inContinuation) piece = piece.endsWith("\\") ? "\\" : "";
    const continues = piece.endsWith("\\") && !(isComment && !inContinuation);
    if (continues) piece = piece.slice(0, -1);
    if (pending === undefined) pending = { text: piece, line: i + 1 };
    else pending.text += piece;
    if (!continues) {
      out.push(pending);
      pending = undefined;
    }
  }
  if (pending !== undefined) out.push(pending);
  return out;
}

/**
 * "Did you mean ...?" for configuration keys and table names: the closest known name, if it
 * is close enough to be a slip (an underscore for a dash, a letter missing or swapped).
 */

/** The known name `word` most likely stands for, or undefined if none is close. */
export function closest(word: string, known: readonly string[]): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/_/g, "-");
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const d = distance(norm(word), norm(name));
    if (best === undefined || d < best.d) best = { name, d };
  }
  if (best === undefined) return undefined;
  const allowed = Math.max(1, Math.min(3, Math.floor(best.name.length / 3)));
  return best.d <= allowed ? best.name : undefined;
}

/** Optimal string alignment distance: edits, with a swap of neighbours counting as one. */
function distance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    rows.push([i]);
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        (rows[0] as number[])[j] = j;
        continue;
      }
      const row = rows[i] as number[];
      const up = rows[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (rows[i - 2]![j - 2] as number) + 1);
      row[j] = d;
    }
  }
  return rows[a.length]![b.length] as number;
}

/**
 * Who wants to know how long hook programs ran (the dashboard's hook latency chart): every
 * HookRunner in this thread reports each finished run here. One listener call per run; with
 * no listener, one empty loop. Runs in an isolated plugin's worker thread are not seen.
 */

type Listener = (durationMs: number) => void;

const listeners = new Set<Listener>();

/** Calls `fn` with the duration of every hook run that ends in this thread; returns the stop. */
export function onHookRun(fn: Listener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Reports one finished run (runner.ts). */
export function hookRan(durationMs: number): void {
  for (const fn of listeners) fn(durationMs);
}

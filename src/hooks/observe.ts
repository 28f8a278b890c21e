/**
 * Who wants to know how hook programs ended (the dashboard's hook latency chart, /metrics'
 * hook series): every HookRunner in this thread reports each finished run here. One
 * listener call per run; with no listener, one empty loop. Runs in an isolated plugin's
 * worker thread are not seen.
 */

/** One hook run that ended (a cancelled one, which never started, is not reported). */
export interface HookRunReport {
  /** How long the program ran (0 when it never started: `ran` false). */
  durationMs: number;
  /** The runner's `plugin` option ("" when not given). */
  plugin: string;
  /** The spec's `hookType` ("" when not given). */
  hookType: string;
  /** A program ran (it exited or was signaled); false: its path was refused or the spawn failed. */
  ran: boolean;
  /** Refused, not started, exited non-zero, killed, or timed out; a run aborted by its caller is not a failure. */
  failed: boolean;
}

type Listener = (run: HookRunReport) => void;

const listeners = new Set<Listener>();

/** Calls `fn` with the report of every hook run that ends in this thread; returns the stop. */
export function onHookRun(fn: Listener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Reports one finished run (runner.ts). */
export function hookRan(run: HookRunReport): void {
  for (const fn of listeners) fn(run);
}

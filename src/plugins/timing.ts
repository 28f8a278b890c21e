/**
 * Handler timing for the metrics and the dashboard, kept off the stack call's cost: every
 * handler call is counted in its (plugin, topic) cell, which the stack entry keeps (no
 * lookup per call), and one stack call of a topic in SAMPLE_EVERY is timed, with one clock
 * read before the chain and one after each handler (a handler's end is the next one's
 * start). Per-call listeners (the dashboard's statistics) get the timed calls.
 *
 * Why a sample: a clock read costs 25-60 ns here and a job makes 17 handler calls in 9
 * stack calls with the builtins; timing every one cost 3-5% of a job's manager CPU (bench
 * http, throughput_metrics_ratio), past issue 37's budget of 3%.
 */
import type { PluginRecord } from "./record.js";

/** One stack call of a topic in this many is timed (the first is). */
export const SAMPLE_EVERY = 16;

/** Receives one handler call's plugin, topic, elapsed ms and whether it failed (error or deadline). */
export type HandlerTiming = (plugin: PluginRecord, topic: string, ms: number, failed: boolean) => void;

/** Where one (plugin, topic)'s calls go (the metrics' histogram slot). */
export interface TimeCell {
  /** Every call, timed or not. */
  count(failed: boolean): void;
  /** A timed call's elapsed milliseconds (a sample of the calls). */
  observe(ms: number): void;
}

/** Gives the cell of a (plugin, topic); asked once per stack entry. */
export type CellOf = (plugin: PluginRecord, topic: string) => TimeCell;

/** Who gets handler times: cells kept on the stack entries, and per-call listeners. */
export interface HandlerTimes {
  readonly cellOf: CellOf | undefined;
  readonly each: HandlerTiming | undefined;
}

/** What a timed entry needs: its plugin and the cell it keeps. */
interface TimedEntry {
  readonly plugin: PluginRecord;
  cell?: TimeCell | undefined;
}

/** A topic's sampling countdown, kept on its cached handler list. */
export interface Sampled {
  untimed?: number;
}

/** The start of a stack call's timing: a clock read (ms) if this call is timed, else 0. */
export function startTiming(to: Sampled): number {
  const left = to.untimed ?? 0;
  if (left > 0) {
    to.untimed = left - 1;
    return 0;
  }
  to.untimed = SAMPLE_EVERY - 1;
  return performance.now();
}

/**
 * Ends a handler call: counted in its cell, and if it was timed (started at `t0` > 0) its
 * elapsed time goes to the cell and the listeners. Returns the clock read (the next
 * handler's start in a synchronous chain), or 0 for an untimed call.
 */
export function ended(timing: HandlerTimes, entry: TimedEntry, topic: string, t0: number, failed: boolean): number {
  const cellOf = timing.cellOf;
  const cell = cellOf === undefined ? undefined : (entry.cell ??= cellOf(entry.plugin, topic));
  cell?.count(failed);
  if (t0 === 0) return 0;
  const t1 = performance.now();
  const ms = t1 - t0;
  cell?.observe(ms);
  timing.each?.(entry.plugin, topic, ms, failed);
  return t1;
}

/** One cell that passes each call to several (several providers at once). */
export function bothCells(cells: TimeCell[]): TimeCell {
  return {
    count(failed) {
      for (const c of cells) c.count(failed);
    },
    observe(ms) {
      for (const c of cells) c.observe(ms);
    },
  };
}

/**
 * Time for the job manager. Every timer the manager, scheduler and executors use goes
 * through a Clock instance, so tests drive time with a SimulatedClock and never sleep.
 */

/** An opaque timer handle. */
export type TimerHandle = { readonly __timer: true };

export interface Clock {
  /** Milliseconds since the Unix epoch (fractional allowed). */
  now(): number;
  /** Runs `fn` after `ms` milliseconds (0: as soon as possible, after the current task). */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(h: TimerHandle): void;
}

/** The real clock: Date.now and Node timers; zero-delay timers use setImmediate. */
export class RealClock implements Clock {
  now(): number {
    return Date.now();
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    if (ms <= 0) {
      const h = setImmediate(fn);
      return { kind: "immediate", h } as unknown as TimerHandle;
    }
    const h = setTimeout(fn, ms);
    return { kind: "timeout", h } as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle): void {
    const t = handle as unknown as { kind: string; h: NodeJS.Immediate & NodeJS.Timeout };
    if (t.kind === "immediate") clearImmediate(t.h);
    else clearTimeout(t.h);
  }
}

interface SimTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A simulated clock. Time moves only in `advance(ms)`, which fires due timers in (time,
 * creation) order, letting promise callbacks run between timers so async work that a timer
 * starts can schedule follow-up timers inside the same advance.
 */
export class SimulatedClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: SimTimer[] = [];

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: SimTimer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return timer as unknown as TimerHandle;
  }

  clearTimeout(h: TimerHandle): void {
    (h as unknown as SimTimer).cancelled = true;
  }

  /** Number of timers not yet fired or cancelled. */
  pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  async advance(ms = 0): Promise<void> {
    const end = this.t + ms;
    await flushMicrotasks();
    for (;;) {
      const next = this.nextDue(end);
      if (!next) break;
      this.t = Math.max(this.t, next.at);
      next.cancelled = true;
      next.fn();
      await flushMicrotasks();
    }
    this.t = end;
    this.timers = this.timers.filter((t) => !t.cancelled);
  }

  private nextDue(end: number): SimTimer | undefined {
    let best: SimTimer | undefined;
    for (const t of this.timers) {
      if (t.cancelled || t.at > end) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}

/** Lets pending promise reactions (and a few rounds of their follow-ups) run. */
async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
  await new Promise<void>((r) => setImmediate(r));
}

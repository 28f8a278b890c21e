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
  /**
   * Real asynchronous work that takes no time on this clock (a store write in another
   * thread): a simulated clock's `advance` waits for it before firing the next timer, so a
   * test sees the same order of events as with a synchronous store. Real clocks omit it.
   */
  waitFor?(work: Promise<unknown>): void;
}

/**
 * The longest delay one Node timer can hold: Node stores delays in a signed 32-bit int and
 * fires a longer one at once (TimeoutOverflowWarning), so longer delays are chained.
 */
export const MAX_NODE_TIMER_MS = 2 ** 31 - 1;

/**
 * A delayed real timer's handle: the Node timer currently armed (replaced as a long delay
 * chains). A zero-delay timer's handle is Node's Immediate itself (no wrapper: the
 * scheduler's pass and the test executor's zero-length runs make one or two per job).
 */
class RealTimer {
  h: NodeJS.Timeout | undefined = undefined;
}

/**
 * The real clock: Date.now and Node timers; zero-delay timers use setImmediate. Any delay
 * works, however long: one past Node's 32-bit limit (about 24.8 days) is slept in pieces
 * against the wall clock; an infinite one never fires.
 */
export class RealClock implements Clock {
  now(): number {
    return Date.now();
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    if (!(ms > 0)) return setImmediate(fn) as unknown as TimerHandle;
    const t = new RealTimer();
    const due = Date.now() + ms;
    const arm = (left: number) => {
      if (left === Infinity) return; // never due: nothing to arm
      if (left <= MAX_NODE_TIMER_MS) {
        t.h = setTimeout(fn, Math.max(1, left));
        return;
      }
      t.h = setTimeout(() => arm(due - Date.now()), MAX_NODE_TIMER_MS);
    };
    arm(ms);
    return t as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle): void {
    if (!(handle instanceof RealTimer)) {
      clearImmediate(handle as unknown as NodeJS.Immediate);
      return;
    }
    if (handle.h === undefined) return;
    clearTimeout(handle.h);
    handle.h = undefined;
  }
}

interface SimTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

const before = (a: SimTimer, b: SimTimer) => a.at < b.at || (a.at === b.at && a.seq < b.seq);

/**
 * A simulated clock. Time moves only in `advance(ms)`, which fires due timers in (time,
 * creation) order, letting promise callbacks run between timers so async work that a timer
 * starts can schedule follow-up timers inside the same advance. Timers live in a binary
 * heap, so thousands of pending timers stay cheap.
 */
export class SimulatedClock implements Clock {
  private t: number;
  private seq = 0;
  private heap: SimTimer[] = [];
  private live = 0;
  /** Real work `advance` waits for (waitFor). */
  private readonly work = new Set<Promise<unknown>>();

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: SimTimer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.push(timer);
    this.live++;
    return timer as unknown as TimerHandle;
  }

  clearTimeout(h: TimerHandle): void {
    const t = h as unknown as SimTimer;
    if (!t.cancelled) {
      t.cancelled = true;
      this.live--;
    }
  }

  waitFor(work: Promise<unknown>): void {
    const w: Promise<unknown> = work.then(
      () => this.work.delete(w),
      () => this.work.delete(w),
    );
    this.work.add(w);
  }

  /** Number of timers not yet fired or cancelled. */
  pending(): number {
    return this.live;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  async advance(ms = 0): Promise<void> {
    const end = this.t + ms;
    await this.settle();
    for (let fired = 0; ; fired++) {
      if (fired > 1_000_000) throw new Error(`SimulatedClock: runaway timers (over a million fired in one advance)`);
      const next = this.heap[0];
      if (!next || next.at > end) break;
      this.pop();
      if (next.cancelled) continue;
      next.cancelled = true;
      this.live--;
      this.t = Math.max(this.t, next.at);
      next.fn();
      await this.settle();
    }
    this.t = end;
    await new Promise<void>((r) => setImmediate(r));
  }

  /** Promise reactions, and the real work they wait on, with theirs. */
  private async settle(): Promise<void> {
    await flushMicrotasks();
    while (this.work.size > 0) {
      await Promise.all(this.work);
      await flushMicrotasks();
    }
  }

  private push(t: SimTimer): void {
    const h = this.heap;
    h.push(t);
    for (let i = h.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (!before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && before(h[l]!, h[m]!)) m = l;
      if (r < h.length && before(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}

/** Lets pending promise reactions (and a few rounds of their follow-ups) run. */
async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

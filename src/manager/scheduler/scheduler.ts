/**
 * The builtin scheduler over the local resource pool, in the spirit of Flux's sched-simple:
 * pending jobs are considered in queue order (priority descending, then id ascending), each
 * gets the lowest-numbered free cores/gpus it asks for, and a job that does not fit blocks
 * the ones behind it unless `queueDepth` allows looking further down the queue.
 *
 * The pool is carved into static slots (slots.ts; default: one slot with everything). A job
 * is allocated inside one slot: the one it names (`request.slot`), else the first, in SlotID
 * order, where it fits now. The scheduler keeps each slot's use for its slot ad.
 *
 * It never posts events itself: it reports decisions through callbacks, and the manager
 * turns them into `alloc` events or `alloc` exceptions.
 */
import { hostname } from "node:os";
import type { Clock, TimerHandle } from "../base/clock.js";
import type { JobId } from "../base/ids.js";
import { formatIdset, parseIdset } from "../base/idset.js";
import { SECONDS_BUCKETS, Tally, type PassStats } from "../base/tally.js";
import type { ResourceRequest } from "../core/jobspec.js";
import { carveSlots, describeSlots, type ResourcePool, type Slot } from "./slots.js";

export interface SchedRequest {
  id: JobId;
  priority: number;
  request: ResourceRequest;
  /** Seconds; 0 = unlimited. Becomes R's expiration. */
  duration: number;
  /** The caller's own record of the job, handed to the matcher (no lookup by id per pass). */
  ref?: object | undefined;
}

export interface SchedulerHooks {
  /** Resources were allocated: the manager posts `alloc` with this R. */
  alloc(id: JobId, R: Record<string, unknown>): void;
  /** The request can never be satisfied by this pool: the manager raises an alloc exception. */
  unsatisfiable(id: JobId, why: string): void;
}

/**
 * The matchmaker the scheduler consults (HTCondor's negotiator, one pass at a time). A pass
 * calls `beginPass` once, then `candidates` for each job it looks at. The scheduler itself
 * keeps when a pass passed a job over (`rejectedAt`: LastRejMatchTime; a placed job's
 * LastMatchTime is its `alloc` event's time).
 */
export interface Matcher {
  /** True when some slot's policy is not the constant `true` (START, Requirements, Rank). */
  readonly slotsConstrained: boolean;
  /** A pass begins at clock ms `now`: slot ads and memos are taken afresh. */
  beginPass(now: number): void;
  /**
   * The slot indices (into the slot list) whose policy and the job's both match, best first
   * (job Rank, then slot Rank, then slot order); undefined: every slot, in slot order.
   */
  candidates(id: JobId, ref: object | undefined): readonly number[] | undefined;
}

/**
 * A queued alloc request, handed back by `enqueue`: the caller keeps it (ActiveJob.schedEntry)
 * to withdraw or reprioritize it, so the scheduler keeps no map of queued jobs. `live` is
 * false once the request left the queue (allocated or withdrawn).
 */
export interface QueueEntry extends Readonly<SchedRequest> {
  readonly live: boolean;
}

/** The scheduler's own view of an entry (only it clears `live` or moves `priority`). */
interface Entry extends SchedRequest {
  live: boolean;
  /** Enqueue order: a sweep covers the entries queued before its pass began. */
  readonly seq: number;
  /** Clock seconds a matching pass last passed the entry over (-1: never), sweeps aside
   *  while it is live (see `rejectedAt`), them included once it is not. */
  rejected: number;
}

/**
 * A matching pass that passed over every live entry queued before it began (`seq` below
 * this one's), at clock second `at`: when the pool filled, the rest of the queue was not
 * walked one entry at a time.
 */
interface Sweep {
  readonly seq: number;
  readonly at: number;
}

interface Allocation {
  readonly cores: readonly number[];
  readonly gpus: readonly number[];
  memory: number;
  /** Index into the slot list. */
  slot: number;
}

/** A slot and its current use. */
interface SlotState {
  readonly slot: Slot;
  /** No free core/gpu of the slot below these indices (search hints). */
  coreHint: number;
  gpuHint: number;
  memoryFree: number;
  /** Jobs allocated inside the slot (which ones: `allocs`, in allocation order). */
  jobs: number;
  /** Clock ms when the slot last went from idle to busy or back. */
  since: number;
}

/** A slot's use, as its slot ad shows it. */
export interface SlotUse {
  readonly slot: Slot;
  /** Jobs allocated inside the slot. */
  readonly jobs: readonly JobId[];
  readonly coresUsed: number;
  readonly gpusUsed: number;
  readonly memoryUsed: number;
  /** Clock ms when the slot last went from idle to busy or back. */
  readonly since: number;
}

/** Queue order: priority descending, then id ascending (submit order). */
export function queueBefore(a: { priority: number; id: JobId }, b: { priority: number; id: JobId }): boolean {
  return a.priority !== b.priority ? a.priority > b.priority : a.id < b.id;
}

/** The local pool and its alloc queue, served first-come in queue order (sched-simple). */
export class Scheduler {
  /** Sorted queue with a moving head; removed entries are marked dead and skipped
   *  (compacted now and then) so taking the head is O(1), not an array shift. */
  private queue: Entry[] = [];
  private head = 0;
  /** Dead entries at or after `head`: live ones are `queue.length - head - dead`. */
  private dead = 0;
  private readonly coreFree: boolean[];
  private readonly gpuFree: boolean[];
  /** Free cores and gpus in the whole pool: none of either, and no job can be placed. */
  private freeCores: number;
  private freeGpus: number;
  /** Per slot: the search for the lowest free cores/gpus starts at its hints (without
   *  them, each allocation on a large, busy pool scanned every allocated core). */
  private readonly slotStates: SlotState[];
  private readonly allocs = new Map<JobId, Allocation>();
  private passTimer: TimerHandle | undefined;
  /** ClassAd matchmaking (policy/matchmaker.ts); absent: every slot takes every job. */
  private matcher: Matcher | undefined;
  /** The pass timer's callback, made once (a pass is requested after nearly every free). */
  private readonly passNow = (): void => {
    this.passTimer = undefined;
    this.pass();
  };
  /** True while a pass walks the queue: compaction (which moves entries) waits for its end. */
  private inPass = false;
  /** Passes run, jobs placed, pass times (real time: a measurement, not the job clock). */
  readonly passStats: PassStats = { passes: 0, placed: 0, seconds: new Tally(SECONDS_BUCKETS) };
  /** Inside `reorderOnce`: the queue is kept unsorted and sorted once at the end. */
  private deferSort = 0;
  private unsorted = false;
  /** Entries queued so far (the next one's `seq`). */
  private enqueued = 0;
  /** The last pass that passed over the whole rest of the queue at once (LastRejMatchTime). */
  private sweep: Sweep = { seq: 0, at: -1 };
  /** While paused no pass runs: requests stay queued, nothing is allocated. */
  private paused = false;
  private readonly host = hostname();
  /** R's `nodelist`: one host, shared by every R (frozen: jobs and plugins only read it). */
  private readonly nodelist: readonly string[] = Object.freeze([this.host]);
  /** R_lite of a one-core, no-gpu allocation, per core: the common case, built once and
   *  shared (frozen) instead of four objects and a string per allocation. */
  private readonly oneCoreLite: (readonly object[] | undefined)[] = [];

  constructor(
    readonly pool: ResourcePool,
    private readonly clock: Clock,
    private readonly hooks: SchedulerHooks,
    /** How many queued jobs one pass may look at (1: strict first-come order). */
    readonly queueDepth = 1,
    /** The static slots (default: one with the whole pool). */
    readonly slots: readonly Slot[] = carveSlots(pool, undefined),
  ) {
    this.coreFree = new Array<boolean>(pool.cores).fill(true);
    this.gpuFree = new Array<boolean>(pool.gpus).fill(true);
    this.freeCores = pool.cores;
    this.freeGpus = pool.gpus;
    const now = clock.now();
    this.slotStates = slots.map((slot) => ({
      slot,
      coreHint: slot.coreLo,
      gpuHint: slot.gpuLo,
      memoryFree: slot.memory,
      jobs: 0,
      since: now,
    }));
  }

  /** Each slot's current use, in SlotID order. */
  slotUse(): SlotUse[] {
    const use = this.slotStates.map((st) => ({ jobs: [] as JobId[], cores: 0, gpus: 0, st }));
    for (const [id, a] of this.allocs) {
      const u = use[a.slot]!;
      u.jobs.push(id);
      u.cores += a.cores.length;
      u.gpus += a.gpus.length;
    }
    return use.map(({ jobs, cores, gpus, st }) => ({
      slot: st.slot,
      jobs,
      coresUsed: cores,
      gpusUsed: gpus,
      memoryUsed: st.slot.memory - st.memoryFree,
      since: st.since,
    }));
  }

  /**
   * Queues an alloc request (`duration`: seconds, 0 = unlimited; R's expiration), then schedules a pass; returns the queue entry, which the
   * caller keeps to withdraw or reprioritize it. The caller queues a job at most once at a
   * time (it holds its live entry); a job holding resources is not queued again
   * (undefined), nor is an unsatisfiable request (reported through the hooks).
   */
  enqueue(id: JobId, priority: number, request: ResourceRequest, duration: number, ref?: object): QueueEntry | undefined {
    if (this.allocs.has(id)) return undefined;
    const why = this.infeasible(request);
    if (why) {
      this.hooks.unsatisfiable(id, why);
      return undefined;
    }
    // One object: the request's fields and the flag (no request object around them).
    const entry: Entry = { id, priority, request, duration, ref, live: true, seq: this.enqueued++, rejected: -1 };
    const at = this.deferSort > 0 ? this.queue.length : this.insertAt(entry);
    if (this.deferSort > 0) this.unsorted = true;
    if (at === this.queue.length) this.queue.push(entry);
    else this.queue.splice(at, 0, entry);
    this.requestPass();
    return entry;
  }

  /** Cancels a queued request (PRIORITY kick-back, hold, exception). No-op if it left the queue. */
  dequeue(entry: QueueEntry): void {
    if (entry.live) this.kill(entry as Entry);
  }

  private kill(entry: Entry): void {
    // A sweep stops covering the entry once it is dead: its time is kept on it.
    entry.rejected = this.rejectedAt(entry);
    entry.live = false;
    this.dead++;
    const q = this.queue;
    // Slots the head moves past hold a shared dead entry from then on: an allocated job's
    // entry (and its request) is garbage at once, not kept until the next compaction.
    while (this.head < q.length && !q[this.head]!.live) {
      q[this.head++] = PASSED;
      this.dead--;
    }
    if (!this.inPass) this.maybeCompact();
  }

  private maybeCompact(): void {
    if (this.head > 1024 && this.head * 2 > this.queue.length) this.compact();
    else if (this.dead > 1024 && this.dead * 2 > this.queue.length - this.head) this.compact();
  }

  private compact(): void {
    this.queue = this.queue.slice(this.head).filter(isLive);
    this.head = 0;
    this.dead = 0;
  }

  /**
   * Moves a live queued entry after a priority change (in place inside `reorderOnce`);
   * returns the entry the job holds from now on (a new one when it moved in the queue).
   */
  reprioritize(queued: QueueEntry, priority: number): QueueEntry | undefined {
    const entry = queued as Entry;
    if (entry.priority === priority) return entry;
    if (this.deferSort > 0) {
      entry.priority = priority;
      this.unsorted = true;
      return entry;
    }
    this.kill(entry);
    const moved = this.enqueue(entry.id, priority, entry.request, entry.duration, entry.ref) as Entry | undefined;
    if (moved !== undefined) moved.rejected = entry.rejected;
    return moved;
  }

  /**
   * Clock seconds a matching pass last passed the queued request over (LastRejMatchTime),
   * or -1. The caller reads it before it drops the entry (a new entry starts at -1).
   */
  rejectedAt(queued: QueueEntry): number {
    const e = queued as Entry;
    const swept = e.live && e.seq < this.sweep.seq ? this.sweep.at : -1;
    return e.rejected > swept ? e.rejected : swept;
  }

  /**
   * Runs `fn` (synchronous: no pass can run meanwhile) with the queue left unsorted while
   * requests come and change priority, then sorts it once: reprioritize-all moving 100,000
   * queued jobs one by one (a splice each) took tens of seconds.
   */
  reorderOnce(fn: () => void): void {
    this.deferSort++;
    try {
      fn();
    } finally {
      if (--this.deferSort === 0 && this.unsorted) {
        this.unsorted = false;
        this.queue = this.queue.slice(this.head).filter(isLive).sort((a, b) => (queueBefore(a, b) ? -1 : 1));
        this.head = 0;
        this.dead = 0;
      }
    }
  }

  /**
   * Live requests queued ahead of `entry` (-1: it is not queued). Read-only, for `job why`:
   * one walk of the queue, made only when someone asks.
   */
  ahead(entry: QueueEntry): number {
    if (!entry.live) return -1;
    let n = 0;
    for (let i = this.head; i < this.queue.length; i++) {
      const e = this.queue[i]!;
      if (e === entry) return n;
      if (e.live) n++;
    }
    return -1;
  }

  /** Live requests in queue order with their request (read-only, for listings' reasons). */
  queued(): ReadonlyArray<Readonly<SchedRequest>> {
    return this.queue.slice(this.head).filter(isLive);
  }

  /** Pending requests in queue order (for listings and tests). */
  pending(): JobId[] {
    return this.queue.slice(this.head).filter(isLive).map((e) => e.id);
  }

  /** Returns a job's resources to the pool and schedules a pass. */
  free(id: JobId): void {
    const a = this.allocs.get(id);
    if (!a) return;
    this.allocs.delete(id);
    const st = this.slotStates[a.slot]!;
    mark(this.coreFree, a.cores, true);
    mark(this.gpuFree, a.gpus, true);
    this.freeCores += a.cores.length;
    this.freeGpus += a.gpus.length;
    if (a.cores.length > 0) st.coreHint = Math.min(st.coreHint, a.cores[0]!);
    if (a.gpus.length > 0) st.gpuHint = Math.min(st.gpuHint, a.gpus[0]!);
    st.memoryFree += a.memory;
    this.leave(st);
    this.requestPass();
  }

  /** Marks resources of a replayed running job as in use (restart). Ignores ids out of range;
   *  the slot is the one holding its first core (or gpu). */
  reserve(id: JobId, R: Record<string, unknown> | undefined): void {
    const lite = (R?.execution as { R_lite?: Array<{ children?: Record<string, string> }> } | undefined)?.R_lite;
    const cores: number[] = [];
    const gpus: number[] = [];
    for (const r of lite ?? []) {
      cores.push(...parseIdset(r.children?.core ?? "").filter((c) => c < this.pool.cores));
      gpus.push(...parseIdset(r.children?.gpu ?? "").filter((g) => g < this.pool.gpus));
    }
    const a: Allocation = { cores, gpus, memory: Number((R?.execution as Record<string, unknown>)?.memory ?? 0), slot: 0 };
    const first = a.cores[0];
    const gpu = a.gpus[0];
    const found = this.slotStates.findIndex((st) =>
      first !== undefined ? first >= st.slot.coreLo && first < st.slot.coreHi : gpu !== undefined && gpu >= st.slot.gpuLo && gpu < st.slot.gpuHi,
    );
    a.slot = Math.max(0, found);
    mark(this.coreFree, a.cores, false);
    mark(this.gpuFree, a.gpus, false);
    this.freeCores -= a.cores.length;
    this.freeGpus -= a.gpus.length;
    this.slotStates[a.slot]!.memoryFree -= a.memory;
    this.allocs.set(id, a);
    this.enter(this.slotStates[a.slot]!, this.clock.now());
  }

  /** A job now holds resources in `st`: the slot is busy from its first job on. */
  private enter(st: SlotState, now: number): void {
    if (++st.jobs === 1) st.since = now;
  }

  private leave(st: SlotState): void {
    if (--st.jobs === 0) st.since = this.clock.now();
  }

  /** Stops allocating (daemon shutdown): pending requests are kept, in order. */
  pause(): void {
    this.paused = true;
    if (this.passTimer) this.clock.clearTimeout(this.passTimer);
    this.passTimer = undefined;
  }

  /** Allocates again, starting with a pass over the kept requests. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.requestPass();
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** Stops timers. */
  close(): void {
    if (this.passTimer) this.clock.clearTimeout(this.passTimer);
    this.passTimer = undefined;
  }

  private insertAt(req: SchedRequest): number {
    let lo = this.head;
    let hi = this.queue.length;
    // The usual request goes last (same priority, newest id): one comparison, not a search.
    if (lo === hi || queueBefore(this.queue[hi - 1]!, req)) return hi;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (queueBefore(this.queue[mid]!, req)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Why a request can never be satisfied here (busy or not: by the slot it names, else by
   * any slot), or undefined: the check behind an unsatisfiable `alloc` exception and a job
   * update's `feasibility`.
   */
  infeasible(r: ResourceRequest): string | undefined {
    if (r.nnodes > 1) return `unsatisfiable request: ${r.nnodes} nodes requested, 1 available`;
    if (r.slot !== undefined) {
      const slot = this.slots[r.slot - 1];
      if (!slot) return `no slot ${r.slot} on this host (it has ${describeSlots(this.slots)})`;
      return tooBig(r, slot, `slot ${r.slot} has`);
    }
    if (this.slots.length === 1) {
      if (r.cores > this.pool.cores) return `unsatisfiable request: ${r.cores} cores requested, ${this.pool.cores} available`;
      if (r.gpus > this.pool.gpus) return `unsatisfiable request: ${r.gpus} gpus requested, ${this.pool.gpus} available`;
      if (r.memory > this.pool.memory) return `unsatisfiable request: ${r.memory} bytes of memory requested, ${this.pool.memory} available`;
      return undefined;
    }
    if (this.slots.some((slot) => tooBig(r, slot, "") === undefined)) return undefined;
    return `unsatisfiable request: no slot is large enough (${r.cores} cores, ${r.gpus} gpus, ${r.memory} bytes requested)`;
  }

  /** Passes are coalesced into one timer so a burst of submissions costs one walk. */
  private requestPass(): void {
    if (this.passTimer || this.paused || this.queue.length - this.head - this.dead === 0) return;
    this.passTimer = this.clock.setTimeout(this.passNow, 0);
  }

  private pass(): void {
    const began = performance.now();
    this.inPass = true;
    try {
      this.beforePass?.();
      this.walkQueue();
    } finally {
      this.inPass = false;
      this.maybeCompact();
      this.passStats.passes++;
      this.passStats.seconds.observe((performance.now() - began) / 1000);
    }
  }

  /** Called at the start of each pass, before the queue is walked (the slots' PREEMPT). */
  beforePass: (() => void) | undefined;

  /** Installs the matchmaker (the manager's, made once the ads exist). */
  useMatcher(m: Matcher): void {
    this.matcher = m;
  }

  /** Asks for a pass (coalesced): slot policy may have changed (published ads, reconfig). */
  poke(): void {
    this.requestPass();
  }

  private walkQueue(): void {
    const m = this.matcher;
    if (m !== undefined) {
      this.walkMatching(m);
      return;
    }
    let looked = 0;
    for (let i = this.head; i < this.queue.length && looked < this.queueDepth; i++) {
      const entry = this.queue[i]!;
      if (!entry.live) continue;
      const a = this.tryAllocate(entry.request);
      if (!a) {
        looked++;
        continue;
      }
      // An allocated job does not use up the look-ahead.
      this.place(entry, a);
    }
  }

  /** Gives `entry` its allocation: out of the queue, its slot busy, its R to the manager. */
  private place(entry: Entry, a: Allocation): void {
    const id = entry.id;
    this.kill(entry);
    this.allocs.set(id, a);
    this.passStats.placed++;
    // One clock reading for the slot's busy time and R's starttime: the same instant.
    const now = this.clock.now();
    this.enter(this.slotStates[a.slot]!, now);
    this.hooks.alloc(id, this.rOf(a, entry.duration, now));
  }

  /**
   * The pass with matchmaking: a job whose ClassAds match no slot at all is passed over
   * without using up the look-ahead (it waits for policy, not for resources, so it must not
   * block the queue); one that matches slots which are all full does use it up, as today.
   * Jobs with no Requirements/Rank on unconstrained slots take `tryAllocate` unchanged.
   */
  private walkMatching(m: Matcher): void {
    let began = false;
    let looked = 0;
    const now = this.clock.now();
    const second = Math.floor(now / 1000);
    const before = this.enqueued;
    // Read once: nothing publishes into the slot ads while a pass runs (it is synchronous).
    const constrained = m.slotsConstrained;
    for (let i = this.head; i < this.queue.length && looked < this.queueDepth; i++) {
      const entry = this.queue[i]!;
      if (!entry.live) continue;
      const policy = constrained || entry.request.matchmaking === true;
      // A pool with no free core or gpu places nothing (every job takes one of them): the
      // rest of the walk only records who was passed over, without trying each slot.
      const full = this.freeCores === 0 && this.freeGpus === 0;
      // Nor does it need the job's match, once the look-ahead cannot run out before the
      // queue does (what the match decides then is only whether the job uses some of it).
      if (full && policy && this.queue.length - i <= this.queueDepth - looked) {
        // Every job matches here, and nothing was queued since the pass began: the rest of
        // the queue is passed over at once, not entry by entry.
        if (constrained && this.enqueued === before) {
          this.sweep = { seq: before, at: second };
          break;
        }
        entry.rejected = second;
        continue;
      }
      // The slot ads are taken only for a pass that matches some job (not on a full pool).
      if (policy && !began) {
        m.beginPass(now);
        began = true;
      }
      const order = policy ? m.candidates(entry.id, entry.ref) : undefined;
      const a = full ? undefined : order === undefined ? this.tryAllocate(entry.request) : this.tryAllocateAmong(entry.request, order);
      if (!a) {
        if (policy) entry.rejected = second;
        if (order === undefined || order.length > 0) looked++;
        continue;
      }
      this.place(entry, a);
    }
  }

  /** The first slot of `order` (indices) where `r` fits now; a named slot must be among them. */
  private tryAllocateAmong(r: ResourceRequest, order: readonly number[]): Allocation | undefined {
    for (const index of order) {
      if (r.slot !== undefined && index !== r.slot - 1) continue;
      const a = this.tryAllocateIn(r, index);
      if (a) return a;
    }
    return undefined;
  }

  private tryAllocate(r: ResourceRequest): Allocation | undefined {
    if (r.slot !== undefined) return this.tryAllocateIn(r, r.slot - 1);
    for (let i = 0; i < this.slotStates.length; i++) {
      const a = this.tryAllocateIn(r, i);
      if (a) return a;
    }
    return undefined;
  }

  /** Takes the lowest free cores/gpus `r` asks for in slot `index` (the caller enters the job). */
  private tryAllocateIn(r: ResourceRequest, index: number): Allocation | undefined {
    const st = this.slotStates[index];
    if (!st) return undefined;
    const { slot } = st;
    st.coreHint = firstFree(this.coreFree, st.coreHint, slot.coreHi);
    st.gpuHint = firstFree(this.gpuFree, st.gpuHint, slot.gpuHi);
    const cores = takeFree(this.coreFree, Math.max(r.cores, r.gpus > 0 ? 0 : 1), st.coreHint, slot.coreHi);
    const gpus = takeFree(this.gpuFree, r.gpus, st.gpuHint, slot.gpuHi);
    if (!cores || !gpus || r.memory > st.memoryFree) return undefined;
    mark(this.coreFree, cores, false);
    mark(this.gpuFree, gpus, false);
    this.freeCores -= cores.length;
    this.freeGpus -= gpus.length;
    st.memoryFree -= r.memory;
    return { cores, gpus, memory: r.memory, slot: index };
  }

  /** R (RFC 20) of an allocation made at clock ms `now`: a fresh object per job; only the
   *  frozen R_lite of a one-core job and the nodelist are shared. */
  private rOf(a: Allocation, duration: number, now: number): Record<string, unknown> {
    const starttime = now / 1000;
    const execution: Record<string, unknown> = {
      R_lite: this.liteOf(a),
      nodelist: this.nodelist,
      starttime,
      expiration: duration > 0 ? starttime + duration : 0,
    };
    if (a.memory > 0) execution.memory = a.memory;
    return { version: 1, execution };
  }

  private liteOf(a: Allocation): readonly object[] {
    if (a.cores.length === 1 && a.gpus.length === 0) {
      const core = a.cores[0]!;
      return (this.oneCoreLite[core] ??= Object.freeze([Object.freeze({ rank: "0", children: Object.freeze({ core: String(core) }) })]));
    }
    const children: Record<string, string> = { core: formatIdset(a.cores) };
    if (a.gpus.length > 0) children.gpu = formatIdset(a.gpus);
    return [{ rank: "0", children }];
  }
}

/** What a queue slot behind the head holds (never live, never compared). */
const PASSED: Entry = Object.freeze({
  id: -1n as JobId,
  priority: 0,
  request: Object.freeze({ nnodes: 0, cores: 0, gpus: 0, memory: 0, slots: 0 }),
  duration: 0,
  ref: undefined,
  live: false,
  seq: -1,
  rejected: -1,
}) as Entry;

function isLive(e: Entry): boolean {
  return e.live;
}

/** No cores or gpus (an allocation's gpus, mostly): shared, never written. */
const NONE: readonly number[] = Object.freeze([]);

/** `[i]`, per index: the cores of one-core allocations, shared, never written. */
const ONE: (readonly number[] | undefined)[] = [];

/** The lowest `n` free indices in [from, end) (nothing is free below `from`), or undefined. */
function takeFree(free: boolean[], n: number, from: number, end: number): readonly number[] | undefined {
  if (n === 0) return NONE;
  // One index (a one-core job): `from` is free when below `end`; its array is shared.
  if (n === 1) return from < end ? (ONE[from] ??= Object.freeze([from])) : undefined;
  // Sized up front: a push onto [] reserves room for 17 numbers (about 150 bytes a job).
  const out = new Array<number>(n);
  let k = 0;
  for (let i = from; i < end && k < n; i++) if (free[i]) out[k++] = i;
  return k === n ? out : undefined;
}

/** Marks the indices `at` free or taken (an indexed loop: no iterator per allocation). */
function mark(free: boolean[], at: readonly number[], value: boolean): void {
  for (let i = 0; i < at.length; i++) free[at[i]!] = value;
}

/** The lowest free index in [from, end) (end if none). */
function firstFree(free: boolean[], from: number, end: number): number {
  let i = from;
  while (i < end && !free[i]) i++;
  return i;
}

/** Why `r` does not fit in `slot` even when it is empty, or undefined. */
function tooBig(r: ResourceRequest, slot: Slot, label: string): string | undefined {
  const cores = slot.coreHi - slot.coreLo;
  const gpus = slot.gpuHi - slot.gpuLo;
  if (Math.max(r.cores, r.gpus > 0 ? 0 : 1) > cores) return `unsatisfiable request: ${r.cores} cores requested, ${label} ${cores}`;
  if (r.gpus > gpus) return `unsatisfiable request: ${r.gpus} gpus requested, ${label} ${gpus}`;
  if (r.memory > slot.memory) return `unsatisfiable request: ${r.memory} bytes of memory requested, ${label} ${slot.memory}`;
  return undefined;
}

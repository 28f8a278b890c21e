/**
 * `job why`, the scheduler's part (issue 36): where a SCHED job's alloc request stands —
 * how many requests are ahead of it, and its request against the pool (or its named slot)
 * now and in total. Read-only: it asks the scheduler for its queue and slot use, and only
 * when someone asks.
 *
 * Matchmaking analysis (HTCondor's better-analyze: each Requirements clause, each slot's
 * START) belongs to the scheduler's policy code; it plugs in here as a `SchedAnalyzer`, so
 * this file never evaluates a ClassAd itself.
 */
import type { JobId } from "./base/ids.js";
import type { ActiveJob } from "./engine/job.js";
import type { ResourceRequest } from "./core/jobspec.js";
import type { Reason } from "./port/reasons.js";
import type { Scheduler, SlotUse } from "./scheduler/scheduler.js";

/**
 * A better-analyze producer (the policy code's): reasons for a queued job's match against
 * the slots, or none. Called after the resource reasons, only when someone asks.
 */
export type SchedAnalyzer = (id: JobId, request: ResourceRequest) => Reason[];

/** What is free and in total, in the job's named slot or over the whole pool. */
interface Room {
  where: string;
  cores: number;
  coresTotal: number;
  gpus: number;
  gpusTotal: number;
  memory: number;
  memoryTotal: number;
}

function schedReason(code: string, text: string, figures: Reason["figures"]): Reason {
  return { layer: "scheduler", source: "scheduler", code, text, figures };
}

/** The scheduler's reasons for a SCHED job with a live alloc request ([] without one). */
export function schedulerReasons(job: ActiveJob, s: Scheduler, analyzer?: SchedAnalyzer): Reason[] {
  const entry = job.schedEntry;
  const request = job.request;
  if (entry === undefined || !entry.live || request === undefined) return [];
  const room = roomFor(request, s.slotUse());
  const ahead = s.ahead(entry);
  const out: Reason[] = [];
  if (s.isPaused) out.push(schedReason("scheduling-paused", "scheduling is paused", { paused: true }));
  const fits = request.cores <= room.cores && request.gpus <= room.gpus && request.memory <= room.memory;
  out.push(positionReason(ahead, fits, s.queueDepth));
  out.push(resourceReason(request, room, fits));
  if (analyzer !== undefined) out.push(...analyzer(job.core.id, request));
  return out;
}

function positionReason(ahead: number, fits: boolean, depth: number): Reason {
  const figures = { ahead, queue_depth: depth };
  if (ahead === 0) {
    const text = fits ? "first in the queue; the next scheduling pass allocates it" : "first in the queue, waiting for resources";
    return schedReason("queue-position", text, figures);
  }
  const jobs = ahead === 1 ? "1 job" : `${ahead} jobs`;
  return schedReason("queue-position", `${jobs} ahead with higher priority (or the same priority, submitted earlier)`, figures);
}

function resourceReason(r: ResourceRequest, room: Room, fits: boolean): Reason {
  const parts = [`${r.cores} of ${room.cores} free / ${room.coresTotal} cores`];
  if (r.gpus > 0 || room.gpusTotal > 0) parts.push(`${r.gpus} of ${room.gpus} free / ${room.gpusTotal} gpus`);
  if (r.memory > 0) parts.push(`${mib(r.memory)} of ${mib(room.memory)} free / ${mib(room.memoryTotal)} memory`);
  const verdict = fits ? "fits now" : "does not fit now";
  return schedReason("resources", `requests ${parts.join(", ")} in ${room.where}: ${verdict}`, {
    where: room.where,
    cores: r.cores,
    cores_free: room.cores,
    cores_total: room.coresTotal,
    gpus: r.gpus,
    gpus_free: room.gpus,
    gpus_total: room.gpusTotal,
    memory: r.memory,
    memory_free: room.memory,
    memory_total: room.memoryTotal,
    fits,
  });
}

/** The named slot's room, else the best single slot's (a job runs inside one slot). */
function roomFor(r: ResourceRequest, use: readonly SlotUse[]): Room {
  const named = r.slot === undefined ? undefined : use.find((u) => u.slot.id === r.slot);
  if (named !== undefined) return slotRoom(named, `slot ${named.slot.id}`);
  if (use.length === 1) return slotRoom(use[0]!, "the pool");
  const rooms = use.map((u) => slotRoom(u, `slot ${u.slot.id}`));
  return rooms.find((x) => r.cores <= x.cores && r.gpus <= x.gpus && r.memory <= x.memory) ?? largest(rooms);
}

function slotRoom(u: SlotUse, where: string): Room {
  const sl = u.slot;
  const coresTotal = sl.coreHi - sl.coreLo;
  const gpusTotal = sl.gpuHi - sl.gpuLo;
  return {
    where,
    cores: coresTotal - u.coresUsed,
    coresTotal,
    gpus: gpusTotal - u.gpusUsed,
    gpusTotal,
    memory: sl.memory - u.memoryUsed,
    memoryTotal: sl.memory,
  };
}

function largest(rooms: Room[]): Room {
  return rooms.reduce((a, b) => (b.cores > a.cores ? b : a));
}

function mib(bytes: number): string {
  return bytes >= 1 << 30 ? `${(bytes / (1 << 30)).toFixed(1)}G` : `${Math.round(bytes / (1 << 20))}M`;
}

/**
 * Resource counts of a Flux jobspec v1 as the limit plugins see them: nnodes from the
 * `node` vertices, ncores = nslots × cores per slot, ngpus = nslots × gpus per slot.
 */
import type { Jobspec } from "jobtap/plugin";

/** What `.limit-job-size` compares against its limits. */
export interface JobSizeCounts {
  nnodes: number;
  ncores: number;
  ngpus: number;
}

type Vertex = { type?: unknown; count?: unknown; with?: unknown };

function countOf(v: Vertex): number {
  const c = v.count;
  if (typeof c === "number") return c;
  if (typeof c === "object" && c !== null && typeof (c as { min?: unknown }).min === "number") {
    return (c as { min: number }).min;
  }
  return 1;
}

function walk(list: unknown, mult: number, inSlot: boolean, out: JobSizeCounts): void {
  if (!Array.isArray(list)) return;
  for (const raw of list) {
    if (typeof raw !== "object" || raw === null) continue;
    const v = raw as Vertex;
    const n = mult * countOf(v);
    if (v.type === "node") out.nnodes += n;
    else if (v.type === "core" && inSlot) out.ncores += n;
    else if (v.type === "gpu" && inSlot) out.ngpus += n;
    walk(v.with, n, inSlot || v.type === "slot", out);
  }
}

/** Sums the jobspec's resource tree; a malformed tree counts what it can. */
export function jobSizeCounts(jobspec: Jobspec): JobSizeCounts {
  const out: JobSizeCounts = { nnodes: 0, ncores: 0, ngpus: 0 };
  walk(jobspec.resources, 1, false, out);
  return out;
}

/** `attributes.system.duration` in seconds; 0 when unset (unlimited). */
export function jobDuration(jobspec: Jobspec): number {
  const d = jobspec.attributes.system?.duration;
  return typeof d === "number" && d > 0 ? d : 0;
}

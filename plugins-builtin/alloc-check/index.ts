/**
 * alloc-check (loadable by name, not a builtin; Flux's alloc-check.so): catches a scheduler
 * double-booking. Every job is subscribed at `job.new`; at its `alloc` the R it was given
 * is added to the set of allocated resources, and a resource already in the set raises a
 * fatal `alloc-check` exception, "resources already allocated", instead of two jobs
 * silently sharing a core. `free` (or a fatal `scheduler-restart` exception, which drops
 * the allocation) gives the job's resources back.
 *
 * Unlike Flux, a refused R is not remembered for the job, so its `free` cannot take the
 * other job's resources out of the set.
 */
import type { JobArgs, JobId, PluginContext } from "jobtap/plugin";
import { ErrorCode, formatJobId, JobtapError, parseIdset } from "jobtap/plugin";

/** The resources of an R as "rank/kind/id" keys (cores and gpus of every R_lite entry). */
export function resourceKeys(R: unknown): string[] {
  const lite = (R as { execution?: { R_lite?: unknown } } | undefined)?.execution?.R_lite;
  if (!Array.isArray(lite)) throw new JobtapError(ErrorCode.INTERNAL, "R has no execution.R_lite array");
  const keys: string[] = [];
  for (const entry of lite as Array<{ rank?: unknown; children?: Record<string, unknown> }>) {
    const ranks = parseIdset(String(entry.rank ?? ""));
    for (const [kind, ids] of Object.entries(entry.children ?? {})) {
      const list = parseIdset(String(ids));
      for (const rank of ranks) for (const id of list) keys.push(`${rank}/${kind}/${id}`);
    }
  }
  return keys;
}

/** Registers the subscription, the alloc check and the releases. */
export default function allocCheck(p: PluginContext): void {
  const allocated = new Set<string>();
  /** What each job holds (only an accepted R is recorded). */
  const held = new Map<JobId, string[]>();

  const release = (id: JobId) => {
    for (const k of held.get(id) ?? []) allocated.delete(k);
    held.delete(id);
  };

  const onAlloc = (job: JobArgs) => {
    let keys: string[];
    try {
      keys = resourceKeys(job.R);
    } catch (e) {
      p.log.error(`${formatJobId(job.id)}: failed to parse R: ${(e as Error).message}`);
      return;
    }
    if (keys.some((k) => allocated.has(k))) {
      p.raiseException(job.id, "alloc-check", 0, "resources already allocated");
      return;
    }
    for (const k of keys) allocated.add(k);
    held.set(job.id, keys);
  };

  p.on("job.new", (job) => p.subscribe(job.id));
  p.on("job.event.alloc", onAlloc);
  p.on("job.event.free", (job) => release(job.id));
  p.on("job.event.exception", (job) => {
    const c = job.entry.context;
    if (c?.severity === 0 && c?.type === "scheduler-restart") release(job.id);
  });
  // A job that ends without `free` (it never had its resources handed over) holds nothing.
  p.on("job.state.inactive", (job) => release(job.id));
  p.on("plugin.query", () => ({ allocated: allocated.size }));
}

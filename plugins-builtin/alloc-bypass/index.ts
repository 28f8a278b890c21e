/**
 * alloc-bypass (loadable by name, not a builtin): the instance owner supplies R in
 * `attributes.system.alloc-bypass.R` and the job runs on it without the scheduler (spec
 * flux-jobtap §8). At validate the submitter must be the owner and R must be an object
 * with an `execution` table; the job gets the `alloc-bypass` flag (so the manager makes no
 * alloc request). In SCHED the plugin returns OUT `R` and posts `alloc {bypass: true}`.
 * The owner is the instance owner (`p.owner`), as in Flux.
 */
import type { JobArgs, PluginContext } from "jobtap/plugin";

/** The R a job asks to run on, if any. */
function bypassR(job: JobArgs): unknown {
  const ab = job.jobspec.attributes.system?.["alloc-bypass"];
  return typeof ab === "object" && ab !== null ? (ab as { R?: unknown }).R : undefined;
}

/** Checks an R object: undefined if usable, else why not. */
export function checkR(R: unknown): string | undefined {
  if (typeof R !== "object" || R === null || Array.isArray(R)) return "alloc-bypass: R must be an object";
  const ex = (R as { execution?: unknown }).execution;
  if (typeof ex !== "object" || ex === null || Array.isArray(ex)) return "alloc-bypass: R: missing execution object";
  return undefined;
}

/** Registers job.validate (owner check, flag) and job.state.sched (supply R, post alloc). */
export default function allocBypass(p: PluginContext): void {
  p.on("job.validate", (job) => {
    const R = bypassR(job);
    if (R === undefined) return undefined;
    if (job.userid !== p.owner) return p.reject("Guest user cannot use alloc bypass");
    const why = checkR(R);
    if (why !== undefined) return p.reject(why);
    p.setFlag(job.id, "alloc-bypass");
    return undefined;
  });
  p.on("job.state.sched", (job) => {
    const R = bypassR(job);
    if (R === undefined || !job.flags.includes("alloc-bypass")) return undefined;
    // Queued behind this callback: the manager has taken R from the OUT by then.
    p.postEvent(job.id, "alloc", { bypass: true });
    return { R: R as Record<string, unknown> };
  });
}

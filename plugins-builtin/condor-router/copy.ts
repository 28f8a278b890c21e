/**
 * The routed copy (spec htcondor.md §4.6 step 2): HTCondor's default conversion of the
 * original's ad (VanillaToGrid), then the pre-route, route and post-route transforms with
 * one shared macro table, then the routing attributes; and where the copy runs, from its
 * `GridResource`: absent or `local [queue]` → this host, `batch slurm [partition]` → the
 * Slurm executor (asked through the `exec-slurm.route` topic, so the mapping stays there).
 */
import {
  ClassAd,
  Evaluator,
  jobspecFromAd,
  TransformRun,
  type Jobspec,
  type Transform,
} from "jobtap/plugin";
import type { Route, RouterConfig } from "./routes.js";

/** Attributes HTCondor removes from the copy. */
const DELETED = (
  "ClusterId ProcId BufferBlockSize BufferSize CondorPlatform CondorVersion CoreSize GlobalJobId User OsUser " +
  "QDate RemoteWallClockTime LastRemoteWallClockTime ServerTime AutoClusterId AutoClusterAttrs TotalSubmitProcs " +
  "StageInFinish StageInStart UserLog UserLogUseXML DAGManNodesLog DAGManNodesMask TimerRemove SUBMIT_Iwd"
).split(" ");

/** Attributes HTCondor resets in the copy, as old-syntax text. */
const RESET: ReadonlyArray<[string, string]> = [
  ["JobStatus", "1"], ["RemoteUserCpu", "0.0"], ["RemoteSysCpu", "0.0"], ["ExitStatus", "0"], ["CompletionDate", "0"],
  ["NumCkpts", "0"], ["NumRestarts", "0"], ["NumSystemHolds", "0"], ["CommittedTime", "0"], ["CommittedSlotTime", "0"],
  ["CumulativeSlotTime", "0"], ["TotalSuspensions", "0"], ["LastSuspensionTime", "0"], ["CumulativeSuspensionTime", "0"],
  ["CommittedSuspensionTime", "0"], ["ExitBySignal", "false"],
];

/** Router bookkeeping of the original that the copy must not carry. */
const ORIGINAL_ONLY = ["Managed", "ManagedManager", "RoutedToJobId", "JobId"];

/** The working ad after conversion and transforms, or why routing this job failed. */
export type CopyAd = { ok: true; ad: ClassAd } | { ok: false; error: string };

/** A plain, writable copy of an ad (a job ad is a frozen record). */
export function plainCopy(ad: ClassAd): ClassAd {
  const out = new ClassAd();
  for (const [name, expr] of ad.attributes()) out.bind(name, expr);
  return out;
}

/**
 * Builds the copy's ad from `working` (the original's ad, or a TRANSLATE_JOB hook's output)
 * for `route`. Never throws: a transform error is returned.
 */
export function buildCopyAd(working: ClassAd, route: Route, cfg: RouterConfig, evaluator: Evaluator, origId: string): CopyAd {
  const ad = plainCopy(working);
  for (const name of DELETED) ad.delete(name);
  for (const [name, text] of RESET) ad.setExpr(name, text, true);
  const universe = ad.lookup("JobUniverse");
  if (universe !== undefined) ad.bind("Remote_JobUniverse", universe);
  ad.set("JobUniverse", BigInt(route.settings.targetUniverse));
  if (route.settings.gridResource !== undefined) ad.set("GridResource", route.settings.gridResource);
  const run = new TransformRun({ evaluator });
  let current = ad;
  const steps: Array<[string, Transform]> = [
    ...cfg.preRouteTransforms.map((t): [string, Transform] => [`pre-route transform ${t.name}`, t.transform]),
    // The route's REQUIREMENTS was tested on the original when the route was chosen.
    [`route ${route.name}`, { ...route.transform, requirements: undefined }],
    ...cfg.postRouteTransforms.map((t): [string, Transform] => [`post-route transform ${t.name}`, t.transform]),
  ];
  for (const [label, transform] of steps) {
    const out = run.apply(transform, current);
    if (!out.ok) return { ok: false, error: `${label}: ${out.error}` };
    current = out.ad;
  }
  for (const name of ORIGINAL_ONLY) current.delete(name);
  current.set("RoutedFromJobId", origId);
  current.set("RoutedBy", cfg.settings.name);
  current.set("RouteName", route.name);
  return { ok: true, ad: current };
}

/** Where a copy runs, from its GridResource. */
export type Destination =
  | { kind: "local"; queue?: string }
  | { kind: "slurm"; gridResource: string }
  | { kind: "error"; error: string };

/** Reads the copy's `GridResource` (the ad's, else the route's). */
export function destinationOf(ad: ClassAd, route: Route): Destination {
  const v = ad.has("GridResource") ? ad.evaluate("GridResource") : route.settings.gridResource;
  if (v === undefined || (typeof v === "string" && v.trim() === "")) return { kind: "local" };
  if (typeof v !== "string") return { kind: "error", error: `GridResource is not a string` };
  const words = v.trim().split(/\s+/);
  const head = words[0]!.toLowerCase();
  if (head === "local" && words.length <= 2) return words[1] === undefined ? { kind: "local" } : { kind: "local", queue: words[1] };
  if (head === "batch" && words[1]?.toLowerCase() === "slurm") return { kind: "slurm", gridResource: v };
  return { kind: "error", error: `GridResource "${v}": jobtap routes to this host ("local [queue]") or to Slurm ("batch slurm [partition]")` };
}

/** The Batch* attributes the Slurm mapping reads, evaluated in the copy's ad. */
export function batchValues(ad: ClassAd): Record<string, string | number | boolean | undefined> {
  const out: Record<string, string | number | boolean | undefined> = {};
  for (const name of ["BatchQueue", "BatchProject", "BatchExtraSubmitArgs", "BatchRuntime"]) {
    if (!ad.has(name)) continue;
    const v = ad.evaluate(name);
    out[name] = typeof v === "bigint" ? Number(v) : typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? v : undefined;
  }
  return out;
}

/** `attributes.system` keys of the original that do not carry over to the copy. */
const SYSTEM_DROPPED = new Set(["cwd", "shell", "queue", "dependencies", "environment"]);

/**
 * The copy's jobspec: `jobspecFromAd` of its ad, plus the original's other system
 * attributes (executor choice, duration, name) and the destination's choices.
 */
export function copyJobspec(ad: ClassAd, original: Jobspec, originalAd: ClassAd, system: Record<string, unknown>): Jobspec {
  const kept: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(original.attributes.system ?? {})) if (!SYSTEM_DROPPED.has(k)) kept[k] = v;
  // Out/Err the original only has by default (its own output directory) are not the
  // copy's: the copy gets its own default, unless a route or hook chose a path.
  const output = ((original.attributes.system?.shell as { options?: { output?: Record<string, unknown> } } | undefined)?.options?.output ?? {});
  let copyAd = ad;
  for (const [attr, stream] of [["Out", "stdout"], ["Err", "stderr"]] as const) {
    if (output[stream] !== undefined || !ad.has(attr)) continue;
    if (ad.evaluate(attr) !== (originalAd.has(attr) ? originalAd.evaluate(attr) : undefined)) continue;
    if (copyAd === ad) copyAd = plainCopy(ad);
    copyAd.delete(attr);
  }
  return jobspecFromAd(copyAd, { system: { ...kept, ...system } });
}

/**
 * The job router's Slurm destination: a route whose `GridResource` is `batch slurm` (as
 * HTCondor's routes spell a Slurm cluster reached through the batch GAHP), optionally
 * followed by a partition: `batch slurm gpu`. Pure: the router (when it exists) evaluates
 * the routed job ad and hands the attribute values here; the result is what the routed
 * copy's jobspec gets so it runs on the slurm executor.
 *
 *   GridResource "batch slurm P"    partition P (the route's choice wins)
 *   BatchQueue                      partition, when the GridResource names none
 *   BatchProject                    account
 *   BatchExtraSubmitArgs            extra sbatch arguments (split on blanks)
 *   BatchRuntime                    duration in seconds (→ --time and jobtap's time limit)
 *
 * Cores, GPUs and memory need no mapping here: the routed copy's jobspec already carries
 * RequestCpus/RequestGpus/RequestMemory as resources, and submit.ts maps those.
 */
import type { SlurmChoices } from "./submit.js";

/** A parsed Slurm GridResource. */
export interface SlurmGridResource {
  partition?: string;
}

/** Job ad attribute values as the router evaluated them (names matched case-insensitively). */
export type RoutedAdValues = Readonly<Record<string, string | number | boolean | undefined>>;

/** What the routed copy gets: its executor choice and, if the ad sets one, its duration. */
export interface SlurmRouting {
  exec: { name: "slurm"; slurm: SlurmChoices };
  duration?: number;
}

/**
 * Reads a GridResource: undefined if it is not a Slurm one (another destination), an error
 * naming the problem if it is malformed.
 */
export function parseSlurmGridResource(text: string): SlurmGridResource | { error: string } | undefined {
  const words = text.trim().split(/\s+/);
  if (words[0]?.toLowerCase() !== "batch" || words[1]?.toLowerCase() !== "slurm") return undefined;
  if (words.length > 3) return { error: `GridResource "${text}": expected "batch slurm [partition]"` };
  const partition = words[2];
  if (partition !== undefined && !/^[A-Za-z0-9_.-]+$/.test(partition)) {
    return { error: `GridResource "${text}": "${partition}" is not a partition name` };
  }
  return partition === undefined ? {} : { partition };
}

/** The routed copy's Slurm settings from the route's GridResource and the job ad. */
export function slurmRouting(grid: SlurmGridResource, ad: RoutedAdValues): SlurmRouting | { error: string } {
  const get = (name: string) => {
    const key = Object.keys(ad).find((k) => k.toLowerCase() === name.toLowerCase());
    return key === undefined ? undefined : ad[key];
  };
  const slurm: SlurmChoices = {};
  const queue = get("BatchQueue");
  const partition = grid.partition ?? (typeof queue === "string" && queue !== "" ? queue : undefined);
  if (partition !== undefined) slurm.partition = partition;
  const project = get("BatchProject");
  if (typeof project === "string" && project !== "") slurm.account = project;
  const extra = get("BatchExtraSubmitArgs");
  if (typeof extra === "string" && extra.trim() !== "") slurm.args = extra.trim().split(/\s+/);
  const out: SlurmRouting = { exec: { name: "slurm", slurm } };
  const runtime = get("BatchRuntime");
  if (runtime !== undefined) {
    if (typeof runtime !== "number" || !(runtime > 0)) return { error: `BatchRuntime: must be a number of seconds > 0, got ${JSON.stringify(runtime)}` };
    out.duration = runtime;
  }
  return out;
}

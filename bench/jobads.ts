/**
 * Job ad benchmark (issue 12): how fast the manager gives the job ads of 100,000 jobs, as a
 * router poll asks for every job (`--jobs N`, `--rounds R`; the measurement and its three
 * figures are described in bench/lib/jobads.ts). Last stdout line: JSON.
 */
import { arg } from "./lib/common.js";
import { measureJobAds } from "./lib/jobads.js";

export async function main(args: string[]): Promise<void> {
  const n = Number(arg(args, "jobs", "100000"));
  const figures = measureJobAds(n, Number(arg(args, "rounds", "5")), (line) => process.stderr.write(line + "\n"));
  process.stdout.write(JSON.stringify({ jobs: n, ...figures }) + "\n");
}

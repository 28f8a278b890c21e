/**
 * `npm run bench -- crash [--runs N]`: the crash campaign (bench/lib/crash.ts). Each run
 * loads a real daemon from concurrent socket and CLI clients, SIGKILLs it at a random
 * moment, restarts it on the same statedir and checks every acknowledged job. Prints the
 * figures of each run to stderr and the totals as JSON.
 */
import { addFigures, crashRun, DEFAULT_CRASH, type CrashFigures } from "./lib/crash.js";
import { arg } from "./lib/common.js";

export async function main(args: string[]): Promise<void> {
  const runs = Number(arg(args, "runs", "20"));
  let total: CrashFigures = { runs: 0, acknowledged: 0, lost: 0, inconsistent: 0, stuck: 0, orphaned: 0, ran_twice: 0, deps_broken: 0, problems: [] };
  for (let i = 0; i < runs; i++) {
    const f = await crashRun({ ...DEFAULT_CRASH, log: (l) => process.stderr.write(`  ${l}\n`) });
    const { problems, ...figures } = f;
    process.stderr.write(`run ${i + 1}/${runs}: ${JSON.stringify(figures)}${problems.length ? `\n  ${problems.join("\n  ")}` : ""}\n`);
    total = addFigures(total, f);
  }
  console.log(JSON.stringify({ bench: "crash", ...total }));
}

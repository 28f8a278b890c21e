/**
 * condor-fetch's `job.explain` (issue 36): a job whose PREPARE hook runs is in RUN with its
 * prolog open, not started; the hook (which one, its program, its keyword, for how long) is
 * what it waits on. Only jobs with a hook running now get a reason.
 */
import { basename } from "node:path";
import type { JobArgs, PluginContext } from "jobtap/plugin";
import { formatFSD } from "jobtap/plugin";
import type { StarterHooks } from "./starter.js";

/** The reason for one job, or undefined when none of its PREPARE hooks runs. */
export function explainStarter(p: PluginContext, starter: StarterHooks, job: JobArgs) {
  const sj = starter.jobs.get(job.id);
  const run = sj?.preparing;
  if (sj === undefined || run === undefined) return undefined;
  const seconds = Math.max(0, Math.floor((p.clock.now() - run.since) / 1000));
  const text = `waits for its ${run.type} hook (${basename(run.path)}, keyword ${sj.hooks.keyword}) to finish before it starts: running for ${formatFSD(seconds)}`;
  const figures = { hook: run.type, path: run.path, keyword: sj.hooks.keyword, since: run.since / 1000, running_s: seconds };
  return { reasons: [{ layer: "state" as const, code: "prepare-hook", text, figures }] };
}

/**
 * .exec-slurm (builtin): registers the `slurm` executor, so a job submitted with
 * `attributes.system.exec.name = "slurm"` (`jobtap submit --exec slurm`) runs as a Slurm
 * batch job. Settings come from the instance config's `[exec.slurm]` (config.ts), re-read on
 * every conf.update. Nothing runs (no process, no timer) until a job uses it.
 *
 * A Slurm job needs no local cores: at validate the job gets the `alloc-bypass` flag (so the
 * manager asks the local scheduler for nothing) and its bad `exec.slurm` settings are
 * rejected; in SCHED the plugin supplies an R that names the executor and posts `alloc`.
 * Slurm, not jobtap, decides where and when the work runs.
 */
import type { ConfigCheck, JobArgs, PluginContext } from "jobtap/plugin";
import { ErrorCode, isJobtapError } from "jobtap/plugin";
import { checkWith, ConfigError } from "../common/config.js";
import { defaultSlurmConfig, readSlurmConfig, wantsSlurm } from "./config.js";
import { SlurmExecutor } from "./executor.js";
import { explainSlurm } from "./explain.js";
import { parseSlurmGridResource, slurmRouting, type RoutedAdValues } from "./route.js";
import { jobChoices } from "./submit.js";

/** The executor name jobs ask for. */
export const SLURM_EXECUTOR = "slurm";

/** The R of a job that runs on Slurm: no local resources, the executor named. */
function slurmR(job: JobArgs, now: number): Record<string, unknown> {
  const d = job.jobspec.attributes.system?.duration;
  const starttime = now / 1000;
  const expiration = typeof d === "number" && d > 0 ? starttime + d : 0;
  return { version: 1, execution: { R_lite: [], nodelist: [], starttime, expiration, executor: SLURM_EXECUTOR } };
}

/** What conf.update would refuse in `[exec.slurm]`. */
export const checkConfig: ConfigCheck = checkWith(readSlurmConfig);

/** Registers the executor, conf.update, job.validate, job.state.sched, job.explain and plugin.query. */
export default function execSlurm(p: PluginContext): void {
  const executor = new SlurmExecutor(p.clock, defaultSlurmConfig(), (level, msg) =>
    level === "error" ? p.log.error(msg) : p.log.info(msg),
    p.hookUsers,
  );
  p.registerExecutor(SLURM_EXECUTOR, executor);
  p.onRemove(() => executor.close());
  p.on("conf.update", ({ conf }) => {
    try {
      executor.reconfigure(readSlurmConfig(conf));
    } catch (e) {
      if (isJobtapError(e, ErrorCode.CONFIG)) return p.reject(e.message);
      throw e;
    }
  });
  p.on("job.validate", (job) => {
    if (!wantsSlurm(job.jobspec)) return undefined;
    try {
      jobChoices(job.jobspec);
    } catch (e) {
      return p.reject((e as Error).message);
    }
    p.setFlag(job.id, "alloc-bypass");
    return undefined;
  });
  // The job router's Slurm destination: condor-router calls this topic with a route's
  // GridResource and the routed ad's Batch* values; the answer is the copy's exec choice.
  p.on("exec-slurm.route", (args) => {
    const grid = parseSlurmGridResource(String(args.grid_resource ?? ""));
    if (grid === undefined) return {};
    const routing = "error" in grid ? grid : slurmRouting(grid, (args.ad ?? {}) as RoutedAdValues);
    return "error" in routing ? { error: routing.error } : { routing };
  });
  // plugin query (and the /metrics gauge jobtap_slurm_jobs): tracked jobs per Slurm state.
  p.on("plugin.query", () => ({ slurm_states: Object.entries(executor.stateCounts()).map(([state, jobs]) => ({ state, jobs })) }));
  // job why: where the job is in Slurm (the last poll's state and Reason), or how it ended.
  p.on("job.explain", (job) => (wantsSlurm(job.jobspec) ? explainSlurm(p, executor, job) : undefined));
  p.on("job.state.sched", (job) => {
    if (!job.flags.includes("alloc-bypass") || !wantsSlurm(job.jobspec)) return undefined;
    // Queued behind this callback: the manager has taken R from the OUT by then.
    p.postEvent(job.id, "alloc", { bypass: true });
    return { R: slurmR(job, p.clock.now()) };
  });
}

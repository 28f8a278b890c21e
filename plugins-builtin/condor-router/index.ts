/**
 * condor-router (loadable by name, not a builtin): HTCondor's job router (spec htcondor.md
 * §4, §5) on the manager's clock. Idle jobs that match a route are claimed and a routed
 * copy, transformed by the route, is submitted to run on this host or on Slurm; the
 * original mirrors the copy through ordinary events. Configured from the plugin's `conf`
 * (TOML routes or a pasted HTCondor config, config.ts). Services: `condor-router.q` (owner
 * and guests: counts, and the routed pairs' ids and states, which `jobtap jobs` shows anyone). docs/condor-router.md.
 */
import type { Executor, PluginContext } from "jobtap/plugin";
import { readConf } from "./config.js";
import { explainRouting } from "./explain.js";
import { MIRROR_EXECUTOR, Router } from "./router.js";

export { checkConfig } from "./config.js";

/** Registers the mirror executor, conf.update (first: start), priority, events and services. */
export default function condorRouter(p: PluginContext): void {
  let router: Router | undefined;
  const mirror: Executor = {
    start: (job, report) => router?.mirrorAttached(job.id, report, false),
    reattach: (job, report) => router?.mirrorAttached(job.id, report, job.startedAt !== undefined),
    kill: (id) => router?.mirrorKilled(id),
  };
  p.registerExecutor(MIRROR_EXECUTOR, mirror);
  p.on("conf.update", () => {
    let read;
    try {
      read = readConf(p.conf);
    } catch (e) {
      return p.reject(`condor-router: ${(e as Error).message}`);
    }
    if (router === undefined) {
      router = new Router(p, read.cfg, read.timeLimitMs);
      void router.start();
    } else router.reconfigure(read.cfg);
    return undefined;
  });
  // Claimed originals wait for their copy: priority 0 keeps the local scheduler off them.
  const priority = (job: Parameters<Router["claimed"]>[0]) => (router?.claimed(job) ? { priority: 0 } : undefined);
  p.on("job.state.priority", priority);
  p.on("job.priority.get", priority);
  p.on("job.event.*", (job) => router?.onEvent(job));
  p.on("job.explain", (job) => (router === undefined ? undefined : explainRouting(router, job)));
  const q = () => ({ rows: router?.statusRows() ?? [], routes: router?.routeSummary() ?? [], pairs: router?.pairs() ?? [], warnings: router?.warnings() ?? [] });
  p.serviceRegister("q", q, { guests: true });
  p.serviceRegister("poll", async () => {
    await router?.pollOnce();
    return q();
  });
  p.on("plugin.query", q);
  p.onRemove(() => router?.stop());
}

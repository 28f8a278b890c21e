/**
 * condor-cron (loadable by name, not a builtin): HTCondor's daemon ClassAd hooks — startd
 * cron, schedd cron and benchmarks (spec htcondor.md §7) — on the manager's clock.
 *
 * Each configured job runs as a real process through the hook runner; its stdout records
 * (`- [tag] [update:bool]`) are published into the host ads as they complete: startd and
 * benchmark output into slot ads with HTCondor's merge rules, schedd output into the
 * machine ad. Other plugins see them at once (`p.slotAd`, `p.machineAd`), `jobtap ads`
 * shows them, and `condor-cron.list` (`jobtap cron list`) reports each job. docs/condor-cron.md.
 */
import type { PluginContext } from "jobtap/plugin";
import { readCronConfig } from "./config.js";
import { CronEngine } from "./engine.js";

export { checkConfig } from "./config.js";

/** Registers conf.update (first: start; later: HTCondor's reconfig), list and query. */
export default function condorCron(p: PluginContext): void {
  let engine: CronEngine | undefined;
  p.on("conf.update", () => {
    let cfg;
    try {
      cfg = readCronConfig(p.conf);
    } catch (e) {
      return p.reject(`condor-cron: ${(e as Error).message}`);
    }
    if (engine === undefined) {
      engine = new CronEngine(p, cfg);
      engine.start();
    } else engine.reconfigure(cfg);
    return undefined;
  });
  // Resource monitors (METRICS) keep per-job figures for the slots a job runs on.
  p.on("job.state.run", ({ id }) => engine?.jobStarted(id));
  p.on("job.state.cleanup", ({ id }) => engine?.jobEnded(id));
  // Open to every user, as `jobtap ads` is: it shows schedules, not the jobs' settings.
  p.serviceRegister("list", () => ({ jobs: engine?.list() ?? [], skipped: engine?.skipped() ?? [] }), { guests: true });
  p.on("plugin.query", () => ({ jobs: engine?.list() ?? [], skipped: engine?.skipped() ?? [] }));
  // Shutdown kills every running job (SIGTERM, SIGKILL 1 s later); ads go with the plugin.
  p.onRemove(() => engine?.stop());
}

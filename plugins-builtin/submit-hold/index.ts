/**
 * submit-hold (loadable by name, not a builtin; Flux's submit-hold.so): every new job is
 * held. When a job enters DEPEND with an urgency other than 0, the plugin posts `urgency`
 * 0 on the instance owner's behalf, so the job waits in SCHED with priority 0 until
 * `jobtap urgency ID N` releases it. Load it with `plugins = [{ load = "submit-hold" }]`.
 */
import type { PluginContext } from "jobtap/plugin";

/** Registers the job.state.depend hold. */
export default function submitHold(p: PluginContext): void {
  p.on("job.state.depend", (job) => {
    if (job.urgency !== 0) p.postEvent(job.id, "urgency", { userid: p.owner, urgency: 0 });
  });
}

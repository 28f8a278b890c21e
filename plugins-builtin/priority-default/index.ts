/**
 * .priority-default: priority = urgency (spec flux-jobtap §6.5). The job manager applies the
 * hold (urgency 0 → 0) and expedite (urgency 31 → max) overrides afterwards. Another
 * priority plugin loaded later wins, because the last `priority` in load order wins.
 */
import type { PluginContext } from "jobtap/plugin";

/** Registers the two priority topics. */
export default function priorityDefault(p: PluginContext): void {
  p.on("job.state.priority", (job) => ({ priority: job.urgency }));
  p.on("job.priority.get", (job) => ({ priority: job.urgency }));
}

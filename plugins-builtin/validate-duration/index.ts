/**
 * .validate-duration: rejects a job whose duration outlives the instance (spec flux-jobtap
 * §8). Flux reads the instance expiration from its own R; jobtap reads it from the
 * instance configuration, `[resource] expiration = <Unix time in seconds>` (0 or absent:
 * the instance does not expire), refreshed on every config reload.
 */
import type { ConfigCheck, PluginContext } from "jobtap/plugin";
import { formatFSD } from "jobtap/plugin";
import { jobDuration } from "../common/jobspec.js";
import { isTable } from "../common/config.js";

/** Reads `[resource] expiration`; a message naming the key on a bad value. */
export function readExpiration(conf: Record<string, unknown>): number | string {
  const resource = conf.resource;
  if (resource === undefined) return 0;
  if (!isTable(resource)) return "[resource]: must be a table";
  const e = resource.expiration;
  if (e === undefined) return 0;
  if (typeof e !== "number" || !(e >= 0) || !Number.isFinite(e)) {
    return `[resource].expiration: must be a Unix time in seconds >= 0, got ${JSON.stringify(e)}`;
  }
  return e;
}

/** What conf.update would refuse: a bad `[resource] expiration`. */
export const checkConfig: ConfigCheck = (conf) => {
  const e = readExpiration(conf);
  return typeof e === "string" ? [e] : [];
};

/** Registers conf.update and job.validate. */
export default function validateDuration(p: PluginContext): void {
  let expiration = 0;
  p.on("conf.update", ({ conf }) => {
    const e = readExpiration(conf);
    if (typeof e === "string") return p.reject(e);
    expiration = e;
    return undefined;
  });
  p.on("job.validate", (job) => {
    const duration = jobDuration(job.jobspec);
    if (duration === 0 || expiration === 0) return undefined;
    const remaining = expiration - p.clock.now() / 1000;
    if (duration <= remaining) return undefined;
    return p.reject(
      `job duration (${formatFSD(duration)}) exceeds remaining instance lifetime (${formatFSD(Math.max(0, remaining))})`,
    );
  });
}

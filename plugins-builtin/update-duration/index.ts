/**
 * .update-duration: allows updates of `attributes.system.duration` (spec flux-jobtap §8,
 * §10). A negative value is refused. A running job's duration may be changed only by the
 * instance owner, and only with `owner-allow-any` (plugin conf, default true). An owner's
 * update with `owner-allow-any` is marked `validated`, so it bypasses the duration limits;
 * a guest's update is re-validated through `job.validate` like a new submission.
 */
import type { PluginContext } from "jobtap/plugin";
import { ErrorCode, JobtapError } from "jobtap/plugin";

/** Reads `owner-allow-any` (boolean or 0/1); throws naming the key on anything else. */
export function ownerAllowAny(conf: Readonly<Record<string, unknown>>): boolean {
  const v = conf["owner-allow-any"];
  if (v === undefined) return true;
  if (typeof v === "boolean") return v;
  if (v === 0 || v === 1) return v === 1;
  throw new JobtapError(ErrorCode.CONFIG, `owner-allow-any: must be a boolean (or 0/1), got ${JSON.stringify(v)}`);
}

/** Registers the one update key. */
export default function updateDuration(p: PluginContext): void {
  const allowAny = ownerAllowAny(p.conf);
  p.on("job.update.attributes.system.duration", (args) => {
    const v = args.value;
    if (typeof v !== "number" || !Number.isFinite(v)) {
      return p.reject(`duration must be a number of seconds, got ${JSON.stringify(v)}`);
    }
    if (v < 0) return p.reject("duration must not be negative");
    const privileged = args.cred.owner && allowAny;
    if ((args.state === "RUN" || args.state === "CLEANUP") && !privileged) {
      return p.reject("duration update of running job requires instance owner privileges");
    }
    return privileged ? { validated: true } : {};
  });
}

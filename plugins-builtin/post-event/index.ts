/**
 * .post-event: a service that lets the instance owner post an arbitrary event to an active
 * job (spec flux-jobtap §8): `post-event.post` with `{ id, name, context? }`. Owner only,
 * as in Flux; the reply is `{}`.
 *
 * The host already labels a failure "plugin .post-event: service post: ", so the messages
 * here say only what was wrong; the job and the name are checked before posting so that the
 * usual mistakes are not reported through the host's own (doubly labelled) port error.
 */
import type { PluginContext } from "jobtap/plugin";
import { ErrorCode, formatJobId, JobtapError, parseJobId } from "jobtap/plugin";

/** Registers the `post` service. */
export default function postEvent(p: PluginContext): void {
  p.serviceRegister("post", async (payload) => {
    if (typeof payload !== "object" || payload === null) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, "payload must be an object");
    const { id, name, context } = payload as { id?: unknown; name?: unknown; context?: unknown };
    if (typeof id !== "string" && typeof id !== "number") throw new JobtapError(ErrorCode.BAD_JOBID, "id must be a job id");
    if (typeof name !== "string" || name.length === 0) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, "name must be a non-empty string");
    if (/\s/.test(name)) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `invalid event name ${JSON.stringify(name)}`);
    if (context !== undefined && (typeof context !== "object" || context === null || Array.isArray(context))) {
      throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `context of event "${name}" must be an object`);
    }
    const job = parseJobId(id);
    const args = await p.lookup(job);
    if (args === undefined) throw new JobtapError(ErrorCode.UNKNOWN_JOB, `unknown job ${formatJobId(job)}`);
    if (args.state === "INACTIVE") throw new JobtapError(ErrorCode.JOB_INACTIVE, `job ${formatJobId(job)} is inactive`);
    p.postEvent(job, name, context as Record<string, unknown> | undefined);
    return {};
  });
}

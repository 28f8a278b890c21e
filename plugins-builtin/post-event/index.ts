/**
 * .post-event: a service that lets the instance owner post an arbitrary event to an active
 * job (spec flux-jobtap §8): `post-event.post` with `{ id, name, context? }`. Owner only,
 * as in Flux; the reply is `{}`.
 */
import type { PluginContext } from "jobtap/plugin";
import { parseJobId } from "jobtap/plugin";

/** Registers the `post` service. */
export default function postEvent(p: PluginContext): void {
  p.serviceRegister("post", (payload) => {
    if (typeof payload !== "object" || payload === null) throw new Error("post: payload must be an object");
    const { id, name, context } = payload as { id?: unknown; name?: unknown; context?: unknown };
    if (typeof id !== "string" && typeof id !== "number") throw new Error("post: id must be a job id");
    if (typeof name !== "string" || name.length === 0) throw new Error("post: name must be a non-empty string");
    if (context !== undefined && (typeof context !== "object" || context === null || Array.isArray(context))) {
      throw new Error(`post: context of event "${name}" must be an object`);
    }
    p.postEvent(parseJobId(id), name, context as Record<string, unknown> | undefined);
    return {};
  });
}

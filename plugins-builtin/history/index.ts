/**
 * .history: each user's recent job ids, newest submission first (spec flux-jobtap §8).
 * A job joins its user's list at `job.new` (and, after a restart, at `job.inactive-add`)
 * and leaves it when purged from the inactive cache (`job.inactive-remove`).
 * Service `history.get`, open to guests: `{ slice?: "[a:b:c]" }` → `{ jobs: [f58 ids] }`
 * for the caller's own uid (uid 0 included).
 */
import type { JobArgs, PluginContext } from "jobtap/plugin";
import { ErrorCode, formatJobId, JobtapError } from "jobtap/plugin";
import { UserHistory } from "./list.js";
import { applySlice, parseSlice } from "./slice.js";

/** Registers the topics, the `get` service and plugin.query. */
export default function history(p: PluginContext): void {
  const users = new Map<number, UserHistory>();
  const add = (job: JobArgs): void => {
    let list = users.get(job.userid);
    if (list === undefined) users.set(job.userid, (list = new UserHistory()));
    list.add(job); // reads id and t_submit only
  };
  p.on("job.new", add);
  p.on("job.inactive-add", add);
  // Every job is in now (a restart's replay, or this plugin's load): no more growth to expect.
  p.on("plugin.replay-done", () => {
    for (const list of users.values()) list.trim();
  });
  p.on("job.inactive-remove", (job) => {
    const list = users.get(job.userid);
    if (list === undefined) return;
    list.remove(job);
    if (list.size === 0) users.delete(job.userid);
  });

  p.serviceRegister(
    "get",
    (payload, cred) => {
      const raw = (payload as { slice?: unknown } | null)?.slice;
      const list = users.get(cred.userid)?.newestFirst() ?? [];
      if (raw === undefined) return { jobs: list.map((e) => formatJobId(e.id)) };
      const s = typeof raw === "string" ? parseSlice(raw) : undefined;
      if (s === undefined) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `get: invalid slice ${JSON.stringify(raw)}`);
      return { jobs: applySlice(list, s).map((e) => formatJobId(e.id)) };
    },
    { guests: true },
  );

  p.on("plugin.query", () => ({
    users: Object.fromEntries([...users].map(([uid, list]) => [String(uid), list.size])),
  }));
}

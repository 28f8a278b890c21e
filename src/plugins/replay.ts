/**
 * The job replay a plugin gets when it is loaded at runtime or its isolated worker is
 * restarted (spec flux-jobtap §7.3 steps 5–6): `job.create` and `job.new` for every active
 * job plugins have been told of (`ManagerPort.activeJobs`: past NEW, or accepted and still
 * in NEW), the dependency callbacks of a job in DEPEND, then `plugin.replay-done`.
 */
import type { JobId } from "../manager/base/ids.js";
import { STATE_BIT } from "../manager/base/states.js";
import type { ManagerPort, StackResult } from "../manager/port/port.js";
import type { JobArgs } from "../manager/port/records.js";
import type { PluginRecord } from "./record.js";

/** What a replay needs from the host: the manager, and one plugin's handler for a topic. */
export interface ReplayHost {
  readonly mgr: ManagerPort;
  callOne(rec: PluginRecord, topic: string, args: unknown, id: JobId | undefined): StackResult | Promise<StackResult> | undefined;
}

/**
 * Replays every active job to `rec` in its sort order, then `plugin.replay-done`. The ids
 * replayed are added to `replayed` (see `replayLate`). Errors are the handlers' own (logged
 * by the dispatcher); nothing throws.
 */
export async function replayJobs(h: ReplayHost, rec: PluginRecord, replayed: Set<JobId>): Promise<void> {
  await replayEach(h, rec, sortJobs(h.mgr.activeJobs(), rec.sortOrder), replayed);
  await h.callOne(rec, "plugin.replay-done", { reason: "load" }, undefined);
}

/**
 * The jobs a restarted worker has not been replayed yet: those that reached job.new while
 * its replay ran (their own job.new went to the dead worker, which fails fast). Undefined,
 * synchronously, when there are none — so the caller can swap the worker in with no gap in
 * which a job's job.new could reach neither — else the replay of those.
 */
export function replayLate(h: ReplayHost, rec: PluginRecord, replayed: Set<JobId>): Promise<void> | undefined {
  const late = h.mgr.activeJobs().filter((j) => !replayed.has(j.id));
  return late.length === 0 ? undefined : replayEach(h, rec, sortJobs(late, rec.sortOrder), replayed);
}

async function replayEach(h: ReplayHost, rec: PluginRecord, jobs: JobArgs[], replayed: Set<JobId>): Promise<void> {
  const mgr = h.mgr;
  for (const job of jobs) {
    replayed.add(job.id);
    await h.callOne(rec, "job.create", mgr.lookup(job.id) ?? job, job.id);
    await h.callOne(rec, "job.new", mgr.lookup(job.id) ?? job, job.id);
    if (job.state === "DEPEND") await replayDepend(h, rec, job.id);
  }
}

/** A job in DEPEND: its `job.dependency.<scheme>` calls, then `job.state.depend` if still there. */
async function replayDepend(h: ReplayHost, rec: PluginRecord, id: JobId): Promise<void> {
  const mgr = h.mgr;
  const args = mgr.lookup(id);
  if (args === undefined || args.state !== "DEPEND") return;
  const deps = args.jobspec.attributes.system?.dependencies;
  for (const dep of Array.isArray(deps) ? deps : []) {
    const scheme = (dep as { scheme?: unknown }).scheme;
    if (typeof scheme !== "string") continue;
    const depArgs = { ...(mgr.lookup(id) ?? args), dependency: dep };
    await h.callOne(rec, `job.dependency.${scheme}`, depArgs, id);
  }
  const now = mgr.lookup(id);
  if (now === undefined || now.state !== "DEPEND") return;
  const entry = { timestamp: now.t_submit, name: "validate" };
  await h.callOne(rec, "job.state.depend", { ...now, entry, prev_state: "NEW" }, id);
}

/** Flux's load sort order (`LoadSortOrder`): as listed, or by state bit (or reversed), then by job id. */
function sortJobs(jobs: JobArgs[], order: PluginRecord["sortOrder"]): JobArgs[] {
  const byId = (a: JobArgs, b: JobArgs) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  if (order === "none") return jobs;
  const sign = order === "state" ? 1 : -1;
  return [...jobs].sort((a, b) => sign * (STATE_BIT[a.state] - STATE_BIT[b.state]) || byId(a, b));
}

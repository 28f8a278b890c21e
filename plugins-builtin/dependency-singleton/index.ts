/**
 * .dependency-singleton: scheme `singleton` (spec flux-jobtap §6.3). At most one active job
 * per user and job name; singleton jobs that find one wait in DEPEND, in a FIFO per
 * `<userid>:<name>`, and are released oldest first, one at a time.
 *
 * Every named job counts (singleton or not), from `job.new` until it becomes inactive; held
 * jobs count too, so they block. A waiting singleton is itself counted (from its job.new),
 * hence the release rule: when every counted job is a waiter, the oldest waiter runs.
 *
 * Replay (restart, runtime load) sees jobs one at a time in id order, so while a waiter is
 * requeued, a later-submitted job of its name that still blocks it is not counted yet.
 * Releases are therefore held from setup (replay follows it: at restart the manager's
 * restart callbacks, at runtime load the host's replay) until `plugin.replay-done`, when
 * every job has been counted, then applied.
 */
import type { JobArgs, JobId, PluginContext } from "jobtap/plugin";
import { formatJobId } from "jobtap/plugin";

const DESCRIPTION = "singleton";

interface Group {
  /** Active named jobs with this key. */
  count: number;
  /** Waiting singletons, oldest first. */
  singletons: JobId[];
}

function jobName(job: JobArgs): string | undefined {
  const n = (job.jobspec.attributes.system?.job as { name?: unknown } | undefined)?.name;
  return typeof n === "string" ? n : undefined;
}

function keyOf(job: JobArgs): string | undefined {
  const name = jobName(job);
  return name === undefined ? undefined : `${job.userid}:${name}`;
}

/** Registers the scheme, the counting topics and plugin.query. */
export default function dependencySingleton(p: PluginContext): void {
  const groups = new Map<string, Group>();
  /** Jobs counted, so a job is counted once even if job.new is replayed. */
  const counted = new Map<JobId, string>();
  const group = (key: string): Group => {
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = { count: 0, singletons: [] }));
    return g;
  };

  /** Until replay is done: the keys whose release is held. */
  let held: Set<string> | undefined = new Set();
  p.on("plugin.replay-done", () => {
    const keys = held;
    held = undefined;
    for (const key of keys ?? []) releaseOldest(key);
  });

  const releaseOldest = (key: string): void => {
    if (held !== undefined) return void held.add(key);
    const g = groups.get(key);
    if (g === undefined || g.singletons.length === 0) return;
    // Waiters are counted from their job.new on; release when nothing else is counted.
    const waitingCounted = g.singletons.filter((s) => counted.get(s) === key).length;
    if (g.count - waitingCounted !== 0) return;
    const id = g.singletons.shift()!;
    try {
      p.dependencyRemove(id, DESCRIPTION);
    } catch (e) {
      p.log.warn(`${formatJobId(id)}: cannot release singleton: ${(e as Error).message}`);
    }
  };

  p.on("job.dependency.singleton", (job) => {
    const key = keyOf(job);
    if (key === undefined) return p.reject("singleton jobs require a job name");
    const g = group(key);
    if (g.singletons.includes(job.id)) return undefined;
    // Restart or reload: the dependency is still outstanding from the eventlog; requeue it.
    if (job.dependencies.includes(DESCRIPTION)) {
      g.singletons.push(job.id);
      releaseOldest(key); // held until plugin.replay-done, if replay is still running
      return undefined;
    }
    const others = g.count - (counted.has(job.id) ? 1 : 0);
    if (others === 0) return undefined;
    p.dependencyAdd(job.id, DESCRIPTION);
    g.singletons.push(job.id);
    return undefined;
  });

  p.on("job.new", (job) => {
    const key = keyOf(job);
    if (key === undefined || counted.has(job.id)) return;
    counted.set(job.id, key);
    group(key).count++;
    releaseOldest(key);
  });

  const uncount = (id: JobId): void => {
    // Runs twice for every job that ends; most jobs were never counted (no job name).
    const key = counted.size === 0 ? undefined : counted.get(id);
    if (key === undefined) return;
    counted.delete(id);
    const g = group(key);
    g.count--;
    g.singletons = g.singletons.filter((s) => s !== id);
    if (g.count === 0 && g.singletons.length === 0) groups.delete(key);
    else releaseOldest(key);
  };
  p.on("job.state.inactive", ({ id }) => uncount(id));
  // A rejected job never reached job.new (not counted), but may sit in a FIFO.
  p.on("job.destroy", ({ id }) => {
    uncount(id);
    if (groups.size === 0) return;
    for (const g of groups.values()) g.singletons = g.singletons.filter((s) => s !== id);
  });

  // job.explain: a waiting singleton names its group and what blocks it.
  p.on("job.explain", (job) => {
    const key = counted.get(job.id) ?? keyOf(job);
    const g = key === undefined ? undefined : groups.get(key);
    if (g === undefined || !g.singletons.includes(job.id)) return undefined;
    const place = g.singletons.indexOf(job.id);
    const others = g.count - g.singletons.filter((s) => counted.get(s) === key).length;
    const name = jobName(job) ?? "";
    const text = others > 0
      ? `singleton: ${others} other active job(s) named "${name}" of this user run or wait first`
      : `singleton: ${place} older singleton(s) named "${name}" go first`;
    return {
      reasons: [{
        layer: "state",
        code: "singleton",
        key: `dependency:${DESCRIPTION}`,
        text,
        figures: { name, active: others, waiting_ahead: place },
      }],
    };
  });

  p.on("plugin.query", () =>
    Object.fromEntries(
      [...groups].map(([k, g]) => [k, { count: g.count, singletons: g.singletons.map((id) => formatJobId(id)) }]),
    ),
  );
}

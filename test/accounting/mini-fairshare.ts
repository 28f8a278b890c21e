// mini-fairshare.ts: each user's job-seconds, decayed with a half-life; priority 2^(-U/S).
import type { JobArgs, PluginContext } from "jobtap/plugin";
import { withRead } from "jobtap/plugin";

type Usage = Record<string, { seconds: number; at: number }>; // uid → usage as of `at` (ms)

export default function miniFairshare(p: PluginContext): void {
  const halfLife = ((p.conf.halfLifeDays as number | undefined) ?? 7) * 86400_000;
  const shares = (p.conf.shares ?? {}) as Record<string, number>; // uid → shares (default 1)
  let usage: Usage = {};
  let factor = new Map<number, number>();

  const decayed = (uid: string) => {
    const u = usage[uid];
    return u === undefined ? 0 : u.seconds * 2 ** (-(p.clock.now() - u.at) / halfLife);
  };
  // 2^(-U/S): U the user's part of all usage, S the user's part of all shares.
  const recompute = () => {
    const uids = [...new Set([...Object.keys(usage), ...Object.keys(shares)])];
    const total = uids.reduce((s, u) => s + decayed(u), 0);
    const allShares = uids.reduce((s, u) => s + (shares[u] ?? 1), 0);
    factor = new Map(uids.map((u) => [Number(u), total === 0 ? 1 : 2 ** (-(decayed(u) / total) / ((shares[u] ?? 1) / allShares))]));
    p.reprioritizeAll();
  };
  const priority = (job: JobArgs) => ({ priority: Math.round(100000 * (factor.get(job.userid) ?? 1)) + job.urgency });

  // Usage survives restarts in the plugin's store.
  p.on("conf.update", () =>
    withRead(p.state.get<Usage>("usage"), (saved) => {
      usage = saved ?? {};
      recompute();
      return undefined;
    }),
  );
  // Charge each job at CLEANUP: seconds since the start recorded in its R.
  p.on("job.state.cleanup", (job) => {
    const start = (job.R as { execution?: { starttime?: number } } | undefined)?.execution?.starttime;
    if (start === undefined) return; // never ran
    const uid = String(job.userid);
    usage[uid] = { seconds: decayed(uid) + p.clock.now() / 1000 - start, at: p.clock.now() };
    p.state.set("usage", usage);
    recompute();
  });
  p.on("job.state.priority", priority);
  p.on("job.priority.get", priority);
  p.on("plugin.query", () => ({ factor: Object.fromEntries(factor), usage }));
}

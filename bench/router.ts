/**
 * Job router benchmark (issue 15): one condor-router poll over `--jobs` idle job ads
 * (default 100,000) and 10 routes, on a real in-memory manager (the test host, simulated
 * clock) whose only core is busy, so every job waits in SCHED; the jobs belong to four users,
 * so their copies stay within the manager's per-user job limit.
 *
 * Two polls are timed, each from the `condor-router.poll` service call until every copy it
 * submitted is durable:
 * - `route`: jobs spread over the 10 routes (`Site = i % 10`), HTCondor's default limits
 *   (MaxJobs 100, MaxIdleJobs 50): the poll claims and submits a copy for 50 jobs per route
 *   and stops scanning once every route is full; `routed_jobs_per_s` is its rate;
 * - `scan`: no job matches any route: the poll evaluates the umbrella constraint and all 10
 *   REQUIREMENTS on every one of the ads (the worst case for a poll); `scan_first_poll_ms`
 *   also builds every job ad (the first poll after the jobs arrived), `scan_poll_ms` is the
 *   next poll, with the ads cached (the steady state).
 * Goal: ≤ 200 ms per poll. Last stdout line: JSON.
 */
import { createTestHost, testJobspec } from "../src/testhost.js";
import { arg } from "./lib/common.js";

interface Poll {
  poll_ms: number;
  /** CPU time of this process during the poll (what the poll costs on a loaded machine). */
  cpu_ms: number;
  routed: number;
}

async function polls(n: number, site: (i: number) => number, rounds: number, log: (line: string) => void): Promise<Poll[]> {
  const routes: Record<string, { transform: string }> = {};
  for (let r = 0; r < 10; r++) routes[`Site${r}`] = { transform: `REQUIREMENTS WantJobRouter && Site == ${r}\nSET RoutedSite = ${r}\n` };
  const h = await createTestHost({ plugin: "condor-router", conf: { routes, polling_period: 1_000_000 }, resources: { cores: 1 } });
  try {
    await h.submit({ runDuration: 1_000_000 });
    const jobs = [];
    // Four users, so the copies stay within the manager's per-user job limit (100,000).
    for (let i = 0; i < n; i++) jobs.push({ jobspec: testJobspec({ classad: { WantJobRouter: "true", Site: String(site(i)) } }), opts: { userid: 60_000 + (i % 4) } });
    log(`submitting ${n} jobs`);
    for (let i = 0; i < jobs.length; i += 10_000) {
      const batch = h.manager.submitMany(jobs.slice(i, i + 10_000));
      let done = false;
      void batch.then(() => (done = true));
      while (!done) await h.clock.advance(10);
    }
    await h.advance(10);
    const polls: Poll[] = [];
    for (let k = 0; k < rounds; k++) {
      log(`poll ${k + 1}`);
      const t0 = process.hrtime.bigint();
      const c0 = process.cpuUsage();
      const poll = h.plugins.callService("condor-router", "poll", {}, { userid: h.manager.owner, owner: true });
      let done = false;
      void poll.then(() => (done = true));
      while (!done) await h.clock.advance(10);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const cpu = process.cpuUsage(c0);
      const { routes: rows } = (await poll) as { routes: Array<{ current: number }> };
      polls.push({ poll_ms: Math.round(ms * 10) / 10, cpu_ms: Math.round((cpu.user + cpu.system) / 100) / 10, routed: rows.reduce((s, r) => s + r.current, 0) });
    }
    return polls;
  } finally {
    await h.close();
  }
}

export async function main(args: string[]): Promise<void> {
  const n = Number(arg(args, "jobs", "100000"));
  const log = (line: string) => process.stderr.write(line + "\n");
  const [route] = await polls(n, (i) => i % 10, 1, log);
  const [scanFirst, scan] = await polls(n, () => 99, 2, log);
  process.stdout.write(
    JSON.stringify({
      jobs: n,
      routes: 10,
      route_poll_ms: route!.poll_ms,
      route_poll_cpu_ms: route!.cpu_ms,
      routed: route!.routed,
      routed_jobs_per_s: Math.round(route!.routed / (route!.poll_ms / 1000)),
      scan_first_poll_ms: scanFirst!.poll_ms,
      scan_first_poll_cpu_ms: scanFirst!.cpu_ms,
      scan_poll_ms: scan!.poll_ms,
      scan_poll_cpu_ms: scan!.cpu_ms,
      goal_poll_ms: 200,
    }) + "\n",
  );
}

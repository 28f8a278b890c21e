/**
 * Job router benchmark (issue 15): one condor-router poll over `--jobs` idle job ads
 * (default 100,000) and 10 routes, on a real in-memory manager (the test host, simulated
 * clock) whose only core is busy, so every job waits in SCHED.
 *
 * Two polls are timed, each from the `condor-router.poll` service call until every copy it
 * submitted is durable:
 * - `route`: jobs spread over the 10 routes (`Site = i % 10`), HTCondor's default limits
 *   (MaxJobs 100, MaxIdleJobs 50): the poll claims and submits a copy for 50 jobs per route
 *   and stops scanning once every route is full; `routed_jobs_per_s` is its rate;
 * - `scan`: no job matches any route: the poll evaluates the umbrella constraint and all 10
 *   REQUIREMENTS on every one of the ads (the worst case for a poll).
 * Goal: ≤ 200 ms per poll. Last stdout line: JSON.
 */
import { createTestHost, testJobspec } from "../src/plugins/testhost.js";
import { arg } from "./lib/common.js";

interface Poll {
  poll_ms: number;
  routed: number;
}

async function onePoll(n: number, site: (i: number) => number, log: (line: string) => void): Promise<Poll> {
  const routes: Record<string, { transform: string }> = {};
  for (let r = 0; r < 10; r++) routes[`Site${r}`] = { transform: `REQUIREMENTS WantJobRouter && Site == ${r}\nSET RoutedSite = ${r}\n` };
  const h = await createTestHost({ plugin: "condor-router", conf: { routes, polling_period: 1_000_000 }, resources: { cores: 1 } });
  try {
    await h.submit({ runDuration: 1_000_000 });
    const jobs = [];
    for (let i = 0; i < n; i++) jobs.push({ jobspec: testJobspec({ classad: { WantJobRouter: "true", Site: String(site(i)) } }) });
    log(`submitting ${n} jobs`);
    for (let i = 0; i < jobs.length; i += 10_000) {
      const batch = h.manager.submitMany(jobs.slice(i, i + 10_000));
      let done = false;
      void batch.then(() => (done = true));
      while (!done) await h.clock.advance(10);
    }
    await h.advance(10);
    log("polling");
    const t0 = process.hrtime.bigint();
    const poll = h.plugins.callService("condor-router", "poll", {}, { userid: h.manager.owner, owner: true });
    let done = false;
    void poll.then(() => (done = true));
    while (!done) await h.clock.advance(10);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const { routes: rows } = (await poll) as { routes: Array<{ current: number }> };
    return { poll_ms: Math.round(ms * 10) / 10, routed: rows.reduce((s, r) => s + r.current, 0) };
  } finally {
    await h.close();
  }
}

export async function main(args: string[]): Promise<void> {
  const n = Number(arg(args, "jobs", "100000"));
  const log = (line: string) => process.stderr.write(line + "\n");
  const route = await onePoll(n, (i) => i % 10, log);
  const scan = await onePoll(n, () => 99, log);
  process.stdout.write(
    JSON.stringify({
      jobs: n,
      routes: 10,
      route_poll_ms: route.poll_ms,
      routed: route.routed,
      routed_jobs_per_s: Math.round(route.routed / (route.poll_ms / 1000)),
      scan_poll_ms: scan.poll_ms,
      goal_poll_ms: 200,
    }) + "\n",
  );
}

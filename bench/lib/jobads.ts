/**
 * The job-ad measurement shared by `bench/jobads.ts` and `bench/hooks.ts` (issue 12): the
 * job ads of N jobs folded from real eventlogs through the manager's transition function
 * (a mix of pending, held, running and finished jobs), each with its own jobspec carrying
 * two user attributes, built by the manager's JobAds cache.
 *
 * - `job_ads_per_s`: builds after an event (the job's core changed, its user attributes
 *   were parsed at its first build): what a poll pays for a job that moved since the last;
 * - `first_build_per_s`: first builds, parsing each job's user attributes too;
 * - `cached_per_s`: a poll where no job had an event since the last one.
 * Each figure is the median of `rounds` rounds.
 */
import type { JobId } from "../../src/manager/base/ids.js";
import { newActiveJob, type ActiveJob } from "../../src/manager/engine/job.js";
import { JobAds } from "../../src/manager/jobads.js";
import type { EventEntry, Jobspec } from "../../src/manager/port/records.js";
import { newJobCore, transition } from "../../src/manager/core/transition.js";

function jobspec(i: number): Jobspec {
  return {
    version: 1,
    resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 + (i % 4) }, { type: "memory", count: 512, unit: "MB" }] }],
    tasks: [{ command: ["/usr/bin/simulate", "--seed", String(i), "--out", "result file.dat"], slot: "task", count: { per_slot: 1 } }],
    attributes: {
      system: { duration: 0, cwd: "/home/alice/run" },
      user: { classad: { WantJobRouter: "true", Project: `"physics-${i % 10}"` } },
    },
  };
}

/** An eventlog cut at one of several points of a normal life. */
function eventlog(i: number): EventEntry[] {
  const t = 1_700_000_000 + i;
  const all: EventEntry[] = [
    { timestamp: t, name: "submit", context: { userid: 1000, urgency: i % 7 === 0 ? 0 : 16, flags: 0, version: 1 } },
    { timestamp: t, name: "validate" },
    { timestamp: t, name: "depend" },
    { timestamp: t, name: "priority", context: { priority: 16 } },
    { timestamp: t + 1, name: "alloc", context: { R: { version: 1, execution: { R_lite: [] } } } },
    { timestamp: t + 2, name: "start" },
    { timestamp: t + 60, name: "finish", context: { status: i % 3 === 0 ? 256 : 0 } },
    { timestamp: t + 60, name: "release", context: { ranks: "all", final: true } },
    { timestamp: t + 61, name: "free" },
    { timestamp: t + 61, name: "clean" },
  ];
  const cut = i % 7 === 0 ? 4 : [4, 6, 10][i % 3]!;
  return all.slice(0, cut);
}

function makeJobs(n: number): ActiveJob[] {
  const jobs: ActiveJob[] = [];
  for (let i = 0; i < n; i++) {
    let core = newJobCore(BigInt(1_000_000 + i) as JobId, jobspec(i));
    const log = eventlog(i);
    for (const e of log) {
      const r = transition(core, e);
      if (r.ok) core = r.job;
    }
    const job = newActiveJob(core);
    job.eventlog = log;
    jobs.push(job);
  }
  return jobs;
}

function rate(n: number, fn: () => void): number {
  const t0 = process.hrtime.bigint();
  fn();
  return n / (Number(process.hrtime.bigint() - t0) / 1e9);
}

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

/** The three figures for `n` jobs, medians of `rounds` rounds; progress goes to `log`. */
export function measureJobAds(n: number, rounds: number, log: (line: string) => void): { job_ads_per_s: number; first_build_per_s: number; cached_per_s: number } {
  const first: number[] = [];
  const rebuilt: number[] = [];
  const cached: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const jobs = makeJobs(n);
    const byId = new Map(jobs.map((j) => [j.core.id, j]));
    const ads = new JobAds({ hostname: "bench.example.org", outputDir: "/var/lib/jobtap/jobs", active: (id) => byId.get(id), inactive: () => undefined });
    first.push(rate(n, () => jobs.forEach((j) => ads.of(j))));
    cached.push(rate(n, () => jobs.forEach((j) => ads.of(j))));
    // Every job had an event (same jobspec), as after an `annotations` event: the engine
    // bumps the job's revision.
    for (const j of jobs) j.revision++;
    rebuilt.push(rate(n, () => jobs.forEach((j) => ads.of(j))));
    log(`job ads round ${r + 1}: first ${first[r]!.toFixed(0)}/s, rebuilt ${rebuilt[r]!.toFixed(0)}/s, cached ${cached[r]!.toFixed(0)}/s`);
  }
  return {
    job_ads_per_s: Math.round(median(rebuilt)),
    first_build_per_s: Math.round(median(first)),
    cached_per_s: Math.round(median(cached)),
  };
}

/**
 * `npm run bench -- launcher [--jobs N] [--cores N] [--rounds N] [--user NAME]`
 *
 * Local jobs per second through the privileged launcher (a multi-user instance's path:
 * requests over its pipes, the launcher spawns, pid and exit come back) against today's
 * direct spawn in the manager's own process, in the same run. Each round runs N jobs
 * (default 500) of `true` on `--cores` cores (default 8) with an in-memory store, from
 * submit to INACTIVE; rounds alternate the two paths and the fastest round of each is kept.
 * The jobs run as this process's user, or as `--user NAME` (root only: both paths then
 * switch users with setpriv, so the ratio isolates the launcher's channel).
 *
 * Prints {"jobs", "direct_jobs_per_s", "launcher_jobs_per_s", "ratio", "rounds", "load"}.
 */
import { loadavg, tmpdir } from "node:os";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createJobManager } from "../src/manager/manager.js";
import type { JobId } from "../src/manager/base/ids.js";
import { startLauncherClient } from "../src/manager/exec/launcher-client.js";
import { passwdEntry, type UserLauncher } from "../src/manager/exec/run-as.js";
import type { Jobspec } from "../src/manager/port/records.js";
import { arg } from "./lib/common.js";

function job(cwd: string): Jobspec {
  return {
    version: 1,
    resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
    tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
    attributes: { system: { duration: 0, cwd, environment: { PATH: "/usr/bin:/bin" } } },
  };
}

/** One round: N jobs submitted at once, run to INACTIVE; jobs/s. */
async function round(n: number, cores: number, userid: number | undefined, launcher?: UserLauncher): Promise<number> {
  const dir = mkdtempSync(`${tmpdir()}/jobtap-bench-launcher-`);
  const m = await createJobManager({ store: "memory", resources: { cores, gpus: 0, memory: 1 << 30 }, statedir: dir, ...(launcher ? { launcher } : {}) });
  try {
    const t0 = performance.now();
    // Another user's jobs write their default output into their cwd: this temp dir, open to them.
    if (userid !== undefined) chmodSync(dir, 0o1777);
    const spec = job(dir);
    const ids: JobId[] = await Promise.all(Array.from({ length: n }, () => m.submit(spec, userid === undefined ? {} : { userid })));
    await Promise.all(ids.map((id) => m.wait(id)));
    return n / ((performance.now() - t0) / 1000);
  } finally {
    await m.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the bench (see the header). */
export async function main(args: string[]): Promise<void> {
  const n = Number(arg(args, "jobs", "500"));
  const cores = Number(arg(args, "cores", "8"));
  const rounds = Number(arg(args, "rounds", "3"));
  const userName = arg(args, "user", "");
  const user = userName === "" ? undefined : passwdEntry(userName);
  if (userName !== "" && !user) throw new Error(`--user ${userName}: no such user`);
  const client = startLauncherClient({ allowRoot: true, log: (l, msg) => process.stderr.write(`launcher ${l}: ${msg}\n`) });
  await client.ready();
  const direct: number[] = [];
  const through: number[] = [];
  try {
    await round(Math.min(n, 100), cores, user?.uid); // warm up
    for (let r = 0; r < rounds; r++) {
      direct.push(await round(n, cores, user?.uid));
      through.push(await round(n, cores, user?.uid, client));
      process.stderr.write(`round ${r + 1}: direct ${direct.at(-1)!.toFixed(0)} jobs/s, launcher ${through.at(-1)!.toFixed(0)} jobs/s\n`);
    }
  } finally {
    client.close();
  }
  const best = (xs: number[]) => Math.max(...xs);
  const out = {
    jobs: n,
    cores,
    user: user?.name ?? "self",
    direct_jobs_per_s: Math.round(best(direct)),
    launcher_jobs_per_s: Math.round(best(through)),
    ratio: Number((best(through) / best(direct)).toFixed(3)),
    rounds: { direct: direct.map(Math.round), launcher: through.map(Math.round) },
    load: loadavg().map((x) => Number(x.toFixed(2))),
  };
  console.log(JSON.stringify(out));
}

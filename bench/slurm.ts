/**
 * `npm run bench -- slurm [--jobs N (1000)] [--concurrency C (4)] [--poll P (0.5s)] [--cpus S (64)] [--runs R (1)]`
 *
 * jobtap's overhead on top of Slurm: N jobs (`true`) submitted through jobtap's slurm
 * executor against the same N submitted with sbatch alone (the same batch script, C sbatch
 * processes at once in both), each on a fresh single-node cluster started by
 * scripts/slurm-cluster.sh with S job slots (needs slurm-wlm and munge; slurmctld starts jobs
 * once a second, so the real two cores would make both sides wait on that alone). R runs of
 * each, alternating (sbatch alone, jobtap, sbatch alone, ...), so load from elsewhere falls
 * on both sides alike; rates are the medians. Both sides are watched the same way: one
 * squeue every 100 ms from a separate small watcher process (so the watcher costs the same
 * whichever process is measured). Measured:
 *   submit_per_s      jobs handed to slurmctld per second (first submit → last Slurm id)
 *   end_to_end_per_s  jobs per second from the first submit until the last one is done
 *                     (squeue shows all ended; for jobtap also all INACTIVE)
 *   overhead          1 − jobtap rate / sbatch rate (goal: ≤ 0.10)
 *   client_cpu_ms_per_job  CPU time per job, during submission, of the submitting side:
 *                     the bench process and its processes (sbatch alone: the sbatch
 *                     processes; jobtap: the manager, its helper and the sbatch/squeue it
 *                     runs), watcher excluded; from /proc, so load elsewhere does not count
 *   own_cpu_ms_per_job     of which the bench process itself (sbatch alone: spawning;
 *                     jobtap: the manager and executor, spawning included)
 *   ctld_cpu_ms_per_job    slurmctld's and munged's CPU time per job in the same window
 *   squeue_calls      squeue processes jobtap ran (one per poll, never one per job)
 *   runs_submit_ratio jobtap's submit rate / sbatch alone's, per alternating pair of runs,
 *                     with runs_load1 (the 1-minute load when each pair began): a pair
 *                     that ran under load elsewhere shows as such instead of moving the
 *                     medians unexplained
 * Last stdout line: one JSON object with all of it.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { JobId } from "../src/manager/base/ids.js";
import { createJobManager } from "../src/manager/manager.js";
import type { Jobspec } from "../src/manager/port/records.js";
import { jobtapPlugins } from "../plugins-builtin/index.js";
import { arg } from "./lib/common.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SCRIPT = join(ROOT, "scripts", "slurm-cluster.sh");
const SBIN_PATH = `${process.env.PATH ?? ""}:/usr/sbin:/sbin`;

/** A fresh cluster for one measurement (`cpus` job slots); `stop` removes it. */
function startCluster(cpus: number): { dir: string; conf: string; stop: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "jobtap-bench-slurm-"));
  const env = { ...process.env, PATH: SBIN_PATH, SLURM_CLUSTER_CPUS: String(cpus) };
  const r = spawnSync("bash", [SCRIPT, "start", dir], { env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`slurm-cluster.sh start: ${r.stderr}`);
  return {
    dir,
    conf: join(dir, "slurm.conf"),
    stop: () => {
      spawnSync("bash", [SCRIPT, "stop", dir], { env, encoding: "utf8" });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs one command; resolves with its stdout (rejects on failure). */
function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    c.stdout.on("data", (d) => (out += d));
    c.stderr.on("data", (d) => (err += d));
    c.stdin.on("error", () => undefined);
    c.stdin.end(input ?? "");
    c.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd}: ${err.trim()}`))));
  });
}

const SCRIPT_TEXT = "#!/bin/sh\n# submitted by jobtap\nexec true\n";

/** The watcher: one squeue every 100 ms, printing "<jobs> <ended>" after each. */
const WATCHER = `
const { execFile } = require("node:child_process");
const ENDED = new Set(${JSON.stringify(["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "OUT_OF_MEMORY", "DEADLINE"])});
const tick = () => execFile("squeue", ["--noheader", "--states=all", "--Format=State"], { maxBuffer: 1 << 26 }, (err, out) => {
  const lines = err ? [] : out.split("\\n").map((l) => l.trim()).filter((l) => l !== "");
  process.stdout.write(lines.length + " " + lines.filter((l) => ENDED.has(l)).length + "\\n");
  setTimeout(tick, 100);
});
tick();
process.stdin.on("end", () => process.exit(0)).resume();
`;

/**
 * Watches the cluster the same way for both sides (a separate process, see WATCHER). Resolves
 * once it has seen one squeue; `until(n, done)` then resolves with the seconds since `t0` at
 * which slurmctld first had all `n` jobs (submitted) and at which none was left unfinished
 * and `done()` held (ended). `atSubmitted` runs once, when all are submitted.
 */
async function startWatcher(conf: string): Promise<{
  pid: number;
  until: (n: number, t0: number, done: () => boolean, atSubmitted: () => void) => Promise<{ submitS: number; endS: number }>;
  stop: () => void;
}> {
  const child = spawn(process.execPath, ["-e", WATCHER], { env: { ...process.env, SLURM_CONF: conf }, stdio: ["pipe", "pipe", "inherit"] });
  let onLine: (jobs: number, ended: number) => void = () => undefined;
  let buf = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    buf += d;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const [jobs, ended] = buf.slice(0, i).split(" ").map(Number);
      buf = buf.slice(i + 1);
      onLine(jobs!, ended!);
    }
  });
  await new Promise<void>((r) => (onLine = () => r()));
  return {
    pid: child.pid!,
    until: (n, t0, done, atSubmitted) =>
      new Promise((resolve) => {
        let submitS = 0;
        onLine = (jobs, ended) => {
          const now = (performance.now() - t0) / 1000;
          if (submitS === 0 && jobs >= n) {
            submitS = now;
            atSubmitted();
          }
          if (submitS > 0 && ended === jobs && done()) {
            onLine = () => undefined;
            resolve({ submitS, endS: now });
          }
        };
      }),
    stop: () => child.stdin.end(),
  };
}

/** utime+stime+cutime+cstime of a process, in ms (0 if it is gone). */
function procCpuMs(pid: number | "self"): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / TICKS;
  } catch {
    return 0;
  }
}
const TICKS = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;

/**
 * CPU ms of this process and every live descendant, except the subtree of `exclude`.
 * Children already reaped are in this process's (or a descendant's) cutime/cstime.
 */
function clientCpuMs(exclude: number): number {
  const parent = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const inTree = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) {
      if (p === exclude) return false;
      if (p === process.pid) return true;
    }
    return false;
  };
  let ms = procCpuMs("self");
  for (const pid of parent.keys()) if (pid !== exclude && inTree(pid)) ms += procCpuMs(pid);
  return ms;
}

/** CPU ms of the cluster's controller side (slurmctld and munged). */
function ctldCpuMs(dir: string): number {
  let ms = 0;
  for (const d of ["slurmctld", "munged"]) ms += procCpuMs(Number(readFileSync(join(dir, "run", `${d}.pid`), "utf8").trim()));
  return ms;
}

/** One side's figures for one run. */
interface RunFigures {
  submitS: number;
  endS: number;
  clientCpuMs: number;
  ownCpuMs: number;
  ctldCpuMs: number;
}

/** Measures one side: `submit` starts at t0; CPU is counted from t0 until all are submitted. */
async function measure(
  n: number,
  cluster: { dir: string; conf: string },
  submit: () => Promise<void>,
  done: () => boolean,
): Promise<RunFigures> {
  const watcher = await startWatcher(cluster.conf);
  try {
    const ownMs = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    const cpu0 = { client: clientCpuMs(watcher.pid), own: ownMs(), ctld: ctldCpuMs(cluster.dir) };
    const cpu = { client: 0, own: 0, ctld: 0 };
    const atSubmitted = () => {
      cpu.client = clientCpuMs(watcher.pid) - cpu0.client;
      cpu.own = ownMs() - cpu0.own;
      cpu.ctld = ctldCpuMs(cluster.dir) - cpu0.ctld;
    };
    const t0 = performance.now();
    // n + 1: the cluster's probe job is listed too.
    const [times] = await Promise.all([watcher.until(n + 1, t0, done, atSubmitted), submit()]);
    return { ...times, clientCpuMs: cpu.client, ownCpuMs: cpu.own, ctldCpuMs: cpu.ctld };
  } finally {
    watcher.stop();
  }
}

/** sbatch alone: N submissions, C at a time. */
async function sbatchAlone(n: number, concurrency: number, cpus: number): Promise<RunFigures> {
  const cluster = startCluster(cpus);
  try {
    const env = { ...process.env, SLURM_CONF: cluster.conf };
    const args = ["--parsable", "--ntasks=1", "--cpus-per-task=1", "--output=/dev/null", "--export=ALL"];
    let next = 0;
    const worker = async () => {
      while (next < n) {
        next++;
        await run("sbatch", args, env, SCRIPT_TEXT);
      }
    };
    const submit = async () => void (await Promise.all(Array.from({ length: concurrency }, worker)));
    return await measure(n, cluster, submit, () => true);
  } finally {
    cluster.stop();
  }
}

/** squeue behind a wrapper that counts its calls; sbatch/scancel/sacct link to the real ones. */
function countingBindir(dir: string): { bindir: string; squeueCalls: () => number } {
  const bindir = join(dir, "bin");
  mkdirSync(bindir);
  const counter = join(dir, "squeue-calls");
  writeFileSync(counter, "");
  const real = (cmd: string) => spawnSync("sh", ["-c", `command -v ${cmd}`], { encoding: "utf8" }).stdout.trim();
  // Links, not wrappers: sbatch must cost exactly what it costs alone.
  for (const cmd of ["sbatch", "scancel", "sacct"]) symlinkSync(real(cmd), join(bindir, cmd));
  writeFileSync(join(bindir, "squeue"), `#!/bin/sh\necho >> ${counter}\nexec ${real("squeue")} "$@"\n`);
  chmodSync(join(bindir, "squeue"), 0o755);
  return { bindir, squeueCalls: () => readFileSync(counter, "utf8").length };
}

/** The same N jobs through jobtap (SQLite store, builtins, the slurm executor). */
async function throughJobtap(n: number, concurrency: number, poll: string, cpus: number): Promise<RunFigures & { squeueCalls: number }> {
  const cluster = startCluster(cpus);
  const statedir = mkdtempSync(join(tmpdir(), "jobtap-bench-slurm-state-"));
  try {
    const { bindir, squeueCalls } = countingBindir(statedir);
    const config = { exec: { slurm: { bindir, "slurm-conf": cluster.conf, "poll-period": poll, "submit-concurrency": concurrency } } };
    const m = await createJobManager({ statedir, config, plugins: jobtapPlugins({ config, pluginPath: [] }), log: () => undefined });
    const jobspec: Jobspec = {
      version: 1,
      resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
      tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
      attributes: {
        system: {
          environment: { ...process.env } as Record<string, string>,
          shell: { options: { output: { stdout: { path: "/dev/null" } } } },
          exec: { name: "slurm" },
        },
      },
    };
    let ids: JobId[] = [];
    const submit = () => m.submitMany(Array.from({ length: n }, () => ({ jobspec }))).then((o) => void (ids = o.map((x) => (x as { id: JobId }).id)));
    const allInactive = () => ids.length === n && ids.every((id) => m.job(id).state === "INACTIVE");
    const figures = await measure(n, cluster, submit, allInactive);
    const failed = ids.filter((id) => m.job(id).result !== "COMPLETED").length;
    if (failed > 0) throw new Error(`${failed} jobs did not complete`);
    await m.close();
    return { ...figures, squeueCalls: squeueCalls() };
  } finally {
    cluster.stop();
    rmSync(statedir, { recursive: true, force: true });
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

const round = (x: number, places = 1) => Math.round(x * 10 ** places) / 10 ** places;

/** One side's summary over its runs (medians). */
function summary(n: number, runs: RunFigures[]) {
  return {
    submit_per_s: round(median(runs.map((r) => n / r.submitS))),
    end_to_end_per_s: round(median(runs.map((r) => n / r.endS))),
    client_cpu_ms_per_job: round(median(runs.map((r) => r.clientCpuMs / n)), 2),
    own_cpu_ms_per_job: round(median(runs.map((r) => r.ownCpuMs / n)), 2),
    ctld_cpu_ms_per_job: round(median(runs.map((r) => r.ctldCpuMs / n)), 2),
    runs_submit_per_s: runs.map((r) => round(n / r.submitS)),
  };
}

/** Entry point (bench/run.mjs). */
export async function main(args: string[]): Promise<void> {
  const n = Number(arg(args, "jobs", "1000"));
  const concurrency = Number(arg(args, "concurrency", "4"));
  const poll = arg(args, "poll", "0.5s");
  const cpus = Number(arg(args, "cpus", "64"));
  const runs = Number(arg(args, "runs", "1"));
  console.error(`slurm bench: ${n} jobs, ${concurrency} sbatch at once, jobtap polls every ${poll}, ${runs} run(s) each`);
  const alone: RunFigures[] = [];
  const jt: (RunFigures & { squeueCalls: number })[] = [];
  const load1: number[] = [];
  for (let i = 0; i < runs; i++) {
    load1.push(round(loadavg()[0]!, 2));
    const a = await sbatchAlone(n, concurrency, cpus);
    alone.push(a);
    console.error(`sbatch alone: submitted in ${a.submitS.toFixed(2)} s, all ended after ${a.endS.toFixed(2)} s, client CPU ${(a.clientCpuMs / n).toFixed(2)} ms/job (own ${(a.ownCpuMs / n).toFixed(2)})`);
    const j = await throughJobtap(n, concurrency, poll, cpus);
    jt.push(j);
    console.error(
      `through jobtap: submitted in ${j.submitS.toFixed(2)} s, all INACTIVE after ${j.endS.toFixed(2)} s, client CPU ${(j.clientCpuMs / n).toFixed(2)} ms/job (own ${(j.ownCpuMs / n).toFixed(2)}), ${j.squeueCalls} squeue calls`,
    );
  }
  const a = summary(n, alone);
  const j = summary(n, jt);
  console.log(
    JSON.stringify({
      jobs: n,
      concurrency,
      poll,
      cluster_cpus: cpus,
      runs,
      load_average: loadavg().map((x) => round(x, 2)),
      sbatch_alone: a,
      jobtap: { ...j, squeue_calls: median(jt.map((r) => r.squeueCalls)) },
      runs_submit_ratio: jt.map((r, i) => round(alone[i]!.submitS / r.submitS, 3)),
      runs_load1: load1,
      overhead: { submit: round(1 - j.submit_per_s / a.submit_per_s, 3), end_to_end: round(1 - j.end_to_end_per_s / a.end_to_end_per_s, 3) },
    }),
  );
}

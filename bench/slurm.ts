/**
 * `npm run bench -- slurm [--jobs N (1000)] [--concurrency C (4)] [--poll P (0.5s)] [--cpus S (64)]`
 *
 * jobtap's overhead on top of Slurm: N jobs (`true`) submitted through jobtap's slurm
 * executor against the same N submitted with sbatch alone (the same batch script, C sbatch
 * processes at once in both), each on a fresh single-node cluster started by
 * scripts/slurm-cluster.sh with S job slots (needs slurm-wlm and munge; slurmctld starts jobs
 * once a second, so the real two cores would make both sides wait on that alone). One run
 * each; both sides are watched the same way (one squeue every 100 ms). Measured:
 *   submit_per_s      jobs handed to slurmctld per second (first submit → last Slurm id)
 *   end_to_end_per_s  jobs per second from the first submit until the last one is done
 *                     (squeue shows all ended; for jobtap also all INACTIVE)
 *   overhead          1 − jobtap rate / sbatch rate (goal: ≤ 0.10)
 *   squeue_calls      squeue processes jobtap ran (one per poll, never one per job)
 * Last stdout line: one JSON object with all of it.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { JobId } from "../src/manager/ids.js";
import { createJobManager } from "../src/manager/manager.js";
import type { Jobspec } from "../src/manager/port.js";
import { jobtapPlugins } from "../src/plugins/index.js";
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

/**
 * Watches the cluster the same way for both sides: one squeue every 100 ms, noting when
 * slurmctld has all N jobs (submitted) and when none is left unfinished.
 */
async function watchSlurm(n: number, conf: string, t0: number, done: () => boolean): Promise<{ submitS: number; endS: number }> {
  const env = { ...process.env, SLURM_CONF: conf };
  let submitS = 0;
  for (;;) {
    const lines = (await run("squeue", ["--noheader", "--states=all", "--Format=State"], env)).trim().split("\n").filter((l) => l.trim() !== "");
    const now = (performance.now() - t0) / 1000;
    if (submitS === 0 && lines.length >= n) submitS = now;
    if (submitS > 0 && lines.every((l) => ENDED.has(l.trim())) && done()) return { submitS, endS: now };
    await new Promise((r) => setTimeout(r, 100));
  }
}

const ENDED = new Set(["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "OUT_OF_MEMORY", "DEADLINE"]);

/** sbatch alone: N submissions, C at a time. */
async function sbatchAlone(n: number, concurrency: number, cpus: number): Promise<{ submitS: number; endS: number }> {
  const cluster = startCluster(cpus);
  try {
    const env = { ...process.env, SLURM_CONF: cluster.conf };
    const args = ["--parsable", "--ntasks=1", "--cpus-per-task=1", "--output=/dev/null", "--export=ALL"];
    const t0 = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < n) {
        next++;
        await run("sbatch", args, env, SCRIPT_TEXT);
      }
    };
    const submitted = Promise.all(Array.from({ length: concurrency }, worker));
    const [times] = await Promise.all([watchSlurm(n + 1, cluster.conf, t0, () => true), submitted]);
    return times;
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
async function throughJobtap(n: number, concurrency: number, poll: string, cpus: number): Promise<{ submitS: number; endS: number; squeueCalls: number }> {
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
    const t0 = performance.now();
    let ids: JobId[] = [];
    const submitted = m.submitMany(Array.from({ length: n }, () => ({ jobspec }))).then((o) => (ids = o.map((x) => (x as { id: JobId }).id)));
    const allInactive = () => ids.length === n && ids.every((id) => m.job(id).state === "INACTIVE");
    const [{ submitS, endS }] = await Promise.all([watchSlurm(n + 1, cluster.conf, t0, allInactive), submitted]);
    const failed = ids.filter((id) => m.job(id).result !== "COMPLETED").length;
    if (failed > 0) throw new Error(`${failed} jobs did not complete`);
    await m.close();
    return { submitS, endS, squeueCalls: squeueCalls() };
  } finally {
    cluster.stop();
    rmSync(statedir, { recursive: true, force: true });
  }
}

/** Entry point (bench/run.mjs). */
export async function main(args: string[]): Promise<void> {
  const n = Number(arg(args, "jobs", "1000"));
  const concurrency = Number(arg(args, "concurrency", "4"));
  const poll = arg(args, "poll", "0.5s");
  const cpus = Number(arg(args, "cpus", "64"));
  console.error(`slurm bench: ${n} jobs, ${concurrency} sbatch at once, jobtap polls every ${poll}`);
  const alone = await sbatchAlone(n, concurrency, cpus);
  console.error(`sbatch alone: submitted in ${alone.submitS.toFixed(2)} s, all ended after ${alone.endS.toFixed(2)} s`);
  const jt = await throughJobtap(n, concurrency, poll, cpus);
  console.error(`through jobtap: submitted in ${jt.submitS.toFixed(2)} s, all INACTIVE after ${jt.endS.toFixed(2)} s, ${jt.squeueCalls} squeue calls`);
  const rate = (s: number) => Math.round((n / s) * 10) / 10;
  const overhead = (a: number, b: number) => Math.round((1 - rate(b) / rate(a)) * 1000) / 1000;
  console.log(
    JSON.stringify({
      jobs: n,
      concurrency,
      poll,
      cluster_cpus: cpus,
      sbatch_alone: { submit_per_s: rate(alone.submitS), end_to_end_per_s: rate(alone.endS) },
      jobtap: { submit_per_s: rate(jt.submitS), end_to_end_per_s: rate(jt.endS), squeue_calls: jt.squeueCalls },
      overhead: { submit: overhead(alone.submitS, jt.submitS), end_to_end: overhead(alone.endS, jt.endS) },
    }),
  );
}

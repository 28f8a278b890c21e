/**
 * A real single-node Slurm cluster for tests, started by scripts/slurm-cluster.sh in a temp
 * dir. In CI (CI=true, or JOBTAP_REQUIRE_SLURM=1 as .ci/run sets) the tests must run: a
 * missing Slurm is a failure there. Elsewhere, without the packages, the tests skip with one
 * line saying how to install them.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { waitFor } from "../e2e/harness.js";

export const CLUSTER_SCRIPT = fileURLToPath(new URL("../../scripts/slurm-cluster.sh", import.meta.url));
const SBIN_PATH = `${process.env.PATH ?? ""}:/usr/sbin:/sbin`;
const NEEDED = ["sbatch", "squeue", "scancel", "scontrol", "sinfo", "slurmctld", "slurmd", "munged"];

function missingBinaries(): string[] {
  return NEEDED.filter((b) => spawnSync("sh", ["-c", `command -v ${b}`], { env: { ...process.env, PATH: SBIN_PATH } }).status !== 0);
}

const required = process.env.CI === "true" || process.env.JOBTAP_REQUIRE_SLURM === "1";
const missing = missingBinaries();

/** True when this file's Slurm tests must be skipped (never in CI). */
export const skipSlurm = missing.length > 0 && !required;
if (skipSlurm) {
  console.warn(`Slurm tests skipped (no ${missing.join(", ")}): apt-get install -y slurm-wlm munge`);
}

/** A running cluster; `env` is what Slurm's commands need to reach it. */
export class TestCluster {
  readonly dir = mkdtempSync(join(tmpdir(), "jobtap-slurm-"));
  readonly conf = join(this.dir, "slurm.conf");
  readonly env: NodeJS.ProcessEnv = { ...process.env, PATH: SBIN_PATH, SLURM_CONF: this.conf };

  /**
   * `cpus`: the node offers that many job slots whatever this machine has (the script's
   * SLURM_CLUSTER_CPUS), so a test of many tiny jobs is not paced by two cores.
   */
  constructor(opts: { cpus?: number } = {}) {
    if (opts.cpus !== undefined) this.env.SLURM_CLUSTER_CPUS = String(opts.cpus);
    else delete this.env.SLURM_CLUSTER_CPUS;
  }

  /** Starts the daemons; throws with the script's message if they do not come up. */
  start(): this {
    if (missing.length > 0) throw new Error(`Slurm is required here but ${missing.join(", ")} not found: apt-get install -y slurm-wlm munge`);
    this.script("start");
    return this;
  }

  /** Runs a Slurm command against this cluster; throws on a non-zero exit. */
  run(cmd: string, args: string[], extraEnv: Record<string, string> = {}): string {
    const r = spawnSync(cmd, args, { env: { ...this.env, ...extraEnv }, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr || r.error?.message}`);
    return r.stdout;
  }

  /** The cluster's one node (sinfo lists it once per partition). */
  nodeName(): string {
    return this.run("sinfo", ["-h", "-N", "-o", "%N"]).trim().split("\n")[0]!;
  }

  /** Brings a node a test set down back, and waits until it is idle. */
  async resumeNode(node: string): Promise<void> {
    try {
      this.run("scontrol", ["update", `nodename=${node}`, "state=resume"]);
    } catch {
      // already back (ReturnToService)
    }
    const idle = () => this.run("sinfo", ["-h", "-N", "-o", "%t"]).trim().split("\n").every((s) => s === "idle");
    await waitFor(idle, 30_000, "the node to be idle again");
  }

  /**
   * Starts slurmctld again after a test stopped it: it recovers its jobs from its state, or
   * forgets them all with `clearState` (slurmctld -c).
   */
  restartController(clearState = false): void {
    const r = spawnSync("slurmctld", ["-f", this.conf, ...(clearState ? ["-c"] : [])], { env: { ...this.env, JOBTAP_SLURM_DIR: this.dir }, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`slurmctld: ${r.stderr}`);
  }

  /** The live (non-zombie) processes of this cluster, daemons and jobs, as slurm-cluster.sh finds them. */
  processes(): number[] {
    const marker = `JOBTAP_SLURM_DIR=${this.dir}`;
    const conf = `SLURM_CONF=${this.conf}`;
    const pids: number[] = [];
    for (const name of readdirSync("/proc")) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const env = readFileSync(`/proc/${name}/environ`, "latin1").split("\0");
        if (!env.includes(marker) && !(env.includes(conf) && env.some((e) => e.startsWith("SLURM_JOB_ID=")))) continue;
        if (readFileSync(`/proc/${name}/stat`, "latin1").split(" ")[2] !== "Z") pids.push(Number(name));
      } catch {
        // the process ended while we looked
      }
    }
    return pids;
  }

  /** Stops the daemons and removes the directory. */
  stop(): void {
    this.script("stop");
    rmSync(this.dir, { recursive: true, force: true });
  }

  private script(cmd: "start" | "stop"): void {
    const r = spawnSync("bash", [CLUSTER_SCRIPT, cmd, this.dir], { env: this.env, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`slurm-cluster.sh ${cmd}: ${r.stderr.trim()}`);
  }
}

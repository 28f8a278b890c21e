/**
 * Slurm as the job's owner in a multi-user instance (docs/site.md): a daemon started as root
 * with `[daemon] user = "jtsslurm"` and `[exec.slurm]`, against the real local cluster
 * (started by root, so it takes jobs from every local user). A guest's (jts1, made by
 * useradd) Slurm job is sbatch'ed as jts1 (`squeue -o %u` shows jts1) and its cancel is
 * jts1's scancel (slurmctld logs the kill request with jts1's uid). Skipped unless root.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, requireBuild, waitFor } from "../e2e/harness.js";
import { cliAs, makeUser, type SiteUser } from "../e2e/site-users.js";
import { skipSlurm, TestCluster } from "./cluster.js";

const root = process.getuid?.() === 0;
const svc = root ? makeUser("jtsslurm") : undefined;
const guest = root ? makeUser("jts1") : undefined;

describe.skipIf(skipSlurm || !svc || !guest)("a multi-user instance's Slurm jobs run as their owner", { timeout: 120_000 }, () => {
  const a = guest as SiteUser;
  let cluster: TestCluster;
  let top: string;
  let socket: string;
  let daemon: ChildProcess | undefined;
  let log = "";
  let work: string;
  const as = (u: SiteUser, args: string[]) => cliAs(u, socket, work, args);

  beforeAll(async () => {
    requireBuild();
    cluster = new TestCluster().start();
    top = mkdtempSync(join(tmpdir(), "jobtap-jtsslurm-"));
    chmodSync(top, 0o755);
    socket = join(top, "run", "jobtap.sock");
    work = join(top, "work");
    expect(spawnSync("install", ["-d", "-o", String(a.uid), "-g", String(a.gid), work]).status).toBe(0);
    const config = join(top, "jobtap.toml");
    writeFileSync(
      config,
      `[daemon]\nuser = "jtsslurm"\nguests = true\nsocket = ${JSON.stringify(socket)}\n\n[exec.slurm]\nslurm-conf = "${cluster.conf}"\npoll-period = "0.1s"\nmax-poll-period = "1s"\n`,
    );
    daemon = spawn(process.execPath, [BIN, "daemon", "--statedir", join(top, "state"), "--config", config], {
      env: { PATH: cluster.env.PATH ?? "/usr/bin:/bin", SLURM_CONF: cluster.conf },
      stdio: ["ignore", "ignore", "pipe"],
    });
    daemon.stderr!.on("data", (d) => (log += d.toString()));
    let exited = false;
    daemon.once("exit", () => (exited = true));
    await waitFor(() => exited || (existsSync(socket) && as(a, ["jobs"]).status === 0), 30_000, "daemon to answer");
    if (exited) throw new Error(`daemon exited at start:\n${log}`);
  }, 120_000);

  afterAll(async () => {
    if (process.env.JTS_LOG) console.log(log);
    const d = daemon;
    if (d && d.exitCode === null && d.signalCode === null) {
      const closed = new Promise((r) => d.once("close", r));
      d.kill("SIGTERM");
      await closed;
    }
    cluster?.stop();
    if (top) rmSync(top, { recursive: true, force: true });
  }, 90_000);

  it("sbatch runs as the guest (squeue -o %u), and so does the scancel of its cancel", async () => {
    const r = as(a, ["submit", "--exec", "slurm", "sleep", "300"]);
    expect(r.stderr).toBe("");
    const id = r.stdout.trim();
    const users = () => cluster.run("squeue", ["-h", "-t", "all", "-o", "%u %i %k %T"]).trim().split("\n").filter((l) => l.includes(" jobtap:"));
    await waitFor(() => users().length === 1, 60_000, "the job on Slurm");
    const [user, slurmId] = users()[0]!.split(" ");
    expect(user).toBe(a.name);
    expect(as(a, ["cancel", id]).status).toBe(0);
    await waitFor(() => as(a, ["eventlog", id]).stdout.includes(" clean"), 60_000, "the job to end");
    await waitFor(() => users().every((l) => !/ RUNNING| PENDING/.test(l)), 30_000, "Slurm to end it");
    const ctld = readFileSync(join(cluster.dir, "log", "slurmctld.log"), "utf8");
    expect(ctld).toMatch(new RegExp(`(REQUEST_KILL_JOB|kill_job).*JobId=${slurmId}\\b.*uid ${a.uid}\\b|uid ${a.uid}\\b.*JobId=${slurmId}\\b`));
  });
});

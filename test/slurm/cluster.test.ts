/** scripts/slurm-cluster.sh: a real cluster starts, runs a batch job, and stops cleanly. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipSlurm, TestCluster } from "./cluster.js";
import { waitFor } from "../e2e/harness.js";

describe.skipIf(skipSlurm)("slurm-cluster.sh", { timeout: 60_000 }, () => {
  let cluster: TestCluster | undefined;
  beforeAll(() => {
    cluster = new TestCluster().start();
  }, 60_000);
  afterAll(() => {
    // The last test stops the cluster itself; stop it here only if that test did not run.
    if (cluster && existsSync(cluster.dir)) cluster.stop();
  });

  it("runs a batch job with its output and exit code", async () => {
    const c = cluster!;
    const out = join(c.dir, "job.out");
    const id = c.run("sbatch", ["--parsable", `--output=${out}`, "--wrap", "echo hello from slurm; exit 3"]).trim();
    expect(id).toMatch(/^\d+$/);
    let line = "";
    await waitFor(() => {
      line = c.run("squeue", ["-h", "-t", "all", "-j", id, "-o", "%T"]).trim();
      return line === "FAILED" || line === "COMPLETED";
    }, 30_000, "the job to end");
    expect(line).toBe("FAILED");
    expect(c.run("scontrol", ["-o", "show", "job", id])).toMatch(/ ExitCode=3:0 /);
    expect(readFileSync(out, "utf8")).toBe("hello from slurm\n");
  });

  // Last: it stops the file's cluster (one cluster start per file, not two).
  it("stops leaving no process behind, even with a job running", async () => {
    const c = cluster!;
    try {
      // The job's own processes carry the cluster's marker too (sbatch exports its
      // environment), so they are counted.
      const mark = { JOBTAP_SLURM_DIR: c.dir };
      const id = c.run("sbatch", ["--parsable", "--output=/dev/null", "--wrap", "sleep 300"], mark).trim();
      await waitFor(() => c.processes().length >= 6, 30_000, "the job's processes");
    } finally {
      c.stop();
    }
    expect(c.processes()).toEqual([]);
  });
});

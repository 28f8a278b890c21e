/**
 * Running Slurm's client commands (sbatch, squeue, scancel, sacct): argv without a shell,
 * the configured binaries' directory and SLURM_CONF, a time limit, output captured. A
 * command that cannot run or times out is a result with `status: null`, never a throw.
 */
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** How to reach the cluster: where the binaries are and which slurm.conf to use. */
export interface SlurmSite {
  /** Directory of sbatch, squeue, ... (undefined: found on PATH). */
  bindir?: string;
  /** SLURM_CONF for every command (undefined: the environment's, else Slurm's default). */
  slurmConf?: string;
  /** Longest a command may run before it is killed (ms). */
  commandTimeoutMs: number;
}

/** The outcome of one command. `status` null: it could not run, or was killed. */
export interface CommandResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one Slurm command; `env` replaces the daemon's environment when given. */
export function runSlurm(
  site: SlurmSite,
  cmd: string,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<CommandResult> {
  const env = commandEnv(site, opts.env);
  const file = commandPath(site, cmd);
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let child;
    try {
      child = spawn(file, args, { env, stdio: ["pipe", "pipe", "pipe"], timeout: site.commandTimeoutMs });
    } catch (e) {
      resolve({ status: null, stdout, stderr: `cannot run ${file}: ${(e as Error).message}` });
      return;
    }
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdin.on("error", () => undefined);
    child.stdin.end(opts.input ?? "");
    child.on("error", (e) => {
      stderr += `cannot run ${file}: ${e.message}`;
    });
    child.on("close", (code, signal) => {
      if (signal !== null && !stderr) stderr = `${cmd} killed by ${signal} (time limit ${site.commandTimeoutMs} ms)`;
      resolve({ status: signal !== null ? null : code, stdout, stderr: stderr.trim() });
    });
  });
}

/** Slurm's words for "the controller did not answer": try again later, nothing was done. */
export function controllerUnreachable(stderr: string): boolean {
  return /unable to contact slurm controller|connect(ion)? (failure|refused)|socket timed out|timed out|slurm_load_jobs error: (zero bytes|unexpected message)|temporarily unavailable|slurmctld.*not responding/i.test(
    stderr,
  );
}

/**
 * The command's path: in `bindir`, else found on the daemon's PATH (not the job's: a job's
 * environment need not have one). Unfound: the bare name, so the spawn error names it.
 */
export function commandPath(site: SlurmSite, cmd: string): string {
  if (site.bindir !== undefined) return join(site.bindir, cmd);
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, cmd), constants.X_OK);
      return join(dir, cmd);
    } catch {
      // not here
    }
  }
  return cmd;
}

/** A command's environment: `env` (default the daemon's) with the site's SLURM_CONF. */
export function commandEnv(site: SlurmSite, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out = { ...env };
  // The site's slurm.conf, else the daemon's: a job's own environment may lack it.
  const conf = site.slurmConf ?? process.env.SLURM_CONF;
  if (conf !== undefined) out.SLURM_CONF = conf;
  return out;
}

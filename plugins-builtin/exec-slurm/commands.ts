/**
 * How Slurm's client commands (sbatch, squeue, scancel, sacct) are found and run: the
 * configured binaries' directory and SLURM_CONF, and what their messages mean. They run in
 * helper processes (spawner.ts): argv without a shell, a time limit, output captured; a
 * command that cannot run or times out is a result with `status: null`, never a throw.
 */
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

/**
 * How the slurm executor runs Slurm's commands: sbatch in a pool of its own (at most
 * `submitConcurrency` at once), squeue, scancel and sacct in a helper of their own. The
 * daemon itself never forks (a large process forks slowly, and its event loop waits
 * meanwhile), and a burst of submissions never holds up a poll or a cancel. In a
 * multi-user instance sbatch and scancel of a job run as its owner (through the launcher,
 * so Slurm's accounts and limits apply to that user); everything else runs as the daemon.
 */
import type { HookUsers, JobId } from "jobtap/plugin";
import { commandEnv, commandPath, controllerUnreachable, type CommandResult, type SlurmSite } from "./commands.js";
import { SpawnPool } from "./spawner.js";

/** Runs sbatch, squeue, scancel and sacct for one executor; `run*` never reject. */
export class SlurmCommands {
  private readonly submits: SpawnPool;
  private readonly others: SpawnPool;

  constructor(
    private readonly site: () => SlurmSite,
    submitConcurrency: number,
    /** `p.hookUsers` (multi-user instance): sbatch and scancel run as the job's owner. */
    private readonly users?: HookUsers,
  ) {
    this.submits = new SpawnPool(submitConcurrency, undefined, users);
    this.others = new SpawnPool(1, undefined, users);
  }

  /** A new limit of sbatch calls at once. */
  resize(submitConcurrency: number): void {
    this.submits.resize(submitConcurrency);
  }

  close(): void {
    this.submits.close();
    this.others.close();
  }

  /** sbatch of one job (as its owner in a multi-user instance), `script` on its stdin. */
  sbatch(id: JobId, args: readonly string[], env: NodeJS.ProcessEnv, script: string): Promise<CommandResult> {
    return this.owned(this.submits, id, "sbatch", args, commandEnv(this.site(), env), script);
  }

  /**
   * scancel of `ids`: one command as the daemon, or one per job as its owner (multi-user;
   * `owners` maps a Slurm id to its jobtap job).
   */
  scancel(ids: string[], owners: () => Map<string, JobId>): Promise<CommandResult> {
    if (this.users === undefined) return this.run("scancel", ids);
    const byId = owners();
    const one = (sid: string) => {
      const id = byId.get(sid);
      return id === undefined ? this.run("scancel", [sid]) : this.owned(this.others, id, "scancel", [sid], commandEnv(this.site()), "");
    };
    // The worst outcome stands for the batch: a failure keeps every id for the next try.
    return Promise.all(ids.map(one)).then((rs) => rs.find((r) => r.status === null || controllerUnreachable(r.stderr)) ?? rs[0] ?? { status: 0, stdout: "", stderr: "" });
  }

  /** Runs squeue, scancel or sacct (with the daemon's environment) in the commands' helper. */
  run(cmd: string, args: string[]): Promise<CommandResult> {
    const site = this.site();
    return this.others.run({ file: commandPath(site, cmd), args, env: commandEnv(site), input: "", timeoutMs: site.commandTimeoutMs });
  }

  private owned(pool: SpawnPool, id: JobId, cmd: string, args: readonly string[], env: NodeJS.ProcessEnv, input: string): Promise<CommandResult> {
    const site = this.site();
    const runAs = this.users === undefined ? {} : { runAs: { job: id } };
    return pool.run({ file: commandPath(site, cmd), args, env, input, timeoutMs: site.commandTimeoutMs, ...runAs });
  }
}

/** A command's failure in one line, for logs and exception notes. */
export function oneLine(r: CommandResult): string {
  const text = (r.stderr || r.stdout).trim().replace(/\s*\n\s*/g, "; ");
  return text === "" ? `exit status ${r.status ?? "none"}` : text;
}

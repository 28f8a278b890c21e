/**
 * sbatch started from a small helper process instead of the daemon itself. Starting a
 * process costs in proportion to the parent's memory (fork copies its page tables), and a
 * daemon holding thousands of jobs is large: from a ~40 MB helper each sbatch starts about
 * twice as fast, which is most of jobtap's cost per Slurm job (bench/slurm.ts).
 *
 * The helper is the hook runner's (`spawnHelpers`, src/hooks/spawn-helper.ts): argv
 * without a shell, the command's own process group killed at the time limit, output
 * captured. A helper that dies answers its commands with `status: null` (the caller then
 * treats the submission as uncertain and looks the job up before any retry) and is
 * replaced on the next command.
 */
import { HookRunner, type HookResult } from "jobtap/plugin";
import type { CommandResult } from "./commands.js";

/** One command for a helper. */
export interface SpawnRequest {
  file: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  input: string;
  timeoutMs: number;
}

/** Commands run through one spawn helper process; `run` never rejects. */
export class SpawnPool {
  // The executor limits how many run at once (submit-concurrency); time limits are real
  // time, as sbatch's are whatever the manager's clock does.
  private readonly runner = new HookRunner({ spawnHelpers: 1, maxInFlight: Infinity, pathCheckCacheMs: 0, defaults: { logStderr: false } });

  constructor(_size: number) {}

  /** Kept for the executor's reconfigure: the executor itself limits concurrency. */
  resize(_size: number): void {}

  /** Runs one command in the helper. Never rejects: a lost helper is `status: null`. */
  async run(req: SpawnRequest): Promise<CommandResult> {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.env)) if (v !== undefined) env[k] = v;
    const r = await this.runner.run({ path: req.file, args: req.args, env, stdin: req.input, timeLimitMs: req.timeoutMs, checkPath: false });
    return commandResult(req, r);
  }

  /** Ends the helper (commands still running answer `status: null`). */
  close(): void {
    void this.runner.close();
  }
}

/** A hook result in the shape of a Slurm command's (status null: not run, killed or lost). */
function commandResult(req: SpawnRequest, r: HookResult): CommandResult {
  switch (r.kind) {
    case "exited":
      return { status: r.exitCode, stdout: r.stdout, stderr: r.stderr.trim() };
    case "signaled":
      return { status: null, stdout: r.stdout, stderr: r.stderr.trim() || `${req.file} killed by ${r.signal} (time limit ${req.timeoutMs} ms)` };
    case "cancelled":
      return { status: null, stdout: "", stderr: "executor closed" };
    default:
      return { status: null, stdout: "", stderr: `cannot run ${req.file}: ${r.reason}` };
  }
}

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
 * replaced on the next command. Closing the pool kills the commands still running
 * (SIGTERM to their group); they answer `status: null`.
 */
import { HookRunner, type HookResult, type HookRunAs, type HookUsers } from "jobtap/plugin";
import type { CommandResult } from "./commands.js";

/** One command for a helper. */
export interface SpawnRequest {
  file: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  input: string;
  timeoutMs: number;
  /** Run as this job's user (multi-user instance, through the launcher: docs/exec-slurm.md). */
  runAs?: HookRunAs;
}

/**
 * Output kept of one command: squeue's answer for every tracked job (tens of bytes a job)
 * must arrive whole. Output past it makes the command a failure (status null), never a
 * partial answer in which tracked jobs would seem to have vanished.
 */
export const OUTPUT_CAP = 256 * 1024 ** 2;

/** Commands run through one spawn helper process, at most `size` at once; `run` never rejects. */
export class SpawnPool {
  // Time limits are real time, whatever the manager's clock does.
  private readonly runner: HookRunner;
  private readonly waiting: (() => void)[] = [];
  private active = 0;
  private closed = false;

  /** `outputCap`: stdout bytes kept of a command (OUTPUT_CAP; smaller in tests). */
  constructor(
    private size: number,
    private readonly outputCap = OUTPUT_CAP,
    /** `p.hookUsers`: commands with `runAs` run as that job's user. */
    users?: HookUsers,
  ) {
    this.runner = new HookRunner({ plugin: "exec-slurm", spawnHelpers: 1, maxInFlight: Infinity, pathCheckCacheMs: 0, defaults: { logStderr: false }, ...(users ? { users } : {}) });
  }

  /** A new limit of commands at once (from the next command on). */
  resize(size: number): void {
    this.size = size;
    this.wake();
  }

  /** Runs one command in the helper. Never rejects: a lost helper is `status: null`. */
  async run(req: SpawnRequest): Promise<CommandResult> {
    if (this.closed) return { status: null, stdout: "", stderr: "executor closed" };
    // A place is taken here, or handed over by wake() (so no newcomer can take it first).
    if (this.active < this.size) this.active++;
    else await new Promise<void>((r) => this.waiting.push(r));
    if (this.closed) {
      this.active--;
      return { status: null, stdout: "", stderr: "executor closed" };
    }
    try {
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.env)) if (v !== undefined) env[k] = v;
      const r = await this.runner.run({
        path: req.file,
        args: req.args,
        env,
        stdin: req.input,
        timeLimitMs: req.timeoutMs,
        checkPath: false,
        stdoutCap: this.outputCap,
        ...(req.runAs === undefined ? {} : { runAs: req.runAs }),
      });
      return commandResult(req, r, this.outputCap);
    } finally {
      this.active--;
      this.wake();
    }
  }

  /** Ends the helper (commands still running answer `status: null`). */
  close(): void {
    this.closed = true;
    this.wake();
    void this.runner.close();
  }

  /** Hands each free place to the oldest waiting command (every waiter once closed). */
  private wake(): void {
    const free = this.closed ? this.waiting.length : this.size - this.active;
    for (const go of this.waiting.splice(0, Math.max(0, free))) {
      this.active++;
      go();
    }
  }
}

/** A hook result in the shape of a Slurm command's (status null: not run, killed or lost). */
function commandResult(req: SpawnRequest, r: HookResult, cap: number): CommandResult {
  if (r.kind === "cancelled" || ((r.kind === "exited" || r.kind === "signaled") && r.aborted)) return { status: null, stdout: "", stderr: "executor closed" };
  switch (r.kind) {
    case "exited":
      if (r.stdoutDropped > 0) return { status: null, stdout: "", stderr: `${req.file}: output over ${cap} bytes, not read` };
      return { status: r.exitCode, stdout: r.stdout, stderr: r.stderr.trim() };
    case "signaled":
      return { status: null, stdout: r.stdout, stderr: r.stderr.trim() || `${req.file} killed by ${r.signal} (time limit ${req.timeoutMs} ms)` };
    default:
      // Refused as the job's user (the launcher's EPERM): a definite no, not an unknown outcome.
      return { status: r.kind === "spawn-error" && r.code === "EPERM" ? 126 : null, stdout: "", stderr: `cannot run ${req.file}: ${r.reason}` };
  }
}

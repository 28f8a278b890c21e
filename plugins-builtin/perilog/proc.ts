/**
 * One prolog or epilog process, run by the plugin's hook runner (src/hooks): without a
 * shell, in its own process group, output lines handed to a logger, a time limit and a kill
 * timeout on the manager's clock. Cancel sends SIGTERM to the group and, after the kill
 * timeout, SIGKILL. In a multi-user instance it runs as root through the privileged
 * launcher (`runAs: "root"`), as Flux's system instance runs its prolog through the IMP.
 */
import type { Clock, HookResult, HookRunner } from "jobtap/plugin";

export type ProcState = "running" | "canceled" | "timeout";

/** How the process ended. */
export interface ProcExit {
  state: ProcState;
  /** Exit code, when it exited. */
  code: number | null;
  /** Signal name, when it was killed. */
  signal: NodeJS.Signals | null;
  /** SIGKILL had to be sent after the kill timeout. */
  killed: boolean;
  /** Could not be started at all. */
  spawnError?: string;
}

export interface ProcOptions {
  name: "prolog" | "epilog";
  command: string[];
  env: Record<string, string>;
  clock: Clock;
  runner: HookRunner;
  timeoutMs: number;
  killTimeoutMs: number;
  onLine: (stream: "stdout" | "stderr", line: string) => void;
  onExit: (exit: ProcExit) => void;
}

export class PerilogProc {
  state: ProcState = "running";
  readonly name: "prolog" | "epilog";
  readonly startedAt: number;
  private readonly abort = new AbortController();

  constructor(private readonly o: ProcOptions) {
    this.name = o.name;
    this.startedAt = o.clock.now();
    let buf = "";
    void o.runner
      .run({
        path: o.command[0]!,
        args: o.command.slice(1),
        name: o.name,
        hookType: o.name,
        env: { ...(process.env as Record<string, string>), ...o.env },
        // A command, as Flux configures it (PATH search allowed): no hook path check.
        checkPath: false,
        logStderr: false,
        timeLimitMs: o.timeoutMs > 0 ? o.timeoutMs : Infinity,
        killGraceMs: o.killTimeoutMs,
        signal: this.abort.signal,
        runAs: "root",
        onStdout: (text) => {
          const parts = (buf + text).split("\n");
          buf = parts.pop() ?? "";
          for (const l of parts) o.onLine("stdout", l);
        },
      })
      .then((r) => {
        if (buf.length > 0) o.onLine("stdout", buf);
        this.finish(r);
      });
  }

  /** Milliseconds left before the time limit, or undefined when there is none. */
  remainingMs(): number | undefined {
    if (this.o.timeoutMs <= 0) return undefined;
    return Math.max(0, this.startedAt + this.o.timeoutMs - this.o.clock.now());
  }

  /** SIGTERM now, SIGKILL after the kill timeout (the job was cancelled). */
  cancel(): void {
    if (this.state !== "running") return;
    this.state = "canceled";
    this.abort.abort();
  }

  private finish(r: HookResult): void {
    if (r.kind !== "exited" && r.kind !== "signaled") {
      this.o.onExit({ state: this.state, killed: false, code: null, signal: null, spawnError: (r as { reason: string }).reason });
      return;
    }
    for (const l of r.stderr.split("\n")) if (l !== "") this.o.onLine("stderr", l);
    if (r.timedOut) this.state = "timeout";
    const killed = r.signal === "SIGKILL" && (r.timedOut || r.aborted);
    this.o.onExit({ state: this.state, killed, code: r.exitCode, signal: r.signal });
  }
}
